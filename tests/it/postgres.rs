//! The PostgreSQL server the suite creates its databases on, in this order:
//!
//! 1. `ENSEMBLE_TEST_POSTGRES_URL`, if set: an admin connection URL, or `private` for the
//!    private cluster below whatever else answers;
//! 2. the server at `127.0.0.1:5432`, if one answers (trust auth, user `postgres`);
//! 3. else a private cluster the suite makes and starts from the installed server binaries
//!    (`initdb` and `pg_ctl`, on `PATH` or under `/usr/lib/postgresql/<version>/bin`). Its
//!    data directory is under the target directory; every test process of a run shares it
//!    (the first one starts it, under a file lock) and later runs reuse it. It listens on
//!    127.0.0.1 only, on a port of its own. Stop it with
//!    `pg_ctl -D target/tmp/postgres/data stop`; delete the directory to start afresh.
//!
//! `initdb` refuses to run as root: as root, the cluster is made and run as the `postgres`
//! user (which the server packages create) through `runuser`, in
//! `$TMPDIR/ensemble-test-postgres`.

use std::{
    fs::{self, File},
    net::{SocketAddr, TcpStream},
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::Duration,
};

/// The server a machine runs by default.
const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Admin connection URL for creating per-test databases.
pub fn admin_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let chosen = std::env::var("ENSEMBLE_TEST_POSTGRES_URL").ok();
        if let Some(url) = chosen.clone().filter(|u| u != "private") {
            return url;
        }
        if chosen.is_none() && answers(5432) {
            return DEFAULT_URL.to_owned();
        }
        private_cluster().unwrap_or_else(|why| {
            panic!(
                "no PostgreSQL server: none at 127.0.0.1:5432, ENSEMBLE_TEST_POSTGRES_URL is \
                 unset, and a private cluster could not start: {why}. Install the PostgreSQL \
                 server (Debian: postgresql) or point ENSEMBLE_TEST_POSTGRES_URL at a server."
            )
        })
    })
    .clone()
}

fn answers(port: u16) -> bool {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok()
}

/// Starts (or finds running) the private cluster; returns its admin URL.
fn private_cluster() -> Result<String, String> {
    let as_postgres = is_root();
    // As root, somewhere the `postgres` user can reach (a home directory may be closed to it).
    let root = if as_postgres {
        std::env::temp_dir().join("ensemble-test-postgres")
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("postgres")
    };
    fs::create_dir_all(&root).map_err(|e| format!("create {}: {e}", root.display()))?;
    let lock = File::create(root.join("lock")).map_err(|e| format!("lock file: {e}"))?;
    // Held until this returns: one process makes and starts the cluster, the others wait
    // and then find it running.
    lock.lock().map_err(|e| format!("lock: {e}"))?;
    let port_file = root.join("port");
    let data = root.join("data");
    if let Some(port) = fs::read_to_string(&port_file).ok().and_then(|p| p.trim().parse().ok())
        && data.join("postmaster.pid").exists()
        && answers(port)
    {
        return Ok(url(port));
    }
    let bin = server_binaries()?;
    if as_postgres {
        // The server runs as `postgres`: it must own its directory.
        run(Command::new("chown").args(["-R", "postgres:"]).arg(&root), "chown")?;
    }
    if !data.join("PG_VERSION").exists() {
        let _ = fs::remove_dir_all(&data);
        let mut initdb = command(as_postgres, &bin.join("initdb"));
        initdb.arg("-D").arg(&data).args(["-U", "postgres", "--auth=trust", "-E", "UTF8"]);
        initdb.args(["--locale=C.UTF-8", "--no-sync"]);
        run(&mut initdb, "initdb")?;
    }
    let port = free_port()?;
    let options = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=300",
        data.display()
    );
    let mut start = command(as_postgres, &bin.join("pg_ctl"));
    start.arg("-D").arg(&data).arg("-l").arg(root.join("server.log"));
    start.args(["-w", "-t", "60", "-o", &options, "start"]);
    run(&mut start, "pg_ctl start")?;
    fs::write(&port_file, port.to_string()).map_err(|e| format!("write port: {e}"))?;
    Ok(url(port))
}

fn url(port: u16) -> String {
    format!("postgres://postgres@127.0.0.1:{port}/postgres")
}

/// The directory holding `initdb` and `pg_ctl`: the one on `PATH`, else the newest server
/// version under `/usr/lib/postgresql`.
pub fn server_binaries() -> Result<PathBuf, String> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    if let Some(dir) = on_path {
        return Ok(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| "initdb is not installed (no /usr/lib/postgresql)".to_owned())?
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| "initdb is not installed".to_owned())
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A server binary run the way this process may run it: as itself, or as `postgres` when
/// this process is root (which `initdb` and `postgres` refuse).
pub fn server_command(program: &Path) -> Command {
    command(is_root(), program)
}

/// `program`, run as `postgres` when `as_postgres`.
fn command(as_postgres: bool, program: &Path) -> Command {
    if as_postgres {
        let mut runuser = Command::new("runuser");
        runuser.args(["-u", "postgres", "--"]).arg(program);
        runuser
    } else {
        Command::new(program)
    }
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{what}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("port: {e}"))
}
