//! `labels`: what is known about a labelhash. A label arrives as plaintext (controller events,
//! NameWrapper names, imports) or stays unknown. Its interpreted form ([`Model::interpreted`])
//! is the label itself when it is ENSIP-15 normalized and `[labelhash]` otherwise, so a row
//! stores only whether the label is normalized, not the rendering (for an unknown label, 66
//! characters repeating the hash). The hash is stored as its 32 raw bytes ([`RawHash`]), and
//! shown as `0x` hex everywhere else.

use sea_orm::entity::prelude::*;

pub use crate::raw_hex::RawHash;

/// A label.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "labels")]
pub struct Model {
    /// keccak256 of the label.
    #[sea_orm(primary_key, auto_increment = false)]
    pub label_hash: RawHash,
    /// The plaintext label, when known.
    pub label: Option<String>,
    /// Whether `label` is known and ENSIP-15 normalized, so names show it as it is.
    pub normalized: bool,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Rendering used in names: the label if normalized, else `[hash]` (the hash's lowercase
    /// hex in brackets).
    pub fn interpreted(&self) -> String {
        match (&self.label, self.normalized) {
            (Some(label), true) => label.clone(),
            _ => format!("[{}]", hex::encode(self.label_hash.as_bytes())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_normalized_labels_as_themselves_and_others_as_their_hash() {
        let hash = RawHash::new([0xab; 32]);
        let row = |label: Option<&str>, normalized| Model {
            label_hash: hash.clone(),
            label: label.map(str::to_owned),
            normalized,
        };
        let bracketed = format!("[{}]", "ab".repeat(32));
        assert_eq!(row(Some("vitalik"), true).interpreted(), "vitalik");
        assert_eq!(row(Some("Vitalik"), false).interpreted(), bracketed);
        assert_eq!(row(None, false).interpreted(), bracketed);
    }

    #[test]
    fn journal_images_read_back() {
        let row = Model {
            label_hash: RawHash::new([0xab; 32]),
            label: Some("eth".into()),
            normalized: true,
        };
        let json = serde_json::to_string(&row).expect("serializes");
        assert_eq!(serde_json::from_str::<Model>(&json).expect("reads back"), row);
    }
}
