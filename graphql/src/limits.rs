//! [`AliasLimit`]: refuses documents with more aliases than [`MAX_ALIASES`]. Depth and
//! complexity are limited by the schema builder; aliases are not, and a document of a
//! thousand aliased copies of one cheap field is still a thousand resolver calls.

use std::sync::Arc;

use async_graphql::{
    ServerError, ServerResult, Variables,
    extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery},
    parser::types::{ExecutableDocument, Selection, SelectionSet},
};

use crate::error::code;

/// Most aliases one document may use.
pub const MAX_ALIASES: usize = 64;

/// The alias limit, as a schema extension.
#[derive(Debug, Default)]
pub struct AliasLimit;

impl ExtensionFactory for AliasLimit {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(AliasLimitExtension)
    }
}

#[derive(Debug)]
struct AliasLimitExtension;

fn aliases(set: &SelectionSet) -> usize {
    set.items
        .iter()
        .map(|item| match &item.node {
            Selection::Field(field) => {
                usize::from(field.node.alias.is_some()) + aliases(&field.node.selection_set.node)
            }
            Selection::InlineFragment(fragment) => aliases(&fragment.node.selection_set.node),
            Selection::FragmentSpread(_) => 0,
        })
        .sum()
}

/// Aliases of every operation and fragment definition of `doc`.
pub fn count_aliases(doc: &ExecutableDocument) -> usize {
    let operations: usize =
        doc.operations.iter().map(|(_, op)| aliases(&op.node.selection_set.node)).sum();
    let fragments: usize =
        doc.fragments.values().map(|f| aliases(&f.node.selection_set.node)).sum();
    operations + fragments
}

#[async_graphql::async_trait::async_trait]
impl Extension for AliasLimitExtension {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let doc = next.run(ctx, query, variables).await?;
        let count = count_aliases(&doc);
        if count > MAX_ALIASES {
            let mut err = ServerError::new(
                format!("the query uses {count} aliases; at most {MAX_ALIASES} are allowed"),
                None,
            );
            err.extensions.get_or_insert_with(Default::default).set("code", code::TOO_MANY_ALIASES);
            return Err(err);
        }
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_aliases_in_operations_and_fragments() {
        let doc = async_graphql::parser::parse_query(
            "query { a: root { id } b: root { x: id } ...F } fragment F on Query { c: root { id } }",
        )
        .unwrap();
        assert_eq!(count_aliases(&doc), 4);
    }
}
