//! [`connection_budget`]: how many HTTP connections the process may hold, so that the API can
//! never take the file descriptors the indexer needs (database connections, the SQLite file
//! and its log, RPC sockets).
//!
//! The soft descriptor limit is raised to the hard one at startup (the usual soft default,
//! 1,024, is far below what a server needs), and [`FD_RESERVE`] of them are kept back from
//! the HTTP server; once it holds the rest, it stops accepting until connections close.

/// Descriptors kept for everything that is not an HTTP connection.
pub const FD_RESERVE: u64 = 1_024;
/// Connections held at most even when descriptors are plentiful.
pub const MAX_CONNECTIONS: u64 = 25_000;

/// Raises the soft limit of open files to the hard limit; returns the limit in force.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1_024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    limit.rlim_cur
}

/// Elsewhere the limit is left as it is and assumed to be the common default.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn raise_fd_limit() -> u64 {
    1_024
}

/// Connections the HTTP server may hold with `fd_limit` descriptors: all but the reserve,
/// at least 64 (below that the process is misconfigured, and a few connections still serve
/// health checks), at most [`MAX_CONNECTIONS`].
pub fn connection_budget(fd_limit: u64) -> usize {
    fd_limit.saturating_sub(FD_RESERVE).clamp(64, MAX_CONNECTIONS) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_kept_back() {
        assert_eq!(connection_budget(20_000), 18_976);
        assert_eq!(connection_budget(1_024), 64);
        assert_eq!(connection_budget(1 << 20), MAX_CONNECTIONS as usize);
        assert!(raise_fd_limit() >= 64);
    }
}
