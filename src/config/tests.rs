//! Loading, layering and validating configurations.

use super::*;

fn write(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

const CHAIN: &str = r#"
    [[chains]]
    id = 31337
    name = "devnet"
    contracts = [{ role = "registry", address = "0x5FbDB2315678afecb367f032d93F642f64180aa3" }]
"#;

#[test]
fn defaults_load_without_a_file() {
    let config = Config::load(None, []).unwrap();
    assert!(config.database.url.starts_with("sqlite:"));
    assert!(config.chains.is_empty());
}

#[test]
fn env_supplies_rpc_and_database() {
    let file = write(CHAIN);
    let env = [
        ("RPC_URL_31337".to_owned(), "http://127.0.0.1:1".to_owned()),
        ("DATABASE_URL".to_owned(), "postgres://x/y".to_owned()),
    ];
    let config = Config::load(Some(file.path()), env).unwrap();
    assert_eq!(config.chains[0].rpc_url.as_deref(), Some("http://127.0.0.1:1"));
    assert_eq!(config.database.url, "postgres://x/y");
}

#[test]
fn missing_rpc_is_reported_not_fatal() {
    let file = write(CHAIN);
    let config = Config::load(Some(file.path()), []).unwrap();
    let missing = config.chains_without_rpc();
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].0, crate::ChainId(31337));
    assert!(missing[0].1.contains("RPC_URL_31337"), "{}", missing[0].1);
}

#[test]
fn bridged_chains_need_a_bridge_and_bridges_survive_retain() {
    let bridged = r#"
        [[chains]]
        id = 1
        name = "mainnet"
        contracts = [{ role = "registry", address = "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e" }]
        [[chains]]
        id = 8453
        name = "base"
        managed_name = "base.eth"
        namegraph = "bridged"
        contracts = [{ role = "registry", address = "0xb94704422c2a1e396835a571837aa5ae53285a95" }]
    "#;
    let err = Config::load(Some(write(bridged).path()), []).unwrap_err().to_string();
    assert!(err.contains("[chains.bridge]"), "{err}");
    let with_bridge = format!(
        "{bridged}\n[chains.bridge]\norigin_chain = 1\norigin_registry = \"0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e\"\nresolver = \"0xde9049636f4a1dfe0a64d1bfe3155c0a14c54f31\"\n"
    );
    let mut config = Config::load(Some(write(&with_bridge).path()), []).unwrap();
    assert_eq!(config.bridges.len(), 1);
    assert_eq!(config.bridges[0].name, "base.eth");
    config.retain_chains(&[crate::ChainId(1)]).unwrap();
    assert_eq!(config.bridges.len(), 1, "the origin chain's process still knows the bridge");
}

#[test]
fn chain_ids_must_fit_a_domain_key() {
    let file = write(&CHAIN.replace("31337", "4294967296"));
    let env = [("RPC_URL_4294967296".to_owned(), "http://127.0.0.1:1".to_owned())];
    let err = Config::load(Some(file.path()), env).unwrap_err().to_string();
    assert!(err.contains("chain 4294967296") && err.contains("not supported"), "{err}");
}

#[test]
fn chain_subsets_must_exist() {
    let file = write(CHAIN);
    let env = [("RPC_URL_31337".to_owned(), "http://127.0.0.1:1".to_owned())];
    let mut config = Config::load(Some(file.path()), env).unwrap();
    let err = config.retain_chains(&[crate::ChainId(1)]).unwrap_err().to_string();
    assert!(err.contains("chain 1") && err.contains("31337"), "{err}");
    config.retain_chains(&[crate::ChainId(31337)]).unwrap();
    assert_eq!(config.chains.len(), 1);
}

#[test]
fn admin_token_comes_from_env_and_must_be_long() {
    let short = [("ENSEMBLE_ADMIN_TOKEN".to_owned(), "short".to_owned())];
    assert!(Config::load(None, short).unwrap_err().to_string().contains("ENSEMBLE_ADMIN_TOKEN"));
    let long = [("ENSEMBLE_ADMIN_TOKEN".to_owned(), "x".repeat(32))];
    let config = Config::load(None, long).unwrap();
    assert!(config.http.admin_token.is_some());
    assert!(!format!("{config:?}").contains(&"x".repeat(32)), "the token never shows in Debug");
}

#[test]
fn unknown_keys_are_rejected() {
    let file = write("[http]\nlisten = \"127.0.0.1:1\"\nlisten_typo = 1\n");
    let err = Config::load(Some(file.path()), []).unwrap_err().to_string();
    assert!(err.contains("listen_typo"), "{err}");
}

#[test]
fn shipped_configs_parse() {
    for (file, chains) in
        [("config/devnet.toml", 1), ("config/mainnet.toml", 6), ("config/sepolia.toml", 6)]
    {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let env = [("RPC_URL_1".to_owned(), "http://127.0.0.1:1".to_owned())];
        let config = Config::load(Some(&path), env).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(config.chains.len(), chains, "{file}");
    }
}
