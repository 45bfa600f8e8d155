//! Turning raw logs into [`EnsEvent`]s, keyed by contract role and topic0. Pure: the actor in
//! `chain/decoder.rs` adds I/O (legacy text values) and metrics around it.

use alloy::{
    primitives::{B256, LogData},
    sol_types::SolEvent,
};

use super::{
    abi::{
        BaseRegistrar, LegacyController, LegacyTextResolver, LineaController, NameWrapper,
        RecordRegistrar, Registry, Resolver, ReverseRegistrar, ShortController, ThreeDnsToken,
        UnwrappedController, WrappedController,
    },
    event::{EnsEvent, RegistrySource},
    role::ContractRole,
};

/// A log whose topic0 we consume but whose body does not decode.
#[derive(Debug, thiserror::Error)]
#[error("malformed {event} log: {source}")]
pub struct DecodeError {
    /// The event the topic0 announced.
    pub event: &'static str,
    /// What alloy said.
    #[source]
    pub source: alloy::sol_types::Error,
}

/// Every topic0 a resolver can emit that we consume; used to filter logs from any address.
pub fn resolver_topics() -> Vec<B256> {
    vec![
        Resolver::AddrChanged::SIGNATURE_HASH,
        Resolver::AddressChanged::SIGNATURE_HASH,
        Resolver::NameChanged::SIGNATURE_HASH,
        Resolver::ContenthashChanged::SIGNATURE_HASH,
        Resolver::PubkeyChanged::SIGNATURE_HASH,
        Resolver::TextChanged::SIGNATURE_HASH,
        Resolver::VersionChanged::SIGNATURE_HASH,
        LegacyTextResolver::TextChanged::SIGNATURE_HASH,
    ]
}

/// Whether this log is the value-less legacy `TextChanged`, whose value must be read from the
/// chain at the log's block.
pub fn is_legacy_text(data: &LogData) -> bool {
    data.topics().first() == Some(&LegacyTextResolver::TextChanged::SIGNATURE_HASH)
}

fn decode<E: SolEvent>(data: &LogData) -> Result<E, DecodeError> {
    E::decode_raw_log(data.topics().iter().copied(), &data.data)
        .map_err(|source| DecodeError { event: E::SIGNATURE, source })
}

/// Decodes a log of another event with `E`'s fields (same types, same indexed topics),
/// ignoring topic0.
fn decode_as<E: SolEvent>(data: &LogData) -> Result<E, DecodeError> {
    let mut topics: Vec<_> = data.topics().to_vec();
    if let Some(first) = topics.first_mut() {
        *first = E::SIGNATURE_HASH;
    }
    E::decode_raw_log(topics, &data.data)
        .map_err(|source| DecodeError { event: E::SIGNATURE, source })
}

/// Decodes one log. `role` is the configured role of the emitting address, `None` for any other
/// address (then only resolver events are consumed). `Ok(vec![])` means the log is not one we
/// consume (approvals, ownership changes, unrelated contracts).
pub fn decode_log(
    role: Option<ContractRole>,
    data: &LogData,
) -> Result<Vec<EnsEvent>, DecodeError> {
    let Some(&topic0) = data.topics().first() else {
        return Ok(vec![]);
    };
    let event = match role {
        Some(ContractRole::Registry) => registry(RegistrySource::Current, topic0, data)?,
        Some(ContractRole::RegistryOld) => registry(RegistrySource::Old, topic0, data)?,
        Some(ContractRole::BaseRegistrar) => base_registrar(topic0, data)?,
        Some(ContractRole::Controller) => controller(topic0, data)?,
        Some(ContractRole::NameWrapper) => return name_wrapper(topic0, data),
        Some(ContractRole::ReverseRegistrar) => reverse_registrar(topic0, data)?,
        Some(ContractRole::ThreeDnsToken) => three_dns(topic0, data)?,
        None => resolver(topic0, data)?,
    };
    Ok(event.into_iter().collect())
}

fn registry(
    source: RegistrySource,
    topic0: B256,
    data: &LogData,
) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(Some(match topic0 {
        Registry::NewOwner::SIGNATURE_HASH => {
            let e: Registry::NewOwner = decode(data)?;
            EnsEvent::NewOwner { source, parent: e.node, label: e.label, owner: e.owner }
        }
        Registry::Transfer::SIGNATURE_HASH => {
            let e: Registry::Transfer = decode(data)?;
            EnsEvent::RegistryTransfer { source, node: e.node, owner: e.owner }
        }
        Registry::NewResolver::SIGNATURE_HASH => {
            let e: Registry::NewResolver = decode(data)?;
            EnsEvent::NewResolver { source, node: e.node, resolver: e.resolver }
        }
        Registry::NewTTL::SIGNATURE_HASH => {
            let e: Registry::NewTTL = decode(data)?;
            EnsEvent::NewTtl { source, node: e.node, ttl: e.ttl }
        }
        _ => return Ok(None),
    }))
}

fn base_registrar(topic0: B256, data: &LogData) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(Some(match topic0 {
        BaseRegistrar::NameRegistered::SIGNATURE_HASH => {
            let e: BaseRegistrar::NameRegistered = decode(data)?;
            EnsEvent::NameRegistered { token_id: e.id, owner: e.owner, expires: e.expires }
        }
        // Basenames: a registration that also sets the resolver and TTL, which the registry's
        // own events of the same transaction record.
        RecordRegistrar::NameRegisteredWithRecord::SIGNATURE_HASH => {
            let e: RecordRegistrar::NameRegisteredWithRecord = decode(data)?;
            EnsEvent::NameRegistered { token_id: e.id, owner: e.owner, expires: e.expires }
        }
        BaseRegistrar::NameRenewed::SIGNATURE_HASH => {
            let e: BaseRegistrar::NameRenewed = decode(data)?;
            EnsEvent::NameRenewed { token_id: e.id, expires: e.expires }
        }
        BaseRegistrar::Transfer::SIGNATURE_HASH => {
            let e: BaseRegistrar::Transfer = decode(data)?;
            EnsEvent::TokenTransfer { from: e.from, to: e.to, token_id: e.tokenId }
        }
        _ => return Ok(None),
    }))
}

fn three_dns(topic0: B256, data: &LogData) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(match topic0 {
        ThreeDnsToken::RegistrationCreated::SIGNATURE_HASH => {
            let e: ThreeDnsToken::RegistrationCreated = decode(data)?;
            Some(EnsEvent::ThreeDnsRegistered {
                node: e.node,
                fqdn: e.fqdn,
                registrant: e.registrant,
                expiry: e.expiry,
            })
        }
        ThreeDnsToken::RegistrationExtended::SIGNATURE_HASH => {
            let e: ThreeDnsToken::RegistrationExtended = decode(data)?;
            Some(EnsEvent::ThreeDnsExtended { node: e.node, expiry: e.newExpiry })
        }
        // Its registry events: `NewOwner` and `Transfer(node, owner)`.
        _ => registry(RegistrySource::ThreeDns, topic0, data)?,
    })
}

fn reverse_registrar(topic0: B256, data: &LogData) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(match topic0 {
        ReverseRegistrar::NameForAddrChanged::SIGNATURE_HASH => {
            let e: ReverseRegistrar::NameForAddrChanged = decode(data)?;
            Some(EnsEvent::NameForAddrChanged { addr: e.addr, name: e.name })
        }
        _ => None,
    })
}

fn controller(topic0: B256, data: &LogData) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(Some(match topic0 {
        LegacyController::NameRegistered::SIGNATURE_HASH => {
            let e: LegacyController::NameRegistered = decode(data)?;
            EnsEvent::ControllerRegistered {
                name: e.name,
                label: e.label,
                owner: e.owner,
                base_cost: Some(e.cost),
                premium: None,
                expires: e.expires,
                referrer: None,
            }
        }
        WrappedController::NameRegistered::SIGNATURE_HASH => {
            let e: WrappedController::NameRegistered = decode(data)?;
            EnsEvent::ControllerRegistered {
                name: e.name,
                label: e.label,
                owner: e.owner,
                base_cost: Some(e.baseCost),
                premium: Some(e.premium),
                expires: e.expires,
                referrer: None,
            }
        }
        UnwrappedController::NameRegistered::SIGNATURE_HASH => {
            let e: UnwrappedController::NameRegistered = decode(data)?;
            EnsEvent::ControllerRegistered {
                name: e.label,
                label: e.labelhash,
                owner: e.owner,
                base_cost: Some(e.baseCost),
                premium: Some(e.premium),
                expires: e.expires,
                referrer: Some(e.referrer),
            }
        }
        // Basenames' controllers, and Lineanames' free registrations: the same fields under
        // other event names.
        ShortController::NameRegistered::SIGNATURE_HASH
        | LineaController::OwnerNameRegistered::SIGNATURE_HASH
        | LineaController::PohNameRegistered::SIGNATURE_HASH => {
            let e: ShortController::NameRegistered = decode_as(data)?;
            EnsEvent::ControllerRegistered {
                name: e.name,
                label: e.label,
                owner: e.owner,
                base_cost: None,
                premium: None,
                expires: e.expires,
                referrer: None,
            }
        }
        LegacyController::NameRenewed::SIGNATURE_HASH => {
            let e: LegacyController::NameRenewed = decode(data)?;
            EnsEvent::ControllerRenewed {
                name: e.name,
                label: e.label,
                cost: Some(e.cost),
                referrer: None,
            }
        }
        UnwrappedController::NameRenewed::SIGNATURE_HASH => {
            let e: UnwrappedController::NameRenewed = decode(data)?;
            EnsEvent::ControllerRenewed {
                name: e.label,
                label: e.labelhash,
                cost: Some(e.cost),
                referrer: Some(e.referrer),
            }
        }
        ShortController::NameRenewed::SIGNATURE_HASH => {
            let e: ShortController::NameRenewed = decode(data)?;
            EnsEvent::ControllerRenewed { name: e.name, label: e.label, cost: None, referrer: None }
        }
        _ => return Ok(None),
    }))
}

fn name_wrapper(topic0: B256, data: &LogData) -> Result<Vec<EnsEvent>, DecodeError> {
    Ok(match topic0 {
        NameWrapper::NameWrapped::SIGNATURE_HASH => {
            let e: NameWrapper::NameWrapped = decode(data)?;
            vec![EnsEvent::NameWrapped {
                node: e.node,
                name: e.name,
                owner: e.owner,
                fuses: e.fuses,
                expiry: e.expiry,
            }]
        }
        NameWrapper::NameUnwrapped::SIGNATURE_HASH => {
            let e: NameWrapper::NameUnwrapped = decode(data)?;
            vec![EnsEvent::NameUnwrapped { node: e.node, owner: e.owner }]
        }
        NameWrapper::FusesSet::SIGNATURE_HASH => {
            let e: NameWrapper::FusesSet = decode(data)?;
            vec![EnsEvent::FusesSet { node: e.node, fuses: e.fuses }]
        }
        NameWrapper::ExpiryExtended::SIGNATURE_HASH => {
            let e: NameWrapper::ExpiryExtended = decode(data)?;
            vec![EnsEvent::ExpiryExtended { node: e.node, expiry: e.expiry }]
        }
        NameWrapper::TransferSingle::SIGNATURE_HASH => {
            let e: NameWrapper::TransferSingle = decode(data)?;
            vec![EnsEvent::WrapperTransfer { from: e.from, to: e.to, id: e.id }]
        }
        NameWrapper::TransferBatch::SIGNATURE_HASH => {
            let e: NameWrapper::TransferBatch = decode(data)?;
            e.ids
                .into_iter()
                .map(|id| EnsEvent::WrapperTransfer { from: e.from, to: e.to, id })
                .collect()
        }
        _ => vec![],
    })
}

fn resolver(topic0: B256, data: &LogData) -> Result<Option<EnsEvent>, DecodeError> {
    Ok(Some(match topic0 {
        Resolver::AddrChanged::SIGNATURE_HASH => {
            let e: Resolver::AddrChanged = decode(data)?;
            EnsEvent::AddrChanged { node: e.node, addr: e.a }
        }
        Resolver::AddressChanged::SIGNATURE_HASH => {
            let e: Resolver::AddressChanged = decode(data)?;
            EnsEvent::AddressChanged { node: e.node, coin_type: e.coinType, address: e.newAddress }
        }
        Resolver::NameChanged::SIGNATURE_HASH => {
            let e: Resolver::NameChanged = decode(data)?;
            EnsEvent::NameChanged { node: e.node, name: e.name }
        }
        Resolver::ContenthashChanged::SIGNATURE_HASH => {
            let e: Resolver::ContenthashChanged = decode(data)?;
            EnsEvent::ContenthashChanged { node: e.node, hash: e.hash }
        }
        Resolver::PubkeyChanged::SIGNATURE_HASH => {
            let e: Resolver::PubkeyChanged = decode(data)?;
            EnsEvent::PubkeyChanged { node: e.node, x: e.x, y: e.y }
        }
        Resolver::TextChanged::SIGNATURE_HASH => {
            let e: Resolver::TextChanged = decode(data)?;
            EnsEvent::TextChanged { node: e.node, key: e.key, value: Some(e.value) }
        }
        LegacyTextResolver::TextChanged::SIGNATURE_HASH => {
            let e: LegacyTextResolver::TextChanged = decode(data)?;
            EnsEvent::TextChanged { node: e.node, key: e.key, value: None }
        }
        Resolver::VersionChanged::SIGNATURE_HASH => {
            let e: Resolver::VersionChanged = decode(data)?;
            EnsEvent::VersionChanged { node: e.node, version: e.newVersion }
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{Address, U256, address, b256};

    fn encode<E: SolEvent>(e: &E) -> LogData {
        e.encode_log_data()
    }

    #[test]
    fn every_consumed_selector_has_a_history_code() {
        use entities::event_selector;
        let consumed = [
            Registry::NewOwner::SIGNATURE_HASH,
            Registry::Transfer::SIGNATURE_HASH,
            Registry::NewResolver::SIGNATURE_HASH,
            Registry::NewTTL::SIGNATURE_HASH,
            BaseRegistrar::NameRegistered::SIGNATURE_HASH,
            BaseRegistrar::NameRenewed::SIGNATURE_HASH,
            BaseRegistrar::Transfer::SIGNATURE_HASH,
            LegacyController::NameRegistered::SIGNATURE_HASH,
            LegacyController::NameRenewed::SIGNATURE_HASH,
            WrappedController::NameRegistered::SIGNATURE_HASH,
            UnwrappedController::NameRegistered::SIGNATURE_HASH,
            UnwrappedController::NameRenewed::SIGNATURE_HASH,
            ShortController::NameRegistered::SIGNATURE_HASH,
            ShortController::NameRenewed::SIGNATURE_HASH,
            NameWrapper::NameWrapped::SIGNATURE_HASH,
            NameWrapper::NameUnwrapped::SIGNATURE_HASH,
            NameWrapper::FusesSet::SIGNATURE_HASH,
            NameWrapper::ExpiryExtended::SIGNATURE_HASH,
            NameWrapper::TransferSingle::SIGNATURE_HASH,
            NameWrapper::TransferBatch::SIGNATURE_HASH,
        ]
        .into_iter()
        .chain(resolver_topics());
        for selector in consumed {
            assert!(event_selector::code(selector.as_slice()).is_some(), "{selector:#x}");
        }
        // The table's hex is the keccak of its signature text.
        for (signature, hex) in event_selector::SELECTORS {
            assert_eq!(format!("{:#x}", alloy::primitives::keccak256(signature)), hex);
        }
    }

    #[test]
    fn decodes_registry_events_by_role() {
        let node = b256!("0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae");
        let owner = address!("0x00000000000000000000000000000000000000aa");
        let log = encode(&Registry::NewOwner { node, label: B256::repeat_byte(1), owner });
        assert_eq!(
            decode_log(Some(ContractRole::RegistryOld), &log).unwrap(),
            vec![EnsEvent::NewOwner {
                source: RegistrySource::Old,
                parent: node,
                label: B256::repeat_byte(1),
                owner
            }]
        );
        // The same log from an unconfigured address is not a resolver event.
        assert!(decode_log(None, &log).unwrap().is_empty());
    }

    #[test]
    fn decodes_both_text_changed_forms() {
        let node = B256::repeat_byte(7);
        let modern = encode(&Resolver::TextChanged {
            node,
            indexedKey: B256::ZERO,
            key: "url".into(),
            value: "https://ens.domains".into(),
        });
        let legacy = encode(&LegacyTextResolver::TextChanged {
            node,
            indexedKey: B256::ZERO,
            key: "url".into(),
        });
        assert!(!is_legacy_text(&modern));
        assert!(is_legacy_text(&legacy));
        assert_eq!(
            decode_log(None, &modern).unwrap(),
            vec![EnsEvent::TextChanged {
                node,
                key: "url".into(),
                value: Some("https://ens.domains".into())
            }]
        );
        assert_eq!(
            decode_log(None, &legacy).unwrap(),
            vec![EnsEvent::TextChanged { node, key: "url".into(), value: None }]
        );
    }

    #[test]
    fn malformed_body_is_an_error_not_a_skip() {
        let mut log = encode(&Resolver::AddrChanged { node: B256::ZERO, a: Address::ZERO });
        log = LogData::new_unchecked(log.topics().to_vec(), vec![1, 2, 3].into());
        let err = decode_log(None, &log).unwrap_err();
        assert!(err.to_string().contains("AddrChanged"), "{err}");
    }

    #[test]
    fn transfer_batch_fans_out_per_token() {
        let log = encode(&NameWrapper::TransferBatch {
            operator: Address::ZERO,
            from: Address::ZERO,
            to: Address::repeat_byte(2),
            ids: vec![U256::from(1), U256::from(2)],
            values: vec![U256::from(1), U256::from(1)],
        });
        let events = decode_log(Some(ContractRole::NameWrapper), &log).unwrap();
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn controller_variants_decode_to_one_shape() {
        let label = B256::repeat_byte(3);
        let log = encode(&UnwrappedController::NameRegistered {
            label: "abc".into(),
            labelhash: label,
            owner: Address::repeat_byte(4),
            baseCost: U256::from(5),
            premium: U256::from(6),
            expires: U256::from(7),
            referrer: B256::repeat_byte(8),
        });
        let events = decode_log(Some(ContractRole::Controller), &log).unwrap();
        assert!(matches!(
            &events[0],
            EnsEvent::ControllerRegistered { name, premium: Some(p), referrer: Some(_), .. }
                if name == "abc" && *p == U256::from(6)
        ));
        // Lineanames' free registrations name the label too.
        for log in [
            encode(&LineaController::PohNameRegistered {
                name: "human".into(),
                label,
                owner: Address::repeat_byte(4),
                expires: U256::from(9),
            }),
            encode(&LineaController::OwnerNameRegistered {
                name: "human".into(),
                label,
                owner: Address::repeat_byte(4),
                expires: U256::from(9),
            }),
        ] {
            let events = decode_log(Some(ContractRole::Controller), &log).unwrap();
            assert!(matches!(
                &events[..],
                [EnsEvent::ControllerRegistered { name, label: l, base_cost: None, .. }]
                    if name == "human" && *l == label
            ));
        }
    }
}
