//! `events.selector`: the event's topic0 stored as a small code instead of 32 bytes.
//!
//! The indexer records only events it decodes, and it decodes a fixed set of signatures, so
//! every stored selector is one of [`SELECTORS`]; the code is the position in that list. The
//! list is append-only: a code, once released, always means the same signature (a new
//! signature gets the next code). The decoder's tests check that every selector it accepts
//! has a code here.

use std::sync::LazyLock;

/// `(canonical signature, topic0 as lowercase 0x hex)`, in code order.
pub const SELECTORS: [(&str, &str); 34] = [
    (
        "NewOwner(bytes32,bytes32,address)",
        "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82",
    ),
    (
        "Transfer(bytes32,address)",
        "0xd4735d920b0f87494915f556dd9b54c8f309026070caea5c737245152564d266",
    ),
    (
        "NewResolver(bytes32,address)",
        "0x335721b01866dc23fbee8b6b2c7b1e14d6f05c28cd35a2c934239f94095602a0",
    ),
    (
        "NewTTL(bytes32,uint64)",
        "0x1d4f9bbfc9cab89d66e1a1562f2233ccbf1308cb4f63de2ead5787adddb8fa68",
    ),
    (
        "NameRegistered(uint256,address,uint256)",
        "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
    ),
    (
        "NameRenewed(uint256,uint256)",
        "0x9b87a00e30f1ac65d898f070f8a3488fe60517182d0a2098e1b4b93a54aa9bd6",
    ),
    (
        "Transfer(address,address,uint256)",
        "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    ),
    (
        "NameRegistered(string,bytes32,address,uint256,uint256)",
        "0xca6abbe9d7f11422cb6ca7629fbf6fe9efb1c621f71ce8f02b9f2a230097404f",
    ),
    (
        "NameRenewed(string,bytes32,uint256,uint256)",
        "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
    ),
    (
        "NameRegistered(string,bytes32,address,uint256,uint256,uint256)",
        "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
    ),
    (
        "NameRegistered(string,bytes32,address,uint256,uint256,uint256,bytes32)",
        "0xc2240194853531f1ae318dcef227de79c6ad0fd9d1b0e4fe08568415be2e08a5",
    ),
    (
        "NameRenewed(string,bytes32,uint256,uint256,bytes32)",
        "0xfa956c3bce4cb4b01166868ecaf0620566bc7e33fc70b0b9c6aef61e37e50b94",
    ),
    (
        "NameRegistered(string,bytes32,address,uint256)",
        "0x0667086d08417333ce63f40d5bc2ef6fd330e25aaaf317b7c489541f8fe600fa",
    ),
    (
        "NameRenewed(string,bytes32,uint256)",
        "0x93bc1a84707231b1d9552157299797c64a1a8c5bc79f05153716630c9c4936fc",
    ),
    (
        "NameWrapped(bytes32,bytes,address,uint32,uint64)",
        "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
    ),
    (
        "NameUnwrapped(bytes32,address)",
        "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
    ),
    (
        "FusesSet(bytes32,uint32)",
        "0x39873f00c80f4f94b7bd1594aebcf650f003545b74824d57ddf4939e3ff3a34b",
    ),
    (
        "ExpiryExtended(bytes32,uint64)",
        "0xf675815a0817338f93a7da433f6bd5f5542f1029b11b455191ac96c7f6a9b132",
    ),
    (
        "TransferSingle(address,address,address,uint256,uint256)",
        "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
    ),
    (
        "TransferBatch(address,address,address,uint256[],uint256[])",
        "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
    ),
    (
        "AddrChanged(bytes32,address)",
        "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2",
    ),
    (
        "AddressChanged(bytes32,uint256,bytes)",
        "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
    ),
    (
        "NameChanged(bytes32,string)",
        "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
    ),
    (
        "ContenthashChanged(bytes32,bytes)",
        "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
    ),
    (
        "PubkeyChanged(bytes32,bytes32,bytes32)",
        "0x1d6f5e03d3f63eb58751986629a5439baee5079ff04f345becb66e23eb154e46",
    ),
    (
        "TextChanged(bytes32,string,string,string)",
        "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
    ),
    (
        "VersionChanged(bytes32,uint64)",
        "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
    ),
    (
        "TextChanged(bytes32,string,string)",
        "0xd8c9334b1a9c2f9da342a0a2b32629c1a229b6445dad78947f674b44444a7550",
    ),
    (
        "NameRegisteredWithRecord(uint256,address,uint256,address,uint64)",
        "0xfd724d251af149ea2929b9061ddab2bb31e2d87778cc0acfa1d68add62e222e8",
    ),
    (
        "NameForAddrChanged(address,string)",
        "0x8af7a4c7007a33f680904f3b64733396b730fef22d79555dee29801ca2e479a9",
    ),
    (
        "RegistrationCreated(bytes32,bytes32,bytes,address,uint32,uint64)",
        "0xac19932838a19af39acc75fd6355e463271401ff78f74238d2f28fb264298956",
    ),
    (
        "RegistrationExtended(bytes32,uint64,uint64)",
        "0xb1cba991ee33b3ec72ce07bed0213bc60e033e33ea1f27a24211c3f14e853bcd",
    ),
    (
        "OwnerNameRegistered(string,bytes32,address,uint256)",
        "0x508f53f3c8e5a9fe2d20d2f7cf17580c2e3e9919909803d133196ea012e412bf",
    ),
    (
        "PohNameRegistered(string,bytes32,address,uint256)",
        "0xc20d0170f1f4e2758fc10a41d3746bd99e421a29b0a75c445558d7119ff454e5",
    ),
];

/// [`SELECTORS`] as bytes, decoded once (the table is checked by the tests below).
static BYTES: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| {
    SELECTORS
        .iter()
        .map(|(_, text)| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(&text[2..], &mut out).unwrap_or_default();
            out
        })
        .collect()
});

/// The code of `selector`, if the indexer records events with it.
pub fn code(selector: &[u8]) -> Option<i16> {
    BYTES.iter().position(|s| s.as_slice() == selector).and_then(|i| i16::try_from(i).ok())
}

/// The selector (topic0) of `code`.
pub fn selector(code: i16) -> Option<&'static [u8; 32]> {
    usize::try_from(code).ok().and_then(|i| BYTES.get(i))
}

/// The code of the event with this canonical signature, e.g.
/// `NameRegistered(uint256,address,uint256)`.
pub fn code_of_signature(signature: &str) -> Option<i16> {
    SELECTORS.iter().position(|(s, _)| *s == signature).and_then(|i| i16::try_from(i).ok())
}

/// The code of a `0x` hex selector, compared case-insensitively.
pub fn code_of_hex(hex: &str) -> Option<i16> {
    SELECTORS
        .iter()
        .position(|(_, s)| s.eq_ignore_ascii_case(hex))
        .and_then(|i| i16::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for (i, (_, hex)) in SELECTORS.iter().enumerate() {
            let code = code_of_hex(hex).unwrap_or(-1);
            assert_eq!(code as usize, i, "{hex} appears twice");
            let bytes = selector(code).copied().unwrap_or_default();
            assert_eq!(self::code(&bytes), Some(code));
            assert_eq!(format!("0x{}", hex::encode(bytes)), *hex);
            assert_eq!(code_of_signature(SELECTORS[i].0), Some(code));
        }
        assert_eq!(selector(-1), None);
        assert_eq!(code(&[0u8; 32]), None);
    }
}
