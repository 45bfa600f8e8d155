//! [`set_on_all_tcp_sockets`]: `TCP_NODELAY` for the PostgreSQL connections.
//!
//! sqlx 0.9 opens PostgreSQL connections without `TCP_NODELAY`. A statement bigger than one
//! TCP segment then ends in a small segment that Nagle's algorithm holds back until the
//! server acknowledges the previous one, and the server delays that acknowledgement by up to
//! 40 ms: every multi-row upsert paid 40 ms. A backfill over TCP ran at 3.6k events/s against
//! 12.7k over the Unix socket (BENCHMARKS.md). sqlx exposes no socket option and no file
//! descriptor, so after each new connection every TCP socket of the process gets
//! `TCP_NODELAY`; that is the right setting for all of them (the HTTP server and clients set
//! it already: request/response protocols gain nothing from Nagle).

use std::os::fd::{BorrowedFd, RawFd};

/// Sets `TCP_NODELAY` on every TCP socket this process has open; returns how many took it.
/// Descriptors that are not TCP sockets refuse the option and are skipped.
pub fn set_on_all_tcp_sockets() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    let mut set = 0;
    for entry in entries.flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<RawFd>().ok()) else {
            continue;
        };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        if !is_socket {
            continue;
        }
        // SAFETY: `fd` was open when listed and is only borrowed for one setsockopt call. If
        // another thread closed it meanwhile, the call fails (EBADF) or, should the number be
        // reused at once, sets TCP_NODELAY on that new descriptor, which is equally harmless;
        // nothing is closed or read through the borrow.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        if socket2::SockRef::from(&borrowed).set_tcp_nodelay(true).is_ok() {
            set += 1;
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_sockets_get_nodelay_and_others_are_skipped() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let client =
            std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        client.set_nodelay(false).expect("nodelay off");
        let _udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
        assert!(set_on_all_tcp_sockets() >= 2, "the listener and the client are TCP sockets");
        assert!(client.nodelay().expect("read nodelay"));
    }
}
