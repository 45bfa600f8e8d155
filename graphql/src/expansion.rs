//! [`expand`]: the size of a document once every fragment spread is replaced by its fragment.
//!
//! A document of a few hundred bytes can spread a fragment that spreads another twice, and so
//! on: 25 such fragments stand for 2^25 copies of a field. Execution, and the validation rules
//! that follow spreads, do the work of the expanded document, so the limits must be counted
//! on it. This computes the expanded counts without expanding: each fragment is measured once
//! (memoized, in dependency order, with an explicit stack so a long chain of fragments cannot
//! exhaust the thread's stack either), with saturating arithmetic.

use std::collections::HashMap;

use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};

/// What a document amounts to with its fragments spread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// Fields selected, counting every copy a spread makes.
    pub fields: u64,
    /// Aliased fields among them.
    pub aliases: u64,
    /// The longest chain of fragments spreading fragments.
    pub fragment_depth: u64,
}

impl Expansion {
    /// Adds what a spread of a fragment measuring `spread` brings.
    fn absorb(&mut self, spread: Expansion) {
        self.fields = self.fields.saturating_add(spread.fields);
        self.aliases = self.aliases.saturating_add(spread.aliases);
        self.fragment_depth = self.fragment_depth.max(spread.fragment_depth);
    }
}

/// Why a document cannot be measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpansionError {
    /// A fragment spreads itself, directly or through others.
    Cycle(String),
}

/// A selection set's own fields and aliases, and the fragments it spreads (with repeats).
#[derive(Debug, Default)]
struct Shallow<'a> {
    fields: u64,
    aliases: u64,
    spreads: Vec<&'a str>,
}

/// Walks one selection set; its nesting is bounded by the document's bracket depth, which is
/// checked before parsing, so recursion here is shallow.
fn shallow<'a>(set: &'a SelectionSet, into: &mut Shallow<'a>) {
    for item in &set.items {
        match &item.node {
            Selection::Field(field) => {
                into.fields += 1;
                into.aliases += u64::from(field.node.alias.is_some());
                shallow(&field.node.selection_set.node, into);
            }
            Selection::InlineFragment(fragment) => shallow(&fragment.node.selection_set.node, into),
            Selection::FragmentSpread(spread) => {
                into.spreads.push(spread.node.fragment_name.node.as_str())
            }
        }
    }
}

/// The expanded counts of every operation of `doc`, added up (all of them are validated).
/// A spread of an unknown fragment counts nothing; validation reports it.
pub fn expand(doc: &ExecutableDocument) -> Result<Expansion, ExpansionError> {
    let fragments: HashMap<&str, Shallow<'_>> = doc
        .fragments
        .iter()
        .map(|(name, f)| {
            let mut s = Shallow::default();
            shallow(&f.node.selection_set.node, &mut s);
            (name.as_str(), s)
        })
        .collect();
    // Memoized expansion of each fragment; `None` while it is being measured.
    let mut done: HashMap<&str, Option<Expansion>> = HashMap::new();
    for &root in fragments.keys() {
        if done.contains_key(root) {
            continue;
        }
        // Each entry: a fragment and how many of its spreads are measured already.
        let mut stack = vec![(root, 0usize)];
        done.insert(root, None);
        while let Some((name, next)) = stack.last_mut() {
            let own = &fragments[*name];
            if let Some(&dep) = own.spreads.get(*next) {
                *next += 1;
                if !fragments.contains_key(dep) {
                    continue;
                }
                match done.get(dep) {
                    Some(Some(_)) => {}
                    Some(None) => return Err(ExpansionError::Cycle(dep.to_owned())),
                    None => {
                        done.insert(dep, None);
                        stack.push((dep, 0));
                    }
                }
                continue;
            }
            let name = *name;
            let mut total =
                Expansion { fields: own.fields, aliases: own.aliases, fragment_depth: 0 };
            for dep in own.spreads.iter().filter_map(|d| done.get(d).copied().flatten()) {
                total.absorb(dep);
            }
            // This fragment is one more link of every chain through it.
            total.fragment_depth += 1;
            done.insert(name, Some(total));
            stack.pop();
        }
    }
    let mut sum = Expansion::default();
    for (_, op) in doc.operations.iter() {
        let mut s = Shallow::default();
        shallow(&op.node.selection_set.node, &mut s);
        sum.absorb(Expansion { fields: s.fields, aliases: s.aliases, fragment_depth: 0 });
        for dep in s.spreads.iter().filter_map(|d| done.get(d).copied().flatten()) {
            sum.absorb(dep);
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_text(text: &str) -> Result<Expansion, ExpansionError> {
        expand(&async_graphql::parser::parse_query(text).unwrap())
    }

    #[test]
    fn counts_spread_copies() {
        let e = expand_text(
            "{ a: root { id } ...F ...F } fragment F on Query { root { x: id } ...G } \
             fragment G on Query { __typename }",
        )
        .unwrap();
        // 2 own fields + 2 × (2 fields of F + 1 of G).
        assert_eq!(e, Expansion { fields: 8, aliases: 3, fragment_depth: 2 });
    }

    #[test]
    fn exponential_fan_out_is_measured_not_expanded() {
        let mut text = String::from("query { ...F0 }");
        for i in 0..60 {
            text.push_str(&format!(" fragment F{i} on Query {{ ...F{n} ...F{n} }}", n = i + 1));
        }
        text.push_str(" fragment F60 on Query { __typename }");
        let e = expand_text(&text).unwrap();
        assert_eq!(e.fields, 1 << 60);
        assert_eq!(e.fragment_depth, 61);
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let mut text = String::from("query { ...F0 }");
        for i in 0..20_000 {
            text.push_str(&format!(" fragment F{i} on Query {{ ...F{} }}", i + 1));
        }
        text.push_str(" fragment F20000 on Query { __typename }");
        assert_eq!(expand_text(&text).unwrap().fragment_depth, 20_001);
    }

    #[test]
    fn cycles_are_reported() {
        let e = expand_text("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }");
        assert!(matches!(e, Err(ExpansionError::Cycle(_))));
    }
}
