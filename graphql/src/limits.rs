//! [`DocumentLimits`]: the schema extension that bounds what one document may cost before
//! anything recursive or expensive sees it, and gives every error a stable `extensions.code`.
//!
//! In order, for every request (HTTP and websocket alike):
//! 1. the raw text's bracket nesting ([`crate::nesting`]): the parser is recursive, and a
//!    deeply nested literal would overflow the stack and abort the process;
//! 2. the variables' nesting;
//! 3. after parsing, the document with its fragments spread ([`crate::expansion`]): fields,
//!    aliases and the depth of fragment chains, so that fragments cannot multiply the work
//!    that the depth and complexity rules and execution do;
//! 4. the schema's own rules (depth, complexity, directives, validation), whose errors are
//!    given codes here.
//!
//! Any error still without a code when the response leaves is a request-level error
//! (`BAD_REQUEST`), or, when it has a path, an argument the resolver could not take
//! (`INVALID_ARGUMENT`): our own resolvers always set codes.

use std::sync::Arc;

use async_graphql::{
    Request, Response, ServerError, ServerResult, ValidationResult, Value as ConstValue, Variables,
    extensions::{
        Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextPrepareRequest,
        NextRequest, NextSubscribe, NextValidation,
    },
    futures_util::stream::{BoxStream, StreamExt},
    parser::types::ExecutableDocument,
};

use crate::{
    error::{code, server_error, with_code},
    expansion::{ExpansionError, expand},
    nesting::nesting_depth,
};

/// Deepest bracket nesting (`{`, `[`, `(` together) of a document's text. A selection 24
/// levels deep with an argument object three levels deep needs about 30.
pub const MAX_NESTING: usize = 64;
/// Most fields a document may select with its fragments spread. GraphiQL's introspection
/// query is about 80; the README's largest example about 60.
pub const MAX_FIELDS: u64 = 2_000;
/// Most aliases one document may use, counted with its fragments spread.
pub const MAX_ALIASES: u64 = 64;
/// Longest chain of fragments spreading fragments.
pub const MAX_FRAGMENT_DEPTH: u64 = 16;
/// Deepest nesting of a variable's value (lists and objects).
pub const MAX_VARIABLE_DEPTH: usize = 32;

/// The limits, as a schema extension.
#[derive(Debug, Default)]
pub struct DocumentLimits;

impl ExtensionFactory for DocumentLimits {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(DocumentLimitsExtension)
    }
}

#[derive(Debug)]
struct DocumentLimitsExtension;

/// Deepest nesting of `value`, measured without recursion (a value can come from JSON that
/// nests deeply).
fn value_depth(value: &ConstValue) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            ConstValue::List(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            ConstValue::Object(fields) => stack.extend(fields.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// The checks of steps 1–3 of the module documentation.
pub fn check_text(query: &str, variables: &Variables) -> ServerResult<()> {
    let depth = nesting_depth(query, MAX_NESTING);
    if depth > MAX_NESTING {
        return Err(server_error(
            code::TOO_DEEP,
            format!("the query nests brackets more than {MAX_NESTING} deep"),
        ));
    }
    if let Some((name, _)) = variables.iter().find(|(_, v)| value_depth(v) > MAX_VARIABLE_DEPTH) {
        return Err(server_error(
            code::TOO_DEEP,
            format!("variable ${name} nests more than {MAX_VARIABLE_DEPTH} deep"),
        ));
    }
    Ok(())
}

/// Step 3: the document with its fragments spread.
pub fn check_document(doc: &ExecutableDocument) -> ServerResult<()> {
    let e = expand(doc).map_err(|ExpansionError::Cycle(name)| {
        server_error(code::GRAPHQL_VALIDATION_FAILED, format!("fragment {name} spreads itself"))
    })?;
    let limits = [
        (e.fragment_depth, MAX_FRAGMENT_DEPTH, code::TOO_DEEP, "fragments spreading fragments"),
        (e.fields, MAX_FIELDS, code::TOO_COMPLEX, "fields with its fragments spread"),
        (e.aliases, MAX_ALIASES, code::TOO_MANY_ALIASES, "aliases with its fragments spread"),
    ];
    for (count, limit, code, what) in limits {
        if count > limit {
            return Err(server_error(
                code,
                format!("the query has {count} {what}; at most {limit} are allowed"),
            ));
        }
    }
    Ok(())
}

/// The code of an error the parser or async-graphql's own limits raised.
fn parse_error_code(error: &ServerError) -> &'static str {
    if error.message.starts_with("The recursion depth") {
        code::TOO_DEEP
    } else if error.message.starts_with("The number of directives") {
        code::TOO_MANY_DIRECTIVES
    } else {
        code::GRAPHQL_PARSE_FAILED
    }
}

/// The code of an error the validation rules raised.
fn validation_error_code(error: &ServerError) -> &'static str {
    match error.message.as_str() {
        "Query is nested too deep." => code::TOO_DEEP,
        "Query is too complex." => code::TOO_COMPLEX,
        _ => code::GRAPHQL_VALIDATION_FAILED,
    }
}

/// Gives every error of `response` a code.
pub fn complete_codes(mut response: Response) -> Response {
    response.errors = response
        .errors
        .into_iter()
        .map(|e| {
            let fallback =
                if e.path.is_empty() { code::BAD_REQUEST } else { code::INVALID_ARGUMENT };
            with_code(e, fallback)
        })
        .collect();
    response
}

#[async_graphql::async_trait::async_trait]
impl Extension for DocumentLimitsExtension {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        complete_codes(next.run(ctx).await)
    }

    fn subscribe<'s>(
        &self,
        ctx: &ExtensionContext<'_>,
        stream: BoxStream<'s, Response>,
        next: NextSubscribe<'_>,
    ) -> BoxStream<'s, Response> {
        next.run(ctx, stream).map(complete_codes).boxed()
    }

    /// Steps 1–3 run here, before async-graphql's own parse step: that step also measures
    /// recursion by following fragment spreads, which costs as much as the expansion.
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        check_text(&request.query, &request.variables)?;
        let doc = async_graphql::parser::parse_query(&request.query).map_err(|e| {
            let e = ServerError::from(e);
            let code = parse_error_code(&e);
            with_code(e, code)
        })?;
        check_document(&doc)?;
        request.set_parsed_query(doc);
        next.run(ctx, request).await
    }

    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        next.run(ctx, query, variables).await.map_err(|e| {
            let code = parse_error_code(&e);
            with_code(e, code)
        })
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        next.run(ctx).await.map_err(|errors| {
            errors
                .into_iter()
                .map(|e| {
                    let code = validation_error_code(&e);
                    with_code(e, code)
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ExecutableDocument {
        async_graphql::parser::parse_query(text).unwrap()
    }

    #[test]
    fn aliases_count_with_fragments_spread() {
        let one = "query { a: root { id } b: root { x: id } ...F } fragment F on Query { c: root { id } }";
        assert!(check_document(&parse(one)).is_ok());
        let mut many = String::from("query { ...F0 }");
        for i in 0..7 {
            many.push_str(&format!(" fragment F{i} on Query {{ ...F{n} ...F{n} }}", n = i + 1));
        }
        many.push_str(" fragment F7 on Query { a: __typename }");
        let err = check_document(&parse(&many)).unwrap_err();
        assert_eq!(crate::error::code_of(&err), Some(code::TOO_MANY_ALIASES), "{err:?}");
    }

    #[test]
    fn deep_text_is_refused_before_parsing() {
        let deep = format!(
            "{{ domain(by: {{name: {}\"x\"{}}}) {{ id }} }}",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let err = check_text(&deep, &Variables::default()).unwrap_err();
        assert_eq!(crate::error::code_of(&err), Some(code::TOO_DEEP));
    }

    #[test]
    fn deep_variables_are_refused() {
        let mut value = serde_json::json!("x");
        for _ in 0..40 {
            value = serde_json::json!([value]);
        }
        let vars = Variables::from_json(serde_json::json!({ "v": value }));
        let err = check_text("query($v: String) { root { id } }", &vars).unwrap_err();
        assert_eq!(crate::error::code_of(&err), Some(code::TOO_DEEP));
    }
}
