//! Labels: the `labels` row of every label hash an event names, the labels every deployment
//! uses without spelling them out, and how a child's name is rendered from its label. A label
//! that becomes known later heals the names that held its hash ([`super::heal`]).

use std::{collections::HashMap, sync::LazyLock};

use alloy::primitives::B256;
use entities::{
    domain::{self, RawHash},
    label,
};

use super::{
    HandlerError,
    name::{encoded_label_hash, is_normalized_label, labelhash},
};
use crate::store::EntityStore;

/// Labels every ENS deployment uses that no event ever spells out (registries create them
/// with `setSubnodeOwner(labelhash)`): top-level and infrastructure labels.
pub const WELL_KNOWN_LABELS: &[&str] =
    &["eth", "reverse", "addr", "resolver", "xyz", "com", "test"];

static WELL_KNOWN: LazyLock<HashMap<B256, &'static str>> =
    LazyLock::new(|| WELL_KNOWN_LABELS.iter().map(|l| (labelhash(l), *l)).collect());

/// The plaintext of a well-known label hash.
pub fn well_known_label(hash: B256) -> Option<&'static str> {
    WELL_KNOWN.get(&hash).copied()
}

/// Makes sure a `labels` row exists for `hash` and returns its interpreted form. With a
/// `literal` that matches the hash, an unknown label heals and its names are re-rendered; a
/// literal that does not match is ignored (it would be a lie about the hash).
pub async fn ensure_label(
    store: &mut EntityStore,
    hash: B256,
    literal: Option<&str>,
) -> Result<String, HandlerError> {
    let key = RawHash::new(hash.0);
    let literal = literal.filter(|l| labelhash(l) == hash);
    let existing = store.label(&key).await?;
    match (existing, literal) {
        (Some(row), None) => Ok(row.interpreted()),
        (Some(row), Some(_)) if row.label.is_some() => Ok(row.interpreted()),
        (Some(_), Some(lit)) => {
            let normalized = is_normalized_label(lit);
            store.put_label(
                label::Model { label_hash: key.clone(), label: Some(lit.to_owned()), normalized },
                false,
            );
            // An unnormalized literal still renders as the hash: nothing to re-render.
            if !normalized {
                return Ok(encoded_label_hash(hash));
            }
            super::heal::label_healed(store, key).await?;
            Ok(lit.to_owned())
        }
        (None, lit) => {
            let from_event = lit.is_some();
            let lit = lit.or_else(|| well_known_label(hash));
            // ENSIP-15 normalization is costly (it was 1% of a backfill's samples): once.
            let normalized = lit.is_some_and(is_normalized_label);
            // Another chain may hold domains with this label that it could not name.
            // (Every chain knows the well-known labels: nothing to tell.)
            if from_event && normalized {
                super::heal::label_learned(store, key.clone());
            }
            let interpreted = match lit {
                Some(lit) if normalized => lit.to_owned(),
                _ => encoded_label_hash(hash),
            };
            store.put_label(
                label::Model { label_hash: key, label: lit.map(str::to_owned), normalized },
                true,
            );
            Ok(interpreted)
        }
    }
}

/// The name of a child with `interpreted` label under `parent`.
pub fn child_name(interpreted: &str, parent: Option<&domain::Model>) -> (String, i32) {
    match parent {
        Some(p) => (format!("{interpreted}.{}", p.name), p.depth + 1),
        None => (interpreted.to_owned(), 1),
    }
}
