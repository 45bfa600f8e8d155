//! `GET /graphql`: the GraphiQL playground, served entirely by Ensemble. Its scripts and
//! styles are pinned npm production builds embedded at build time (`build.rs`), so it loads
//! with no network access beyond this server, and the page's Content-Security-Policy lets it
//! load nothing else: scripts and styles from here only, connections to this origin (queries
//! over HTTP, subscriptions over the websocket), fonts and images inline.

use actix_web::{HttpResponse, http::header, web};

/// The page's policy. GraphiQL sets styles on elements as it draws them (`'unsafe-inline'` for
/// styles only); its fonts and icons are `data:` URLs inside its stylesheet.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; \
     font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#[cfg(playground)]
const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ensemble GraphiQL</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/graphql/playground/graphiql.min.css">
<link rel="stylesheet" href="/graphql/playground/playground.css">
</head>
<body>
<div id="graphiql">Loading…</div>
<script src="/graphql/playground/react.production.min.js"></script>
<script src="/graphql/playground/react-dom.production.min.js"></script>
<script src="/graphql/playground/graphiql.min.js"></script>
<script src="/graphql/playground/init.js"></script>
</body>
</html>
"#;

/// Shown when the build had no npm: the API works, the playground is not there.
#[cfg(not(playground))]
const MISSING: &str = "<!doctype html><title>Ensemble</title><p>This build of Ensemble has no \
     GraphiQL playground: Node.js and npm were not available when it was built. POST GraphQL \
     requests to /graphql.</p>";

/// One embedded file: its name, content type and bytes.
type Asset = (&'static str, &'static str, &'static [u8]);

#[cfg(playground)]
const ASSETS: [Asset; 6] = [
    (
        "react.production.min.js",
        "text/javascript",
        include_bytes!(concat!(env!("OUT_DIR"), "/react.production.min.js")),
    ),
    (
        "react-dom.production.min.js",
        "text/javascript",
        include_bytes!(concat!(env!("OUT_DIR"), "/react-dom.production.min.js")),
    ),
    (
        "graphiql.min.js",
        "text/javascript",
        include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.min.js")),
    ),
    ("graphiql.min.css", "text/css", include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.min.css"))),
    ("init.js", "text/javascript", include_bytes!("playground/init.js")),
    ("playground.css", "text/css", include_bytes!("playground/playground.css")),
];

#[cfg(not(playground))]
const ASSETS: [Asset; 0] = [];

fn secured(mut response: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    response
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    response
}

/// The playground page.
pub async fn page() -> HttpResponse {
    #[cfg(playground)]
    let body = PAGE;
    #[cfg(not(playground))]
    let body = MISSING;
    secured(HttpResponse::Ok()).content_type("text/html; charset=utf-8").body(body)
}

/// One of the page's files.
pub async fn asset(file: web::Path<String>) -> HttpResponse {
    match ASSETS.iter().find(|(name, _, _)| *name == file.as_str()) {
        Some((_, content_type, bytes)) => secured(HttpResponse::Ok())
            .content_type(format!("{content_type}; charset=utf-8"))
            // The files change only with the binary.
            .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
            .body(*bytes),
        None => HttpResponse::NotFound().finish(),
    }
}
