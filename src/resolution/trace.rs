//! [`Trace`]: the steps of one resolution, kept only when the caller asked for them. Record
//! calls run concurrently, so steps are appended under a lock.

use std::sync::{Arc, Mutex};

use graphql::resolution::TraceStep;

/// Most steps kept: a hostile resolver cannot grow an answer without bound.
const MAX_STEPS: usize = 256;

/// A resolution's steps; cheap to clone, a no-op when disabled.
#[derive(Clone, Debug, Default)]
pub struct Trace(Option<Arc<Mutex<Vec<TraceStep>>>>);

impl Trace {
    /// A trace that records when `enabled`.
    pub fn new(enabled: bool) -> Self {
        Self(enabled.then(Default::default))
    }

    /// Appends a step; `detail` is built only when recording.
    pub fn step(&self, step: &str, detail: impl FnOnce() -> String) {
        if let Some(steps) = &self.0
            && let Ok(mut steps) = steps.lock()
            && steps.len() < MAX_STEPS
        {
            steps.push(TraceStep { step: step.to_owned(), detail: detail() });
        }
    }

    /// The steps so far.
    pub fn steps(&self) -> Vec<TraceStep> {
        self.0.as_ref().and_then(|s| s.lock().ok().map(|s| s.clone())).unwrap_or_default()
    }
}
