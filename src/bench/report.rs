//! `BENCHMARKS.md` rows: results are appended under their section, never replaced, so the file
//! keeps the history of every measurement with the command that produced it.

use std::{io::Write, path::Path};

use super::{BenchError, query::QueryTiming};

/// The table header of query results.
pub const QUERY_HEADER: &str = "| date | engine | domains | query | runs | p50 ms | p99 ms | command |\n|---|---|---|---|---|---|---|---|\n";

fn ms(d: std::time::Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// Markdown rows of query timings.
pub fn query_rows(
    date: &str,
    engine: &str,
    domains: u64,
    command: &str,
    timings: &[QueryTiming],
) -> String {
    timings
        .iter()
        .map(|t| {
            format!(
                "| {date} | {engine} | {domains} | {} | {} | {} | {} | `{command}` |\n",
                t.name,
                t.runs,
                ms(t.p50),
                ms(t.p99)
            )
        })
        .collect()
}

/// Appends `rows` to `path`, writing `header` first if the file is new.
pub fn append(path: &Path, header: &str, rows: &str) -> Result<(), BenchError> {
    let err = |source| BenchError::Report { path: path.display().to_string(), source };
    let fresh = !path.exists();
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(err)?;
    if fresh {
        file.write_all(header.as_bytes()).map_err(err)?;
    }
    file.write_all(rows.as_bytes()).map_err(err)
}

/// Today's UTC date, `YYYY-MM-DD` (civil-from-days, so no date crate is needed for one line).
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
