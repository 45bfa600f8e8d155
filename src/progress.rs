//! A progress bar per chain on the terminal: indexed block of head, events per second and ETA.
//! Drawn only when stderr is a terminal; logs go on printing above the bars.

use std::{collections::HashMap, io::IsTerminal, time::Duration};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::service::Service;

/// Refresh interval of the bars.
pub const REFRESH: Duration = Duration::from_secs(1);

/// Draws the bars until the returned task is dropped (does nothing off a terminal).
pub fn spawn(service: &Service) -> Option<actix_rt::task::JoinHandle<()>> {
    if !std::io::stderr().is_terminal() || service.chains().is_empty() {
        return None;
    }
    let chains = service.chains().clone();
    Some(actix_rt::spawn(async move {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let style =
            ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} blocks  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        let mut bars: HashMap<u64, ProgressBar> = HashMap::new();
        loop {
            for (id, addr) in &chains {
                let Ok(status) = addr.send(crate::chain::status::GetStatus).await else {
                    continue;
                };
                let bar = bars.entry(*id).or_insert_with(|| {
                    let bar = multi.add(ProgressBar::new(0));
                    bar.set_style(style.clone());
                    bar.set_prefix(status.name.clone());
                    bar
                });
                bar.set_length(status.head_block.max(1));
                bar.set_position(status.indexed_block.min(status.head_block));
                let eta = status
                    .eta_seconds
                    .map_or_else(String::new, |s| format!("ETA {}", humantime(s)));
                bar.set_message(format!(
                    "{} {:.0} ev/s {eta}",
                    status.phase, status.events_per_second
                ));
            }
            tokio::time::sleep(REFRESH).await;
        }
    }))
}

fn humantime(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}
