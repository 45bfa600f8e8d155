//! [`RowSize`]: how many bytes a cached row holds, so the entity cache can be bounded by
//! memory rather than by a row count (rows differ tenfold in size: a label is a hash and a
//! word, a domain carries a name, a key and several addresses).

use entities::{
    domain, event, event_block, event_transaction, label, registration, renewal, resolver_address,
    resolver_record, resolver_text,
};

/// Bytes of a row: its inline size plus what its strings hold on the heap.
pub trait RowSize: Sized {
    /// Bytes the row's fields hold on the heap (strings, byte vectors), approximately.
    fn heap_bytes(&self) -> usize;

    /// Bytes held by the row: its inline size and its heap bytes.
    fn row_bytes(&self) -> usize {
        size_of::<Self>() + self.heap_bytes()
    }
}

fn text(s: &str) -> usize {
    s.len()
}

fn opt(s: &Option<String>) -> usize {
    s.as_deref().map_or(0, text)
}

impl RowSize for domain::Model {
    fn heap_bytes(&self) -> usize {
        // The key, the label hash and the addresses are held inline.
        text(&self.name)
    }
}

impl RowSize for label::Model {
    fn heap_bytes(&self) -> usize {
        opt(&self.label)
    }
}

impl RowSize for registration::Model {
    fn heap_bytes(&self) -> usize {
        text(&self.kind)
            + text(&self.registrar)
            + opt(&self.registrant)
            + opt(&self.base_cost)
            + opt(&self.premium)
            + opt(&self.referrer)
    }
}

impl RowSize for renewal::Model {
    fn heap_bytes(&self) -> usize {
        opt(&self.base_cost) + opt(&self.premium) + opt(&self.referrer)
    }
}

impl RowSize for resolver_record::Model {
    fn heap_bytes(&self) -> usize {
        opt(&self.name) + opt(&self.contenthash) + opt(&self.pubkey_x) + opt(&self.pubkey_y)
    }
}

impl RowSize for resolver_address::Model {
    fn heap_bytes(&self) -> usize {
        text(&self.address)
    }
}

impl RowSize for resolver_text::Model {
    fn heap_bytes(&self) -> usize {
        text(&self.key) + opt(&self.value)
    }
}

impl RowSize for event::Model {
    fn heap_bytes(&self) -> usize {
        self.topics.heap_bytes() + self.data.heap_bytes()
    }
}

impl RowSize for event_block::Model {
    fn heap_bytes(&self) -> usize {
        self.hash.capacity()
    }
}

impl RowSize for event_transaction::Model {
    fn heap_bytes(&self) -> usize {
        self.hash.capacity()
            + self.tx_from.capacity()
            + self.to_address.as_ref().map_or(0, Vec::capacity)
    }
}

#[cfg(test)]
mod tests {
    use entities::domain::RawHash;

    use super::*;

    #[test]
    fn strings_count_toward_the_size() {
        let hash = RawHash::new([1; RawHash::BYTES]);
        let short = label::Model { label_hash: hash.clone(), label: None, normalized: false };
        let long =
            label::Model { label_hash: hash, label: Some("x".repeat(1000)), normalized: true };
        assert_eq!(long.row_bytes() - short.row_bytes(), 1000);
        assert!(short.row_bytes() >= size_of::<label::Model>());
    }
}
