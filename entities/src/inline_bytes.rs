//! [`inline_bytes!`]: sea-orm's value traits for a newtype over `[u8; N]`, stored as a blob.
//!
//! The raw keys and hashes are held inline rather than as byte vectors: the handlers copy
//! keys and rows between the store's layers (dirty, pinned, in flight, cached) many times a
//! batch, and each copy of a vector was an allocation (BENCHMARKS.md). What goes to and comes
//! from the database is what `DeriveValueType` gives a byte vector, with the length checked
//! on the way in: a stored value of another length is not a value of this type.

/// Implements `From<$name> for Value`, `TryGetable`, `ValueType`, `Nullable` and
/// `IntoActiveValue` for `$name`, a tuple struct over `[u8; $bytes]` with
/// `from_slice(&[u8]) -> Option<Self>`.
#[macro_export]
macro_rules! inline_bytes {
    ($name:ident, $bytes:expr) => {
        impl From<$name> for sea_orm::Value {
            fn from(value: $name) -> Self {
                value.0.to_vec().into()
            }
        }

        impl sea_orm::TryGetable for $name {
            fn try_get_by<I: sea_orm::ColIdx>(
                res: &sea_orm::QueryResult,
                idx: I,
            ) -> Result<Self, sea_orm::TryGetError> {
                let bytes = <Vec<u8> as sea_orm::TryGetable>::try_get_by(res, idx)?;
                Self::from_slice(&bytes).ok_or_else(|| {
                    sea_orm::TryGetError::DbErr(sea_orm::DbErr::Type(format!(
                        concat!("a stored ", stringify!($name), " of {} bytes, not {}"),
                        bytes.len(),
                        $bytes
                    )))
                })
            }
        }

        impl sea_orm::sea_query::ValueType for $name {
            fn try_from(v: sea_orm::Value) -> Result<Self, sea_orm::sea_query::ValueTypeErr> {
                let bytes = <Vec<u8> as sea_orm::sea_query::ValueType>::try_from(v)?;
                Self::from_slice(&bytes).ok_or(sea_orm::sea_query::ValueTypeErr)
            }

            fn type_name() -> String {
                stringify!($name).to_owned()
            }

            fn array_type() -> sea_orm::sea_query::ArrayType {
                <Vec<u8> as sea_orm::sea_query::ValueType>::array_type()
            }

            fn column_type() -> sea_orm::sea_query::ColumnType {
                <Vec<u8> as sea_orm::sea_query::ValueType>::column_type()
            }
        }

        impl sea_orm::sea_query::Nullable for $name {
            fn null() -> sea_orm::Value {
                <Vec<u8> as sea_orm::sea_query::Nullable>::null()
            }
        }

        impl sea_orm::IntoActiveValue<$name> for $name {
            fn into_active_value(self) -> sea_orm::ActiveValue<$name> {
                sea_orm::ActiveValue::Set(self)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use sea_orm::{Value, sea_query::ValueType};

    use crate::{domain_key::DomainKey, raw_hex::RawHash, registration_key::RegistrationKey};

    /// Values go to the database as byte blobs and come back only at their own width.
    #[test]
    fn values_are_blobs_of_their_width_only() {
        let hash = RawHash::new([7; 32]);
        let value = Value::from(hash.clone());
        assert_eq!(value, Value::from(vec![7u8; 32]));
        assert_eq!(<RawHash as ValueType>::try_from(value).ok(), Some(hash));
        assert!(<RawHash as ValueType>::try_from(Value::from(vec![7u8; 31])).is_err());
        assert!(<RawHash as ValueType>::try_from(Value::from(vec![7u8; 33])).is_err());
        assert_eq!(<RawHash as ValueType>::column_type(), <Vec<u8> as ValueType>::column_type());

        let domain = DomainKey::new(1, &[0x11; 20], &[0x22; 32]);
        let stored = Value::from(domain.clone());
        assert_eq!(stored, Value::from(domain.as_bytes().to_vec()));
        assert_eq!(<DomainKey as ValueType>::try_from(stored).ok(), Some(domain.clone()));
        let short = Value::from(domain.as_bytes()[1..].to_vec());
        assert!(<DomainKey as ValueType>::try_from(short).is_err());

        let registration = RegistrationKey::new(&domain, 3);
        assert_eq!(registration.domain_id(), domain);
        assert_eq!(registration.index(), 3);
        assert_eq!(&registration.as_bytes()[..domain.as_bytes().len()], domain.as_bytes());
        let stored = Value::from(registration.clone());
        assert_eq!(<RegistrationKey as ValueType>::try_from(stored).ok(), Some(registration));
    }
}
