// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

/// An ENSIP-10 resolver for tests that answers through EIP-3668 CCIP-Read: every
/// `resolve` reverts with `OffchainLookup` naming its gateways; the callback checks that the
/// gateway's response belongs to the request (the request's hash travels with it) and
/// returns the record. A name whose first label is `bounce` asks again from its callback,
/// forever.
contract OffchainResolver {
    error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData);

    string[] public urls;

    constructor(string[] memory gateways) {
        urls = gateways;
    }

    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x9061b923;
    }

    function resolve(bytes calldata name, bytes calldata data) external view returns (bytes memory) {
        bytes memory request = abi.encode(name, data);
        revert OffchainLookup(address(this), urls, request, this.resolveCallback.selector, request);
    }

    /// `response` is `abi.encode(bytes result, bytes32 requestHash)`.
    function resolveCallback(bytes calldata response, bytes calldata extraData) external view returns (bytes memory) {
        (bytes memory result, bytes32 requestHash) = abi.decode(response, (bytes, bytes32));
        require(requestHash == keccak256(extraData), "offchain: response for another request");
        (bytes memory name,) = abi.decode(extraData, (bytes, bytes));
        if (name.length > 7 && name[0] == 0x06 && name[1] == "b" && name[2] == "o" && name[3] == "u" && name[4] == "n" && name[5] == "c" && name[6] == "e") {
            revert OffchainLookup(address(this), urls, extraData, this.resolveCallback.selector, extraData);
        }
        return result;
    }
}
