//! [`Anvil`]: an anvil process on a free loopback port, killed when dropped.
//!
//! Flags: `--prune-history N` keeps recent states in memory instead of writing gigabytes of
//! state files under `~/.foundry` (N is large enough for historical `eth_call`s of a test
//! chain); `--block-base-fee-per-gas 0` keeps zero-priced transactions valid however full the
//! blocks get; `--no-mining` lets the driver put many transactions in one block.

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use alloy::providers::{Provider, RootProvider};

use super::{DevnetError, install};

/// States kept in memory for historical calls.
pub const PRUNE_HISTORY_STATES: u64 = 100_000;
/// Block gas limit: room for hundreds of registrations per block.
pub const BLOCK_GAS_LIMIT: u64 = 1_000_000_000;

/// A running anvil.
#[derive(Debug)]
pub struct Anvil {
    child: Child,
    /// Its JSON-RPC URL.
    pub url: String,
    /// Its chain id.
    pub chain_id: u64,
}

/// Makes the kernel stop the node when the thread that started it ends, so that a process
/// that dies without running destructors (killed, or aborted) leaves no node behind.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn die_with_parent(_: &mut Command) {}

impl Anvil {
    /// Installs anvil if needed and starts it with chain id `chain_id`.
    pub async fn spawn(chain_id: u64) -> Result<Self, DevnetError> {
        Self::spawn_with_history(chain_id, PRUNE_HISTORY_STATES).await
    }

    /// Like [`Anvil::spawn`], keeping only `states` historical states: a node that cannot
    /// answer `eth_call` at older blocks, like most non-archive nodes.
    pub async fn spawn_with_history(chain_id: u64, states: u64) -> Result<Self, DevnetError> {
        let dir = install::ensure_installed()?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| DevnetError::Anvil(e.to_string()))?
            .port();
        let mut command = Command::new(install::anvil_bin(&dir));
        command
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--chain-id", &chain_id.to_string()])
            .args(["--prune-history", &states.to_string()])
            .args(["--block-base-fee-per-gas", "0", "--gas-limit", &BLOCK_GAS_LIMIT.to_string()])
            .args(["--no-mining", "--silent"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut command);
        let child =
            command.spawn().map_err(|e| DevnetError::Anvil(format!("cannot start: {e}")))?;
        let anvil = Self { child, url: format!("http://127.0.0.1:{port}"), chain_id };
        let provider = anvil.provider();
        let deadline = Instant::now() + Duration::from_secs(30);
        while provider.get_chain_id().await.is_err() {
            if Instant::now() > deadline {
                return Err(DevnetError::Anvil("did not answer within 30 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(anvil)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A provider for it.
    pub fn provider(&self) -> RootProvider {
        ensemble::rpc::client::install_tls_provider();
        RootProvider::new_http(self.url.parse().expect("anvil url is a valid url"))
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
