//! [`indexed_key!`]: key types for rows that are the `n`-th child of another keyed row, whose
//! Omnigraph id is `${parentId}-${index}` (a registration of a domain, a renewal of a
//! registration).
//!
//! Such a key stores the parent's raw key followed by the index as 4 big-endian bytes, so
//! byte order is (parent, index) order: one parent's children are one key range, in index
//! order, and the parent's own id is never stored again beside the key. GraphQL, the dump and
//! the journal only ever see the Omnigraph text ([`std::fmt::Display`] and
//! [`std::str::FromStr`]; serde uses the text too).

/// Bytes of the index that follows the parent's key.
pub const INDEX_BYTES: usize = 4;

/// Defines `$name`, the key of the `index`-th child of a `$parent` (see the module docs):
/// `$bytes` long, with `$parent_fn` returning the parent's key, and `$error` the error of a
/// text that is not such an id (`$what` names the id in its message).
#[macro_export]
macro_rules! indexed_key {
    (
        $(#[$meta:meta])*
        $name:ident, $error:ident, parent: $parent:ty, $parent_fn:ident, bytes: $bytes:expr,
        what: $what:literal
    ) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name([u8; $bytes]);

        $crate::inline_bytes!($name, $bytes);

        #[doc = concat!("A text that is not an Omnigraph ", $what, " id.")]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $error(pub String);

        impl std::fmt::Display for $error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!("not a ", $what, " id `${{parentId}}-${{index}}`: {}"), self.0)
            }
        }

        impl std::error::Error for $error {}

        impl $name {
            const PARENT_BYTES: usize = $bytes - $crate::indexed_key::INDEX_BYTES;

            /// The key of `parent`'s child number `index`.
            pub fn new(parent: &$parent, index: u32) -> Self {
                let mut bytes = [0; $bytes];
                bytes[..Self::PARENT_BYTES].copy_from_slice(parent.as_bytes());
                bytes[Self::PARENT_BYTES..].copy_from_slice(&index.to_be_bytes());
                Self(bytes)
            }

            /// The key whose raw bytes are `bytes`, if it has a key's length (the first bytes
            /// of a child's key, or a stored value).
            pub fn from_slice(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(Self)
            }

            /// The raw bytes, as stored.
            pub fn as_bytes(&self) -> &[u8] {
                &self.0
            }

            /// The parent's key.
            pub fn $parent_fn(&self) -> $parent {
                <$parent>::from_slice(&self.0[..Self::PARENT_BYTES])
                    .expect("a child's key begins with its parent's")
            }

            /// The 0-based index within the parent.
            pub fn index(&self) -> u32 {
                self.0
                    .get(Self::PARENT_BYTES..)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u32::from_be_bytes)
            }

            /// The first and last keys `parent`'s children can have: their key range.
            pub fn range_of(parent: &$parent) -> (Self, Self) {
                (Self::new(parent, 0), Self::new(parent, u32::MAX))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}-{}", self.$parent_fn(), self.index())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $error;

            /// Parses `${parentId}-${index}`, the index in canonical decimal.
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let invalid = || $error(text.chars().take(200).collect());
                let (parent, index) = text.rsplit_once('-').ok_or_else(invalid)?;
                let index = $crate::text_form::canonical_decimal(index)
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(invalid)?;
                let parent: $parent = parent.parse().map_err(|_| invalid())?;
                Ok(Self::new(&parent, index))
            }
        }

        $crate::text_form!($name);
    };
}
