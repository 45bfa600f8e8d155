//! [`nesting_depth`]: how deeply a GraphQL document's brackets nest, read from the raw text.
//!
//! The GraphQL parser is recursive: a selection set, a list or object literal, or a list type
//! nested a few thousand times overflows the stack of the thread that parses it, and a stack
//! overflow aborts the whole process (indexer included). Every one of those constructs opens
//! a bracket (`{`, `[` or `(`), so counting brackets outside strings and comments bounds the
//! parser's recursion before the parser sees the text.

/// The deepest bracket nesting of `text`, ignoring brackets inside strings, block strings and
/// comments. Stops counting (and returns) as soon as `limit` is exceeded, so hostile text
/// costs at most one pass.
pub fn nesting_depth(text: &str, limit: usize) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                i += 3;
                // A block string ends at the first unescaped `"""`.
                while i < bytes.len() && !bytes[i..].starts_with(b"\"\"\"") {
                    i += if bytes[i..].starts_with(b"\\\"\"\"") { 4 } else { 1 };
                }
                i += 2;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' | b'(' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    return deepest;
                }
            }
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::nesting_depth;

    #[test]
    fn counts_every_bracket_kind() {
        assert_eq!(nesting_depth("{ a }", 100), 1);
        assert_eq!(nesting_depth("{ a(b: [1, {c: 2}]) { d } }", 100), 4);
        assert_eq!(nesting_depth("query($v: [[Int]]) { a }", 100), 3);
    }

    #[test]
    fn ignores_brackets_in_strings_and_comments() {
        assert_eq!(nesting_depth(r#"{ a(b: "{{{[[[(((") }"#, 100), 2);
        assert_eq!(nesting_depth("{ a # {{{{{{\n }", 100), 1);
        assert_eq!(nesting_depth("{ a(b: \"\"\" {{{ \\\"\"\" [[[ \"\"\") }", 100), 2);
        assert_eq!(nesting_depth(r#"{ a(b: "\"{{{") }"#, 100), 2);
    }

    #[test]
    fn stops_at_the_limit() {
        let hostile = "[".repeat(100_000);
        assert_eq!(nesting_depth(&hostile, 64), 65);
    }
}
