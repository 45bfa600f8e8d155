//! [`Driver`]: sends transactions from anvil's unlocked accounts and mines them in batches.
//!
//! Automine is off: [`Driver::send`] only queues a transaction, [`Driver::mine`] seals one
//! block with everything queued and checks every receipt. Nonces are tracked here because the
//! node's pending view is not needed. Transactions that depend on each other across senders go
//! in separate blocks: anvil orders equal-priced transactions of different senders freely.

use std::collections::HashMap;

use alloy::{
    primitives::{Address, B256, Bytes, U256},
    providers::{Provider, RootProvider},
    rpc::types::TransactionRequest,
    sol_types::SolCall,
};

use super::DevnetError;

/// Gas limit of a harness call: far above any ENS call with short names, far below the block
/// limit.
pub const TX_GAS: u64 = 3_000_000;
/// Further gas a call gets per byte of calldata: the controllers walk a name byte by byte
/// (its length in characters, its commitment, its event), so a long name costs in proportion.
pub const TX_GAS_PER_BYTE: u64 = 500;
/// Gas limit of a deployment (code deposit alone is 200 gas per byte).
pub const DEPLOY_GAS: u64 = 30_000_000;

/// Transaction sender and block miner for a devnet.
#[derive(Debug)]
pub struct Driver {
    provider: RootProvider,
    nonces: HashMap<Address, u64>,
    pending: Vec<(B256, String)>,
    /// anvil's unlocked dev accounts; `accounts[0]` deploys.
    pub accounts: Vec<Address>,
}

impl Driver {
    /// A driver over `provider`.
    pub async fn new(provider: RootProvider) -> Result<Self, DevnetError> {
        let accounts = provider.get_accounts().await.map_err(DevnetError::rpc("eth_accounts"))?;
        Ok(Self { provider, nonces: HashMap::new(), pending: Vec::new(), accounts })
    }

    /// The provider.
    pub fn provider(&self) -> &RootProvider {
        &self.provider
    }

    async fn next_nonce(&mut self, from: Address) -> Result<u64, DevnetError> {
        if let Some(n) = self.nonces.get_mut(&from) {
            *n += 1;
            return Ok(*n);
        }
        let n = self
            .provider
            .get_transaction_count(from)
            .pending()
            .await
            .map_err(DevnetError::rpc("eth_getTransactionCount"))?;
        self.nonces.insert(from, n);
        Ok(n)
    }

    /// Queues a transaction (`to: None` deploys `data`).
    pub async fn send(
        &mut self,
        from: Address,
        to: Option<Address>,
        data: Vec<u8>,
        value: U256,
        what: impl Into<String>,
    ) -> Result<B256, DevnetError> {
        let nonce = self.next_nonce(from).await?;
        let gas = match to {
            Some(_) => TX_GAS + TX_GAS_PER_BYTE * data.len() as u64,
            None => DEPLOY_GAS,
        };
        let mut tx = TransactionRequest::default()
            .from(from)
            .nonce(nonce)
            .gas_limit(gas)
            .gas_price(0)
            .value(value)
            .input(Bytes::from(data).into());
        if let Some(to) = to {
            tx = tx.to(to);
        }
        let hash: B256 = self
            .provider
            .raw_request("eth_sendTransaction".into(), (tx,))
            .await
            .map_err(DevnetError::rpc("eth_sendTransaction"))?;
        self.pending.push((hash, what.into()));
        Ok(hash)
    }

    /// Queues a contract call.
    pub async fn call_tx<C: SolCall>(
        &mut self,
        from: Address,
        to: Address,
        call: C,
        what: impl Into<String>,
    ) -> Result<B256, DevnetError> {
        self.send(from, Some(to), call.abi_encode(), U256::ZERO, what).await
    }

    /// Mines one block with everything queued; fails if any transaction reverted.
    pub async fn mine(&mut self) -> Result<u64, DevnetError> {
        let _: serde_json::Value = self
            .provider
            .raw_request("evm_mine".into(), Vec::<serde_json::Value>::new())
            .await
            .map_err(DevnetError::rpc("evm_mine"))?;
        for (hash, what) in std::mem::take(&mut self.pending) {
            let receipt = self
                .provider
                .get_transaction_receipt(hash)
                .await
                .map_err(DevnetError::rpc("eth_getTransactionReceipt"))?;
            if !receipt.is_some_and(|r| r.status()) {
                return Err(DevnetError::Reverted { what, hash: format!("{hash:#x}") });
            }
        }
        self.provider.get_block_number().await.map_err(DevnetError::rpc("eth_blockNumber"))
    }

    /// Takes a snapshot of the chain (anvil `evm_snapshot`).
    pub async fn snapshot(&self) -> Result<String, DevnetError> {
        self.provider
            .raw_request("evm_snapshot".into(), Vec::<serde_json::Value>::new())
            .await
            .map_err(DevnetError::rpc("evm_snapshot"))
    }

    /// Returns the chain to `snapshot`, dropping every later block: a reorg once new blocks
    /// are mined on top. Nonces are re-read afterwards.
    pub async fn revert(&mut self, snapshot: &str) -> Result<(), DevnetError> {
        let reverted: bool = self
            .provider
            .raw_request("evm_revert".into(), (snapshot,))
            .await
            .map_err(DevnetError::rpc("evm_revert"))?;
        if !reverted {
            return Err(DevnetError::Anvil(format!("snapshot {snapshot} could not be restored")));
        }
        self.nonces.clear();
        self.pending.clear();
        Ok(())
    }

    /// Moves the clock of the next block forward.
    pub async fn increase_time(&self, seconds: u64) -> Result<(), DevnetError> {
        let _: serde_json::Value = self
            .provider
            .raw_request("evm_increaseTime".into(), (seconds,))
            .await
            .map_err(DevnetError::rpc("evm_increaseTime"))?;
        Ok(())
    }

    /// `eth_call` at the latest block.
    pub async fn read<C: SolCall>(&self, to: Address, call: C) -> Result<C::Return, DevnetError> {
        let tx = TransactionRequest::default().to(to).input(Bytes::from(call.abi_encode()).into());
        let out = self.provider.call(tx).await.map_err(DevnetError::rpc("eth_call"))?;
        C::abi_decode_returns(&out).map_err(|e| DevnetError::Rpc {
            method: "eth_call decode".into(),
            detail: e.to_string(),
        })
    }
}
