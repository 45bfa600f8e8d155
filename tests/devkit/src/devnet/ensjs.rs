//! `@ensdomains/ensjs`, the ENS client applications use, run by Node.js against a subgraph
//! URL: its subgraph functions called as an application calls them
//! (`tests/devkit/js/ensjs_subgraph.mjs`), installed once from npm at pinned versions.

use std::{io::Write, path::PathBuf, process::Command};

use serde_json::Value;

use super::{DevnetError, install::npm_project};

/// The client, pinned.
pub const ENSJS: &str = "@ensdomains/ensjs@4.3.1";
/// The Ethereum library it is built on, pinned within its peer range.
pub const VIEM: &str = "viem@2.40.3";

const RUNNER: &str = include_str!("../../js/ensjs_subgraph.mjs");

fn failed(detail: impl Into<String>) -> DevnetError {
    DevnetError::Install { what: "ensjs".into(), detail: detail.into() }
}

fn ensure_ensjs() -> Result<PathBuf, DevnetError> {
    let root =
        npm_project("ensjs-4.3.1", &[ENSJS, VIEM], "node_modules/@ensdomains/ensjs/package.json")?;
    // The runner lives beside `node_modules` so that its imports resolve there.
    let runner = root.join("ensjs_subgraph.mjs");
    if std::fs::read_to_string(&runner).ok().as_deref() != Some(RUNNER) {
        let staging = root.join(format!(".ensjs_subgraph.{}.mjs", std::process::id()));
        std::fs::write(&staging, RUNNER).map_err(|e| failed(e.to_string()))?;
        std::fs::rename(&staging, &runner).map_err(|e| failed(e.to_string()))?;
    }
    Ok(root)
}

/// One call of a subgraph function: its name and arguments, and whether to read every page.
pub fn call(function: &str, args: Value, all_pages: bool) -> Value {
    serde_json::json!({ "fn": function, "args": args, "allPages": all_pages })
}

/// Runs `calls` against the subgraph at `url` for chain `chain_id`; one result per call,
/// `{"ok": ...}` or `{"error": ...}`. Node runs on a blocking thread: the caller's runtime
/// keeps driving what it hosts (a service under test, its database connections) meanwhile.
pub async fn run(url: &str, chain_id: u64, calls: &[Value]) -> Result<Vec<Value>, DevnetError> {
    let (url, calls) = (url.to_owned(), calls.to_vec());
    tokio::task::spawn_blocking(move || run_blocking(&url, chain_id, &calls))
        .await
        .map_err(|e| failed(e.to_string()))?
}

fn run_blocking(url: &str, chain_id: u64, calls: &[Value]) -> Result<Vec<Value>, DevnetError> {
    let root = ensure_ensjs()?;
    let mut child = Command::new("node")
        .arg(root.join("ensjs_subgraph.mjs"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("node: {e}")))?;
    let input = serde_json::json!({ "url": url, "chainId": chain_id, "calls": calls });
    {
        let mut stdin = child.stdin.take().ok_or_else(|| failed("no stdin"))?;
        stdin.write_all(input.to_string().as_bytes()).map_err(|e| failed(e.to_string()))?;
    }
    let out = child.wait_with_output().map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).chars().take(4000).collect::<String>(),
        ));
    }
    let results: Vec<Value> =
        serde_json::from_slice(&out.stdout).map_err(|e| failed(format!("runner output: {e}")))?;
    Ok(results)
}
