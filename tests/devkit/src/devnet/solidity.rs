//! Test contracts of the project's own (`tests/devkit/contracts/*.sol`: a wildcard resolver,
//! a CCIP-Read resolver), compiled at test time with the `solc` npm package (its JavaScript
//! build, run by Node.js). The compiler is installed once into the devnet directory; each
//! source's bytecode is cached there by the hash of the source and the compiler version.

use std::{path::PathBuf, process::Command};

use alloy::primitives::keccak256;

use super::{DevnetError, install::devnet_dir};

/// The compiler: npm `solc` at this version.
pub const SOLC_VERSION: &str = "0.8.26";

/// The project's test contracts, by file name.
pub fn contracts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contracts")
}

fn failed(what: &str, detail: impl Into<String>) -> DevnetError {
    DevnetError::Install { what: what.into(), detail: detail.into() }
}

/// Installs the compiler (once, under a lock) and returns its directory.
fn ensure_solc() -> Result<PathBuf, DevnetError> {
    super::install::npm_project(
        &format!("solc-{SOLC_VERSION}"),
        &[&format!("solc@{SOLC_VERSION}")],
        "node_modules/solc/package.json",
    )
}

/// Node.js program: standard JSON in on stdin, standard JSON out on stdout.
const COMPILE_JS: &str = r#"
const solc = require(process.argv[1]);
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => process.stdout.write(solc.compile(input)));
"#;

/// Creation bytecode of `contract`, defined in `file` of [`contracts_dir`].
pub fn bytecode(file: &str, contract: &str) -> Result<Vec<u8>, DevnetError> {
    let source = std::fs::read_to_string(contracts_dir().join(file))
        .map_err(|e| DevnetError::Artifact(file.into(), e.to_string()))?;
    let key = keccak256(format!("{SOLC_VERSION}\n{contract}\n{source}"));
    let cached = devnet_dir().join("compiled").join(format!("{contract}-{key:x}.bin"));
    if let Ok(hex_code) = std::fs::read_to_string(&cached)
        && let Ok(code) = hex::decode(hex_code.trim())
    {
        return Ok(code);
    }
    let solc = ensure_solc()?;
    let input = serde_json::json!({
        "language": "Solidity",
        "sources": { file: { "content": source } },
        "settings": {
            "optimizer": { "enabled": true, "runs": 200 },
            "outputSelection": { "*": { "*": ["evm.bytecode.object"] } }
        }
    });
    let mut child = Command::new("node")
        .arg("-e")
        .arg(COMPILE_JS)
        .arg(solc.join("node_modules").join("solc"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| failed("node (solc)", e.to_string()))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().ok_or_else(|| failed("node (solc)", "no stdin"))?;
        stdin.write_all(input.to_string().as_bytes()).map_err(|e| failed("solc", e.to_string()))?;
    }
    let out = child.wait_with_output().map_err(|e| failed("solc", e.to_string()))?;
    if !out.status.success() {
        return Err(failed("solc", String::from_utf8_lossy(&out.stderr)));
    }
    let output: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| DevnetError::Artifact(contract.into(), format!("solc output: {e}")))?;
    let errors: Vec<&str> = output["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["severity"] == "error")
        .filter_map(|e| e["formattedMessage"].as_str())
        .collect();
    if !errors.is_empty() {
        return Err(DevnetError::Artifact(contract.into(), errors.join("\n")));
    }
    let hex_code = output["contracts"][file][contract]["evm"]["bytecode"]["object"]
        .as_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            DevnetError::Artifact(contract.into(), "no bytecode in solc output".into())
        })?;
    let code =
        hex::decode(hex_code).map_err(|e| DevnetError::Artifact(contract.into(), e.to_string()))?;
    if let Some(dir) = cached.parent() {
        let _ = std::fs::create_dir_all(dir);
        // Written aside and renamed: a concurrent reader never sees half a file.
        let staging = cached.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&staging, hex_code).is_ok() {
            let _ = std::fs::rename(&staging, &cached);
        }
    }
    Ok(code)
}
