//! `BENCHMARKS.md` rows: results are appended under their table, never replaced, so the file
//! keeps the history of every measurement with the command that produced it.

use std::path::Path;

use super::{BenchError, query::QueryTiming};

/// The table header of query results.
pub const QUERY_HEADER: &str = "| date | engine | domains | query | runs | p50 ms | p99 ms | command |\n|---|---|---|---|---|---|---|---|\n";

/// Header of the resolution rows.
pub const RESOLVE_HEADER: &str = "| date | engine | names | case | source | runs | p50 ms | p99 ms | command |\n|---|---|---|---|---|---|---|---|---|\n";

/// Markdown rows of resolution timings.
pub fn resolve_rows(
    date: &str,
    engine: &str,
    names: u64,
    command: &str,
    timings: &[super::resolve::ResolveTiming],
) -> String {
    timings
        .iter()
        .map(|t| {
            format!(
                "| {date} | {engine} | {names} | {} | {} | {} | {} | {} | `{command}` |\n",
                t.case,
                t.source,
                t.runs,
                ms3(t.p50),
                ms3(t.p99)
            )
        })
        .collect()
}

fn ms3(d: std::time::Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

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

/// Appends `rows` to the table under `header` in `path` (after its last row), or, when the
/// file has no such table yet, adds the table at the end. Existing rows are never touched.
pub fn append(path: &Path, header: &str, rows: &str) -> Result<(), BenchError> {
    let err = |source| BenchError::Report { path: path.display().to_string(), source };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(err(e)),
    };
    std::fs::write(path, insert_rows(&text, header, rows)).map_err(err)
}

/// `text` with `rows` added at the end of the table that starts with `header`.
fn insert_rows(text: &str, header: &str, rows: &str) -> String {
    let Some(start) = text.find(header) else {
        let sep = if text.is_empty() || text.ends_with("\n\n") { "" } else { "\n" };
        return format!("{text}{sep}{header}{rows}");
    };
    let body = start + header.len();
    // The table ends at the first line that is not a row.
    let end = text[body..]
        .split_inclusive('\n')
        .take_while(|line| line.starts_with('|'))
        .map(str::len)
        .sum::<usize>()
        + body;
    format!("{}{rows}{}", &text[..end], &text[end..])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_go_under_their_table_and_keep_the_old_ones() {
        let header = "| a | b |\n|---|---|\n";
        let text = format!("# Bench\n\n{header}| 1 | 2 |\n\n## Other\n\n| x |\n");
        let out = insert_rows(&text, header, "| 3 | 4 |\n");
        assert_eq!(out, format!("# Bench\n\n{header}| 1 | 2 |\n| 3 | 4 |\n\n## Other\n\n| x |\n"));
        assert_eq!(
            insert_rows("# Bench\n", header, "| 5 | 6 |\n"),
            format!("# Bench\n\n{header}| 5 | 6 |\n")
        );
    }
}
