//! The benchmark corpus file: a chain's blocks that carry ENS logs, as the chain would serve
//! them, in a compact binary stream.
//!
//! Only blocks with logs are stored. Every block of the corpus range (with logs or not) has a
//! hash, parent hash and timestamp derived from the header's salt, so a JSON-RPC endpoint can
//! answer for any block of the range and the chain links from block to block.
//!
//! Layout (little endian): the header (`MAGIC`, chain id, seed, first and last block, genesis
//! timestamp, block time, salt, block/tx/log counts), then per block: number, timestamp,
//! transaction count, per transaction (nonce, hash, from, to), log count, per log (transaction
//! index, address, topic count, topics, data length, data). The counts in the header are
//! written last, by seeking back, so a truncated file is detected.

use std::{
    fs::File,
    io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write},
    path::Path,
};

use alloy::{
    primitives::{Address, B256, Bytes, LogData, keccak256},
    rpc::types::Log,
};

use super::BenchError;

/// First bytes of a corpus file (format version 1).
pub const MAGIC: &[u8; 8] = b"ENSCORP1";

/// What a corpus is: its chain, range, and how its block hashes are derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorpusHeader {
    /// Chain id the logs claim.
    pub chain_id: u64,
    /// Generator seed.
    pub seed: u64,
    /// First block of the range.
    pub first_block: u64,
    /// Last block of the range.
    pub last_block: u64,
    /// Timestamp of block 0.
    pub genesis_timestamp: u64,
    /// Seconds between blocks.
    pub block_time: u64,
    /// Mixed into every block hash, so corpora of different seeds never share a hash.
    pub salt: B256,
    /// Blocks with logs.
    pub blocks: u64,
    /// Transactions.
    pub transactions: u64,
    /// Logs.
    pub logs: u64,
}

impl CorpusHeader {
    /// Hash of block `number`.
    pub fn block_hash(&self, number: u64) -> B256 {
        let mut buf = [0u8; 40];
        buf[..32].copy_from_slice(self.salt.as_slice());
        buf[32..].copy_from_slice(&number.to_be_bytes());
        keccak256(buf)
    }

    /// Timestamp of block `number`.
    pub fn timestamp(&self, number: u64) -> u64 {
        self.genesis_timestamp + number * self.block_time
    }

    /// Header facts of block `number`.
    pub fn block_info(&self, number: u64) -> ensemble::rpc::BlockInfo {
        ensemble::rpc::BlockInfo {
            number,
            hash: self.block_hash(number),
            parent_hash: self.block_hash(number.saturating_sub(1)),
            timestamp: self.timestamp(number),
        }
    }
}

/// A transaction of the corpus: a legacy call from `from` to `to`. `nonce` makes it unique;
/// `hash` is the hash of the signed transaction an endpoint serves for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorpusTx {
    /// Sender nonce (unique across the corpus).
    pub nonce: u64,
    /// Transaction hash.
    pub hash: B256,
    /// Sender.
    pub from: Address,
    /// Recipient.
    pub to: Address,
}

/// A log of the corpus; its log index is its position in the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusLog {
    /// Index of its transaction in the block.
    pub tx_index: u32,
    /// Emitting contract.
    pub address: Address,
    /// Topics and data.
    pub data: LogData,
}

/// A block with logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusBlock {
    /// Number.
    pub number: u64,
    /// Transactions, in block order.
    pub txs: Vec<CorpusTx>,
    /// Logs, in block order.
    pub logs: Vec<CorpusLog>,
}

impl CorpusBlock {
    /// The block's logs as `eth_getLogs` returns them.
    pub fn rpc_logs(&self, header: &CorpusHeader) -> Vec<Log> {
        let block_hash = header.block_hash(self.number);
        let timestamp = header.timestamp(self.number);
        self.logs
            .iter()
            .enumerate()
            .map(|(index, log)| Log {
                inner: alloy::primitives::Log { address: log.address, data: log.data.clone() },
                block_hash: Some(block_hash),
                block_number: Some(self.number),
                block_timestamp: Some(timestamp),
                transaction_hash: Some(self.txs[log.tx_index as usize].hash),
                transaction_index: Some(u64::from(log.tx_index)),
                log_index: Some(index as u64),
                removed: false,
            })
            .collect()
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> BenchError + '_ {
    move |e| BenchError::Corpus(format!("{}: {e}", path.display()))
}

/// Writes a corpus, block by block.
#[derive(Debug)]
pub struct CorpusWriter {
    out: BufWriter<File>,
    path: std::path::PathBuf,
    header: CorpusHeader,
}

impl CorpusWriter {
    /// Creates `path` for a corpus described by `header` (its counts are filled in by
    /// [`CorpusWriter::finish`]).
    pub fn create(path: &Path, header: CorpusHeader) -> Result<Self, BenchError> {
        let file = File::create(path).map_err(io(path))?;
        let mut writer = Self {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_owned(),
            header: CorpusHeader { blocks: 0, transactions: 0, logs: 0, ..header },
        };
        writer.write_header()?;
        Ok(writer)
    }

    fn write_header(&mut self) -> Result<(), BenchError> {
        let h = self.header;
        let mut buf = Vec::with_capacity(128);
        buf.extend_from_slice(MAGIC);
        for v in
            [h.chain_id, h.seed, h.first_block, h.last_block, h.genesis_timestamp, h.block_time]
        {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        buf.extend_from_slice(h.salt.as_slice());
        for v in [h.blocks, h.transactions, h.logs] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        self.out.write_all(&buf).map_err(io(&self.path))
    }

    /// Appends a block; blocks must come in increasing order and carry logs.
    pub fn block(&mut self, block: &CorpusBlock) -> Result<(), BenchError> {
        let mut buf = Vec::with_capacity(64 + block.logs.len() * 160);
        buf.extend_from_slice(&block.number.to_le_bytes());
        buf.extend_from_slice(&(block.txs.len() as u32).to_le_bytes());
        for tx in &block.txs {
            buf.extend_from_slice(&tx.nonce.to_le_bytes());
            buf.extend_from_slice(tx.hash.as_slice());
            buf.extend_from_slice(tx.from.as_slice());
            buf.extend_from_slice(tx.to.as_slice());
        }
        buf.extend_from_slice(&(block.logs.len() as u32).to_le_bytes());
        for log in &block.logs {
            buf.extend_from_slice(&log.tx_index.to_le_bytes());
            buf.extend_from_slice(log.address.as_slice());
            buf.push(log.data.topics().len() as u8);
            for topic in log.data.topics() {
                buf.extend_from_slice(topic.as_slice());
            }
            buf.extend_from_slice(&(log.data.data.len() as u32).to_le_bytes());
            buf.extend_from_slice(&log.data.data);
        }
        self.out.write_all(&buf).map_err(io(&self.path))?;
        self.header.blocks += 1;
        self.header.transactions += block.txs.len() as u64;
        self.header.logs += block.logs.len() as u64;
        Ok(())
    }

    /// Writes the last block of the range and the final counts into the header and closes
    /// the file.
    pub fn finish(mut self, last_block: u64) -> Result<CorpusHeader, BenchError> {
        self.header.last_block = last_block;
        self.out.flush().map_err(io(&self.path))?;
        self.out.seek(SeekFrom::Start(0)).map_err(io(&self.path))?;
        self.write_header()?;
        self.out.flush().map_err(io(&self.path))?;
        Ok(self.header)
    }
}

/// Reads a corpus block by block.
#[derive(Debug)]
pub struct CorpusReader {
    input: BufReader<File>,
    path: std::path::PathBuf,
    header: CorpusHeader,
    remaining: u64,
}

/// Size of the fixed header in bytes.
pub const HEADER_BYTES: u64 = 8 + 6 * 8 + 32 + 3 * 8;

struct Cursor<'a, R: Read> {
    input: &'a mut R,
}

impl<R: Read> Cursor<'_, R> {
    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut buf = [0u8; N];
        self.input.read_exact(&mut buf)?;
        Ok(buf)
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        self.bytes::<8>().map(u64::from_le_bytes)
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        self.bytes::<4>().map(u32::from_le_bytes)
    }
    fn b256(&mut self) -> std::io::Result<B256> {
        self.bytes::<32>().map(B256::from)
    }
    fn address(&mut self) -> std::io::Result<Address> {
        self.bytes::<20>().map(Address::from)
    }
}

/// Reads one block record from `input`.
pub fn read_block<R: Read>(input: &mut R) -> std::io::Result<CorpusBlock> {
    let mut cur = Cursor { input };
    let number = cur.u64()?;
    let tx_count = cur.u32()? as usize;
    let mut txs = Vec::with_capacity(tx_count);
    for _ in 0..tx_count {
        txs.push(CorpusTx {
            nonce: cur.u64()?,
            hash: cur.b256()?,
            from: cur.address()?,
            to: cur.address()?,
        });
    }
    let log_count = cur.u32()? as usize;
    let mut logs = Vec::with_capacity(log_count);
    for _ in 0..log_count {
        let tx_index = cur.u32()?;
        let address = cur.address()?;
        let [topic_count] = cur.bytes::<1>()?;
        let mut topics = Vec::with_capacity(topic_count as usize);
        for _ in 0..topic_count {
            topics.push(cur.b256()?);
        }
        let len = cur.u32()? as usize;
        let mut data = vec![0u8; len];
        cur.input.read_exact(&mut data)?;
        logs.push(CorpusLog {
            tx_index,
            address,
            data: LogData::new_unchecked(topics, Bytes::from(data)),
        });
    }
    Ok(CorpusBlock { number, txs, logs })
}

impl CorpusReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, BenchError> {
        let file = File::open(path).map_err(io(path))?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut cur = Cursor { input: &mut input };
        let magic = cur.bytes::<8>().map_err(io(path))?;
        if &magic != MAGIC {
            return Err(BenchError::Corpus(format!(
                "{}: not an Ensemble corpus (bad magic)",
                path.display()
            )));
        }
        let read = |cur: &mut Cursor<'_, _>| -> std::io::Result<CorpusHeader> {
            Ok(CorpusHeader {
                chain_id: cur.u64()?,
                seed: cur.u64()?,
                first_block: cur.u64()?,
                last_block: cur.u64()?,
                genesis_timestamp: cur.u64()?,
                block_time: cur.u64()?,
                salt: cur.b256()?,
                blocks: cur.u64()?,
                transactions: cur.u64()?,
                logs: cur.u64()?,
            })
        };
        let header = read(&mut cur).map_err(io(path))?;
        Ok(Self { input, path: path.to_owned(), header, remaining: header.blocks })
    }

    /// The corpus header.
    pub fn header(&self) -> &CorpusHeader {
        &self.header
    }

    /// The next block, or `None` after the last.
    pub fn next_block(&mut self) -> Result<Option<CorpusBlock>, BenchError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let path = self.path.clone();
        let block = read_block(&mut self.input).map_err(io(&path))?;
        if block.logs.iter().any(|l| l.tx_index as usize >= block.txs.len()) {
            return Err(BenchError::Corpus(format!(
                "{}: block {} has a log of a missing transaction",
                path.display(),
                block.number
            )));
        }
        Ok(Some(block))
    }
}

/// A corpus indexed by block number for random access: only the file offset of each block
/// with logs is held in memory, so serving a corpus costs 16 bytes per block, not the corpus.
#[derive(Debug)]
pub struct IndexedCorpus {
    /// The header.
    pub header: CorpusHeader,
    path: std::path::PathBuf,
    /// (block number, file offset) of every block with logs, in order.
    offsets: Vec<(u64, u64)>,
}

impl IndexedCorpus {
    /// Reads through `path` once to index it.
    pub fn open(path: &Path) -> Result<Self, BenchError> {
        let mut reader = CorpusReader::open(path)?;
        let header = *reader.header();
        let mut offsets = Vec::with_capacity(header.blocks as usize);
        loop {
            let offset = reader.input.stream_position().map_err(io(path))?;
            let Some(block) = reader.next_block()? else { break };
            offsets.push((block.number, offset));
        }
        Ok(Self { header, path: path.to_owned(), offsets })
    }

    /// Blocks with logs in `[from, to]`, read from the file.
    pub fn range(&self, from: u64, to: u64) -> std::io::Result<Vec<CorpusBlock>> {
        let start = self.offsets.partition_point(|(n, _)| *n < from);
        let end = self.offsets.partition_point(|(n, _)| *n <= to).max(start);
        let Some(&(_, offset)) = self.offsets.get(start) else { return Ok(Vec::new()) };
        // A file handle per read: concurrent requests must not share a file position.
        let mut input = BufReader::with_capacity(1 << 16, File::open(&self.path)?);
        input.seek(SeekFrom::Start(offset))?;
        (start..end).map(|_| read_block(&mut input)).collect()
    }

    /// The block with logs numbered `number`, if any.
    pub fn block(&self, number: u64) -> std::io::Result<Option<CorpusBlock>> {
        Ok(self.range(number, number)?.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_counts_land_in_the_header() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.bin");
        let header = CorpusHeader {
            chain_id: 1,
            seed: 7,
            first_block: 10,
            last_block: 20,
            genesis_timestamp: 1_000,
            block_time: 12,
            salt: B256::repeat_byte(3),
            blocks: 0,
            transactions: 0,
            logs: 0,
        };
        let block = CorpusBlock {
            number: 12,
            txs: vec![CorpusTx {
                nonce: 1,
                hash: B256::repeat_byte(9),
                from: Address::repeat_byte(1),
                to: Address::repeat_byte(2),
            }],
            logs: vec![CorpusLog {
                tx_index: 0,
                address: Address::repeat_byte(5),
                data: LogData::new_unchecked(
                    vec![B256::repeat_byte(6), B256::repeat_byte(7)],
                    Bytes::from(vec![1, 2, 3]),
                ),
            }],
        };
        let mut writer = CorpusWriter::create(&path, header).expect("create");
        writer.block(&block).expect("write");
        let written = writer.finish(20).expect("finish");
        assert_eq!((written.blocks, written.transactions, written.logs), (1, 1, 1));

        let mut reader = CorpusReader::open(&path).expect("open");
        assert_eq!(*reader.header(), written);
        assert_eq!(reader.next_block().expect("read"), Some(block.clone()));
        assert_eq!(reader.next_block().expect("end"), None);

        let logs = block.rpc_logs(&written);
        assert_eq!(logs[0].block_hash, Some(written.block_hash(12)));
        assert_eq!(logs[0].transaction_hash, Some(B256::repeat_byte(9)));
        assert_eq!(written.block_info(12).parent_hash, written.block_info(11).hash);
    }

    #[test]
    fn a_file_that_is_not_a_corpus_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.bin");
        std::fs::write(&path, b"not a corpus at all, just text").expect("write");
        let err = CorpusReader::open(&path).expect_err("refused");
        assert!(err.to_string().contains("bad magic"), "{err}");
    }
}
