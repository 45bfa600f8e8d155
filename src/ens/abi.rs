//! Solidity event signatures Ensemble consumes, as alloy `sol!` bindings.
//!
//! Overloaded events (the controllers' `NameRegistered` variants, the two `TextChanged` forms)
//! live in separate interfaces so that each gets its own Rust type and topic0.

#![allow(missing_docs)]

use alloy::sol;

sol! {
    /// ENS registry (`ENSRegistry`, `ENSRegistryWithFallback`, and the pre-2020 registry).
    interface Registry {
        event NewOwner(bytes32 indexed node, bytes32 indexed label, address owner);
        event Transfer(bytes32 indexed node, address owner);
        event NewResolver(bytes32 indexed node, address resolver);
        event NewTTL(bytes32 indexed node, uint64 ttl);
    }

    /// `.eth` base registrar (ERC-721 over labelhashes).
    interface BaseRegistrar {
        event NameRegistered(uint256 indexed id, address indexed owner, uint256 expires);
        event NameRenewed(uint256 indexed id, uint256 expires);
        event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    }

    /// The Basenames base registrar's registration that also sets a resolver and TTL.
    interface RecordRegistrar {
        event NameRegisteredWithRecord(uint256 indexed id, address indexed owner, uint256 expires, address resolver, uint64 ttl);
    }

    /// The 3DNS token's registration events (its registry events have the registry's
    /// signatures).
    interface ThreeDnsToken {
        event RegistrationCreated(bytes32 indexed node, bytes32 indexed tld, bytes fqdn, address registrant, uint32 controlBitmap, uint64 expiry);
        event RegistrationExtended(bytes32 indexed node, uint64 indexed duration, uint64 indexed newExpiry);
    }

    /// ENSIP-19 reverse registrars: mainnet's standalone default reverse registrar and the L2
    /// reverse registrars.
    interface ReverseRegistrar {
        event NameForAddrChanged(address indexed addr, string name);
    }

    /// The 2020 `ETHRegistrarController` (mainnet "Legacy").
    interface LegacyController {
        event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 cost, uint256 expires);
        event NameRenewed(string name, bytes32 indexed label, uint256 cost, uint256 expires);
    }

    /// The 2023 controller that registers through the NameWrapper ("Wrapped"); its renewal
    /// event has the legacy signature.
    interface WrappedController {
        event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires);
    }

    /// The 2025 controller ("Unwrapped") with referrers.
    interface UnwrappedController {
        event NameRegistered(string label, bytes32 indexed labelhash, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires, bytes32 referrer);
        event NameRenewed(string label, bytes32 indexed labelhash, uint256 cost, uint256 expires, bytes32 referrer);
    }

    /// Basenames-style controllers (no prices in the event).
    interface ShortController {
        event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 expires);
        event NameRenewed(string name, bytes32 indexed label, uint256 expires);
    }

    /// Lineanames' controller also registers for free: to the owner, and to holders of a
    /// Proof of Humanity.
    interface LineaController {
        event OwnerNameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 expires);
        event PohNameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 expires);
    }

    /// The NameWrapper (ERC-1155 over nodes).
    interface NameWrapper {
        event NameWrapped(bytes32 indexed node, bytes name, address owner, uint32 fuses, uint64 expiry);
        event NameUnwrapped(bytes32 indexed node, address owner);
        event FusesSet(bytes32 indexed node, uint32 fuses);
        event ExpiryExtended(bytes32 indexed node, uint64 expiry);
        event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);
        event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values);
    }

    /// Public resolver profiles (any address on the chain).
    interface Resolver {
        event AddrChanged(bytes32 indexed node, address a);
        event AddressChanged(bytes32 indexed node, uint256 coinType, bytes newAddress);
        event NameChanged(bytes32 indexed node, string name);
        event ContenthashChanged(bytes32 indexed node, bytes hash);
        event PubkeyChanged(bytes32 indexed node, bytes32 x, bytes32 y);
        event TextChanged(bytes32 indexed node, string indexed indexedKey, string key, string value);
        event VersionChanged(bytes32 indexed node, uint64 newVersion);
        function text(bytes32 node, string key) external view returns (string);
    }

    /// The value-less `TextChanged` of mainnet's older public resolvers.
    interface LegacyTextResolver {
        event TextChanged(bytes32 indexed node, string indexed indexedKey, string key);
    }
}
