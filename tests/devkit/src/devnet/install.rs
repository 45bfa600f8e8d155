//! Installs the devnet tools from the npm registry: anvil and the ENS contract artifacts.
//! `npm pack` fetches the package tarballs without running their install scripts or pulling
//! their (truffle-era) dependency trees; they are unpacked into a cache directory.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use super::DevnetError;

/// npm packages and the directory each unpacks to.
pub const PACKAGES: [(&str, &str); 3] = [
    ("@foundry-rs/anvil-linux-amd64@1.7.1", "anvil"),
    ("@ensdomains/ethregistrar@2.0.5", "ethregistrar"),
    ("@ensdomains/resolver@0.3.1", "resolver"),
];

/// Where the tools live: `$ENSEMBLE_DEVNET_DIR`, else `~/.cache/ensemble-devnet`.
pub fn devnet_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ENSEMBLE_DEVNET_DIR") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache").join("ensemble-devnet")
}

fn run(cmd: &mut Command, what: &str) -> Result<String, DevnetError> {
    let out = cmd
        .output()
        .map_err(|e| DevnetError::Install { what: what.into(), detail: e.to_string() })?;
    if !out.status.success() {
        return Err(DevnetError::Install {
            what: what.into(),
            detail: String::from_utf8_lossy(&out.stderr).chars().take(2000).collect(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs every package that is not installed yet and returns the directory.
///
/// Safe to call from many processes and threads at once (nextest runs each test in its own
/// process, `cargo test` in threads of one): an installer holds an exclusive lock on the
/// directory's lock file, so the first installs and the others then find the packages in
/// place. A package is unpacked into a staging directory and renamed into place last, so an
/// interrupted install is never mistaken for a complete one.
pub fn ensure_installed() -> Result<PathBuf, DevnetError> {
    let dir = devnet_dir();
    let fail_dir = |e: std::io::Error| DevnetError::Install {
        what: dir.display().to_string(),
        detail: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(fail_dir)?;
    if PACKAGES.iter().all(|(_, target)| installed(&dir, target)) {
        return Ok(dir);
    }
    // Each open of the file is its own lock holder, threads of one process included; the
    // lock goes with the file when this returns.
    let lock = std::fs::File::create(dir.join(".install.lock")).map_err(fail_dir)?;
    lock.lock().map_err(fail_dir)?;
    for (package, target) in PACKAGES {
        let dest = dir.join(target);
        if installed(&dir, target) {
            continue;
        }
        let fail = |e: std::io::Error| DevnetError::Install {
            what: package.into(),
            detail: e.to_string(),
        };
        let staging = dir.join(format!(".{target}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(fail)?;
        let tarball = run(
            Command::new("npm")
                .args(["pack", "--silent", package, "--pack-destination"])
                .arg(&staging),
            package,
        )?;
        let tarball = staging.join(tarball.lines().last().unwrap_or_default().trim());
        run(Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&staging), package)?;
        std::fs::remove_file(&tarball).map_err(fail)?;
        // A partial directory from an interrupted rename goes first.
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&staging, &dest).map_err(|e| DevnetError::Install {
            what: package.into(),
            detail: format!("could not move the package into {}: {e}", dest.display()),
        })?;
    }
    Ok(dir)
}

/// Installs `packages` (npm `name@version` specs) with their dependencies into the devnet
/// directory's `project` folder, once and under a lock as [`ensure_installed`] does, and
/// returns that folder. `ready` is a file whose presence means the install completed.
pub fn npm_project(project: &str, packages: &[&str], ready: &str) -> Result<PathBuf, DevnetError> {
    let root = devnet_dir().join(project);
    let done = root.join(ready);
    if done.exists() {
        return Ok(root);
    }
    let fail =
        |e: std::io::Error| DevnetError::Install { what: project.into(), detail: e.to_string() };
    std::fs::create_dir_all(&root).map_err(fail)?;
    let lock = std::fs::File::create(root.join(".install.lock")).map_err(fail)?;
    lock.lock().map_err(fail)?;
    if done.exists() {
        return Ok(root);
    }
    let mut npm = Command::new("npm");
    npm.args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
        .arg(&root)
        .args(packages);
    run(&mut npm, project)?;
    Ok(root)
}

/// Whether `target` is unpacked in `dir`.
fn installed(dir: &Path, target: &str) -> bool {
    dir.join(target).join("package").join("package.json").exists()
}

/// The anvil binary inside an installed devnet directory.
pub fn anvil_bin(dir: &Path) -> PathBuf {
    dir.join("anvil").join("package").join("bin").join("anvil")
}

/// Creation bytecode of `contract` from `package` (`ethregistrar` or `resolver`).
pub fn bytecode(dir: &Path, package: &str, contract: &str) -> Result<Vec<u8>, DevnetError> {
    let path = dir.join(package).join("package/build/contracts").join(format!("{contract}.json"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| DevnetError::Artifact(contract.into(), e.to_string()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| DevnetError::Artifact(contract.into(), e.to_string()))?;
    let hex_code = json["bytecode"]
        .as_str()
        .ok_or_else(|| DevnetError::Artifact(contract.into(), "no bytecode".into()))?;
    let code = hex::decode(hex_code.trim_start_matches("0x"))
        .map_err(|e| DevnetError::Artifact(contract.into(), e.to_string()))?;
    if code.is_empty() {
        return Err(DevnetError::Artifact(
            contract.into(),
            "empty bytecode (abstract contract)".into(),
        ));
    }
    Ok(code)
}
