//! Call interfaces of the devnet contracts (the functions the harness sends and reads).

#![allow(missing_docs)]

use alloy::sol;

sol! {
    interface IRegistry {
        function setSubnodeOwner(bytes32 node, bytes32 label, address owner) external returns (bytes32);
        function setSubnodeRecord(bytes32 node, bytes32 label, address owner, address resolver, uint64 ttl) external;
        function setOwner(bytes32 node, address owner) external;
        function setResolver(bytes32 node, address resolver) external;
        function setTTL(bytes32 node, uint64 ttl) external;
        function owner(bytes32 node) external view returns (address);
        function resolver(bytes32 node) external view returns (address);
        function recordExists(bytes32 node) external view returns (bool);
    }

    interface IBaseRegistrar {
        function addController(address controller) external;
        function register(uint256 id, address owner, uint256 duration) external returns (uint256);
        function ownerOf(uint256 tokenId) external view returns (address);
        function nameExpires(uint256 id) external view returns (uint256);
        function transferFrom(address from, address to, uint256 tokenId) external;
        function reclaim(uint256 id, address owner) external;
    }

    interface IController {
        function makeCommitmentWithConfig(string name, address owner, bytes32 secret, address resolver, address addr) external pure returns (bytes32);
        function commit(bytes32 commitment) external;
        function registerWithConfig(string name, address owner, uint256 duration, bytes32 secret, address resolver, address addr) external payable;
        function renew(string name, uint256 duration) external payable;
    }

    interface IResolver {
        function setAddr(bytes32 node, address a) external;
        function setAddr(bytes32 node, uint256 coinType, bytes a) external;
        function setText(bytes32 node, string key, string value) external;
        function setContenthash(bytes32 node, bytes hash) external;
        function addr(bytes32 node) external view returns (address);
        function addr(bytes32 node, uint256 coinType) external view returns (bytes);
        function text(bytes32 node, string key) external view returns (string);
        function contenthash(bytes32 node) external view returns (bytes);
        function name(bytes32 node) external view returns (string);
    }

    interface IReverseRegistrar {
        function setName(string name) external returns (bytes32);
    }
}
