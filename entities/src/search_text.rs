//! A domain name's search text: what the name search indexes of `domains.name` (SQLite's FTS5
//! trigram table, PostgreSQL's trigram index), and which `contains` texts it answers.
//!
//! A name writes each label it does not know as `[labelhash]`, 64 hex digits in brackets, and
//! those digits are most of the text a backfill indexes (two thirds of the names' characters
//! in the benchmark corpus). The search text leaves them out: each `[` + 64 hex digits + `]`
//! becomes `]`. No label written as itself holds a bracket (a label with one is written as its
//! labelhash), so the brackets of a name are exactly its labelhashes'.
//!
//! A text with no bracket and a character that is not a lowercase hex digit occurs in a name
//! exactly when it occurs in the name's search text ([`is_searchable`]): an occurrence cannot
//! lie inside a labelhash's digits (it holds a character they do not have) nor cross into one
//! (it would hold a bracket), so it lies in the parts of the name the search text keeps, in the
//! same order; and where a labelhash was the search text holds `]`, which the text cannot
//! span, so it finds no occurrence the name does not have. Any other text may occur inside a
//! labelhash, so the name search is no help for it: it is tested against the names themselves.

/// Length of a labelhash label: `[`, 64 hex digits, `]`.
const LABEL_HASH_CHARS: usize = 66;

/// Whether the name search finds every name holding `text` (see the module's documentation).
pub fn is_searchable(text: &str) -> bool {
    !text.contains(['[', ']']) && text.chars().any(|c| !matches!(c, '0'..='9' | 'a'..='f'))
}

/// The search text of `name`.
pub fn of(name: &str) -> String {
    let mut text = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('[') {
        text.push_str(&rest[..at]);
        text.push(']');
        rest = rest.get(at + LABEL_HASH_CHARS..).unwrap_or_default();
    }
    text.push_str(rest);
    text
}

/// PostgreSQL's expression for the search text of `column` (a name). The trigram index is
/// built over `postgres("name")`, and a query that means to use it must write the same
/// expression: the planner matches an index to a condition by its expression. It replaces
/// whatever a pair of brackets holds, the same as replacing the labelhashes since only they hold
/// brackets: spelling out the 64 hex digits made the expression ten times as slow to compute
/// (7.3 s against 0.8 s over the 860,621 names of the 5M-event benchmark corpus).
pub fn postgres(column: &str) -> String {
    format!(r"regexp_replace({column}, '\[[^]]*\]', ']', 'g')")
}

/// SQLite's `SELECT` of `columns` (of `rid`, the rowid, and `text`, the search text) over the
/// `domains` rows `filter` selects (a condition on `domains`), in rowid order: FTS5 writes out
/// what it has gathered each time it is given a rowid not above the last, so rows out of order
/// would split a statement's terms into many small segments. SQLite has no regular
/// expressions: each step of the recursion replaces the first labelhash left.
pub fn sqlite_rows(columns: &str, filter: &str) -> String {
    format!(
        "WITH RECURSIVE search_text(rid, text) AS (\
         SELECT rowid, name FROM domains WHERE {filter} \
         UNION ALL \
         SELECT rid, substr(text, 1, instr(text, '[') - 1) || ']' || \
         substr(text, instr(text, '[') + {LABEL_HASH_CHARS}) \
         FROM search_text WHERE instr(text, '[') > 0) \
         SELECT {columns} FROM search_text WHERE instr(text, '[') = 0 ORDER BY rid"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "[0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef]";

    #[test]
    fn labelhashes_become_a_bracket() {
        assert_eq!(of("alice.eth"), "alice.eth");
        assert_eq!(of(&format!("{HASH}.eth")), "].eth");
        assert_eq!(of(&format!("{HASH}.{HASH}.bob.eth")), "].].bob.eth");
        assert_eq!(of(&format!("né.{HASH}")), "né.]");
    }

    #[test]
    fn texts_a_labelhash_may_hold_are_not_searchable() {
        for text in ["ali", "a.e", "999a.", "bob", "xyz", "né"] {
            assert!(is_searchable(text), "{text}");
        }
        for text in ["999", "cafe", "abc", "].eth", "[01", "a[b"] {
            assert!(!is_searchable(text), "{text}");
        }
    }

    #[test]
    fn a_searchable_text_is_in_a_name_exactly_when_in_its_search_text() {
        let names = [
            format!("{HASH}.eth"),
            format!("ali.{HASH}.eth"),
            format!("{HASH}.ali.eth"),
            format!("9a.{HASH}.{HASH}.e9"),
            "alice.eth".to_owned(),
            "0xabc.eth".to_owned(),
        ];
        // Every piece of every name, tried against every name.
        let mut searchable = 0;
        for name in &names {
            let chars: Vec<char> = name.chars().collect();
            for len in 3..=8 {
                for piece in chars.windows(len) {
                    let text: String = piece.iter().collect();
                    if !is_searchable(&text) {
                        continue;
                    }
                    searchable += 1;
                    for other in &names {
                        assert_eq!(other.contains(&text), of(other).contains(&text), "{text}");
                    }
                }
            }
        }
        assert!(searchable > 50, "{searchable}");
    }
}
