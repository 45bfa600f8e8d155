//! Installs the GraphiQL playground's pinned npm packages (`src/http/playground/package.json`
//! and its lock file) into the build directory and copies the production builds the binary
//! embeds. Nothing is fetched at run time: the playground works without network access.
//!
//! Without npm, or when the registry cannot be reached, the build goes on with a warning and
//! `GET /graphql` explains that the playground was not built in.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The files the binary embeds, and where each comes from under `node_modules`.
const ASSETS: [(&str, &str); 4] = [
    ("react.production.min.js", "react/umd/react.production.min.js"),
    ("react-dom.production.min.js", "react-dom/umd/react-dom.production.min.js"),
    ("graphiql.min.js", "graphiql/dist/index.umd.js"),
    ("graphiql.min.css", "graphiql/graphiql.min.css"),
];

fn install(source: &Path, target: &Path) -> Result<(), String> {
    std::fs::create_dir_all(target).map_err(|e| e.to_string())?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(source.join(file), target.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    let status = Command::new("npm")
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(target)
        .status()
        .map_err(|e| format!("npm: {e}"))?;
    if !status.success() {
        return Err(format!("npm ci exited with {status}"));
    }
    Ok(())
}

fn main() {
    let source = PathBuf::from("src/http/playground");
    for file in ["package.json", "package-lock.json"] {
        println!("cargo:rerun-if-changed={}", source.join(file).display());
    }
    println!("cargo::rustc-check-cfg=cfg(playground)");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = out.join("playground");
    let modules = target.join("node_modules");
    let present = || ASSETS.iter().all(|(_, from)| modules.join(from).is_file());
    if !present()
        && let Err(err) = install(&source, &target)
    {
        println!(
            "cargo:warning=the GraphiQL playground is not built in ({err}); install Node.js and npm and build again"
        );
        return;
    }
    for (name, from) in ASSETS {
        if let Err(err) = std::fs::copy(modules.join(from), out.join(name)) {
            println!("cargo:warning=the GraphiQL playground is not built in ({from}: {err})");
            return;
        }
    }
    println!("cargo:rustc-cfg=playground");
}
