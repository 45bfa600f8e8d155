//! [`text_form!`]: what every raw key or value type shares. The database holds its bytes, and
//! everything else sees its text form (its [`std::fmt::Display`] and [`std::str::FromStr`]):
//! `Debug` shows the text, serde reads and writes the text (journal images are readable JSON),
//! and it never comes from an auto-increment `u64`.

/// A canonical decimal: digits only, no sign, no leading zeros (as ids print numbers), and
/// within `u64`.
pub fn canonical_decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text.len() == 1 || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// Implements `Debug` (as `Display`), serde as the text form, and sea-orm's `TryFromU64`
/// (always an error) for `$name`, which has `Display` and `FromStr`.
#[macro_export]
macro_rules! text_form {
    ($name:ty) => {
        /// Primary keys must convert from a `u64` (for auto-increment ids); this value never
        /// comes from one.
        impl sea_orm::TryFromU64 for $name {
            fn try_from_u64(_: u64) -> Result<Self, sea_orm::DbErr> {
                Err(sea_orm::DbErr::ConvertFromU64(stringify!($name)))
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(self, f)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_canonical_decimals() {
        assert_eq!(canonical_decimal("0"), Some(0));
        assert_eq!(canonical_decimal("8453"), Some(8453));
        for bad in ["", "01", "-1", "+1", "1x", "18446744073709551616"] {
            assert_eq!(canonical_decimal(bad), None, "{bad:?}");
        }
    }
}
