// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

/// An ENSIP-10 extended resolver for tests: it answers for every name below the one it is
/// set on, computing each record from the name itself, so only a live call can know them.
/// A name whose first label is `revert` reverts; one whose first label is `loop` runs until
/// it is out of gas.
contract WildcardResolver {
    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x9061b923;
    }

    function resolve(bytes calldata name, bytes calldata data) external view returns (bytes memory) {
        bytes memory first = firstLabel(name);
        if (keccak256(first) == keccak256("revert")) {
            revert("wildcard: refused");
        }
        if (keccak256(first) == keccak256("loop")) {
            uint256 i;
            while (gasleft() > 0) {
                i++;
            }
        }
        return answer(name, data);
    }

    /// The record `data` asks for, of `name` (DNS wire format).
    function answer(bytes calldata name, bytes calldata data) public pure returns (bytes memory) {
        bytes4 selector = bytes4(data[:4]);
        address derived = address(uint160(uint256(keccak256(name))));
        if (selector == 0x3b3b57de) {
            return abi.encode(derived); // addr(bytes32)
        }
        if (selector == 0xf1cb7e06) {
            (, uint256 coinType) = abi.decode(data[4:], (bytes32, uint256));
            if (coinType == 60) {
                return abi.encode(abi.encodePacked(derived)); // addr(bytes32,uint256)
            }
            return abi.encode(bytes(""));
        }
        if (selector == 0x59d1d43c) {
            (, string memory key) = abi.decode(data[4:], (bytes32, string));
            return abi.encode(string.concat("wildcard:", key)); // text(bytes32,string)
        }
        if (selector == 0xbc1c58d1) {
            return abi.encode(abi.encodePacked(bytes2(0xe301), keccak256(name))); // contenthash
        }
        return abi.encode(bytes(""));
    }

    function firstLabel(bytes calldata name) internal pure returns (bytes memory) {
        if (name.length == 0) {
            return "";
        }
        uint256 len = uint8(name[0]);
        return name[1:1 + len];
    }
}
