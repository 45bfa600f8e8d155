//! Secrets that must never be shown: RPC endpoint URLs (providers put API keys in their path,
//! query or user info) and the database password. They are registered once, when the config
//! is read and when a client is built, and [`redact`] replaces every occurrence in a text.
//!
//! Every log line passes through [`RedactingWriter`], so a secret cannot reach the logs at
//! any level, whoever formats it (our code, an HTTP client's debug span, a driver's error);
//! errors shown in `/status` and GraphQL pass through [`redact`].

use std::{
    borrow::Cow,
    io::Write,
    sync::{LazyLock, RwLock},
};

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Registered secrets, longest first (so a URL is replaced whole before its parts).
static SECRETS: LazyLock<RwLock<Vec<String>>> = LazyLock::new(|| RwLock::new(Vec::new()));

/// Shortest path segment or query value taken for a key: shorter ones are words like `v3`.
const MIN_KEY_LEN: usize = 6;

/// Registers `secret` (ignored when empty or already known).
pub fn register_secret(secret: &str) {
    if secret.is_empty() {
        return;
    }
    let Ok(mut secrets) = SECRETS.write() else { return };
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_owned());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// The parts of `url` that may hold credentials, each as it may be printed.
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = vec![url.to_owned(), url.trim_end_matches('/').to_owned()];
    let Ok(parsed) = reqwest::Url::parse(url) else { return secrets };
    secrets.push(parsed.as_str().to_owned());
    if let Some(password) = parsed.password() {
        secrets.push(format!("{}:{password}", parsed.username()));
        secrets.push(password.to_owned());
    }
    if !parsed.username().is_empty() && parsed.password().is_none() {
        secrets.push(format!("{}@", parsed.username()));
    }
    let path = parsed.path();
    if path.len() > 1 {
        secrets.push(match parsed.query() {
            Some(query) => format!("{path}?{query}"),
            None => path.to_owned(),
        });
        secrets.push(path.to_owned());
        secrets.extend(path.split('/').filter(|s| s.len() >= MIN_KEY_LEN).map(str::to_owned));
    }
    if let Some(query) = parsed.query() {
        secrets.push(query.to_owned());
        secrets.extend(
            parsed
                .query_pairs()
                .filter(|(_, v)| v.len() >= MIN_KEY_LEN)
                .map(|(_, v)| v.into_owned()),
        );
        secrets.extend(
            query
                .split('&')
                .filter_map(|p| p.split_once('='))
                .map(|(_, v)| v)
                .filter(|v| v.len() >= MIN_KEY_LEN)
                .map(str::to_owned),
        );
    }
    secrets
}

/// Registers every secret part of an endpoint or database URL.
pub fn register_url(url: &str) {
    for secret in url_secrets(url) {
        register_secret(&secret);
    }
}

/// Registers the password of a database URL (the rest of it is shown, to say which
/// database is meant).
pub fn register_password(url: &str) {
    if let Some(password) = reqwest::Url::parse(url).ok().as_ref().and_then(|u| u.password()) {
        register_secret(password);
    }
}

/// `text` with every registered secret replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let Ok(secrets) = SECRETS.read() else { return Cow::Borrowed(text) };
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// The log writer: each line is formatted into a buffer, redacted, then written to stderr.
#[derive(Clone, Copy, Debug, Default)]
pub struct RedactingWriter;

/// One log line on its way to stderr.
#[derive(Debug, Default)]
pub struct RedactedLine(Vec<u8>);

impl Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.0);
        let line = redact(&text);
        let result = std::io::stderr().lock().write_all(line.as_bytes());
        self.0.clear();
        result
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingWriter {
    type Writer = RedactedLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedLine::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_credential_of_a_url_is_redacted() {
        register_url(
            "http://alice:hunter2pw@rpc.example:8545/v3/KEYKEYKEY123?apikey=QUERYKEY99&x=1",
        );
        for shown in [
            "GET http://alice:hunter2pw@rpc.example:8545/v3/KEYKEYKEY123?apikey=QUERYKEY99&x=1 failed",
            "url=http://rpc.example:8545/v3/KEYKEYKEY123?apikey=QUERYKEY99&x=1",
            "path /v3/KEYKEYKEY123 and key QUERYKEY99, password hunter2pw",
        ] {
            let out = redact(shown);
            for secret in ["hunter2pw", "KEYKEYKEY123", "QUERYKEY99"] {
                assert!(!out.contains(secret), "{secret} in {out}");
            }
            assert!(out.contains(REDACTED));
        }
        assert_eq!(redact("nothing secret here"), "nothing secret here");
    }
}
