//! The calls resolution makes: the registry's `resolver(node)`, ERC-165, ENSIP-10's
//! `resolve(bytes,bytes)`, the record getters of ENSIP-1/3/4/5/7/9 and ERC-165 interfaces,
//! and EIP-3668's `OffchainLookup` revert.

alloy::sol! {
    /// The registry's resolver lookup.
    interface IRegistryLookup {
        function resolver(bytes32 node) external view returns (address);
    }

    /// A resolver as resolution calls it.
    interface IResolverRecords {
        function supportsInterface(bytes4 interfaceID) external view returns (bool);
        function resolve(bytes name, bytes data) external view returns (bytes);
        function addr(bytes32 node) external view returns (address);
        function addr(bytes32 node, uint256 coinType) external view returns (bytes);
        function text(bytes32 node, string key) external view returns (string);
        function contenthash(bytes32 node) external view returns (bytes);
        function name(bytes32 node) external view returns (string);
        function pubkey(bytes32 node) external view returns (bytes32 x, bytes32 y);
        function ABI(bytes32 node, uint256 contentTypes) external view returns (uint256, bytes);
        function interfaceImplementer(bytes32 node, bytes4 interfaceID) external view returns (address);
    }

    /// EIP-3668: a contract asks the caller to fetch data off chain.
    error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData);
}

/// ENSIP-10's interface id (`resolve(bytes,bytes)`).
pub const EXTENDED_RESOLVER_INTERFACE: [u8; 4] = [0x90, 0x61, 0xb9, 0x23];
