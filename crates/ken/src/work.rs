//! Engine work, off the async threads and at most a few at a time.
//!
//! Search and the like are CPU-bound: run 64 of them at once on two cores
//! and they only take turns, each holding its memory and its SQLite
//! connection meanwhile. So requests queue here (first come, first served)
//! for one of a few permits, about one per core; answers that wait on a
//! language model or a job queue do not take one.

use std::sync::Arc;

use ken_engine::{Engine, EngineError, Principal};
use tokio::sync::Semaphore;

use crate::calls::Call;

#[derive(Clone)]
pub struct Workers {
    permits: Arc<Semaphore>,
}

/// Why work gave no answer.
pub enum Failed {
    Engine(EngineError),
    /// The work panicked or was cancelled.
    Crashed,
}

impl Workers {
    pub fn new(permits: usize) -> Workers {
        Workers {
            permits: Arc::new(Semaphore::new(permits.max(1))),
        }
    }

    /// One permit per core, and one more so a core is never idle between two.
    pub fn for_machine() -> Workers {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        Workers::new(cores + 1)
    }

    /// Run CPU-bound engine work when a permit is free.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, Failed> {
        let Ok(_permit) = self.permits.clone().acquire_owned().await else {
            return Err(Failed::Crashed);
        };
        Workers::run_unlimited(f).await
    }

    /// Answer one capability's request for `who`, in its wire shape.
    pub async fn call<C: Call>(
        &self,
        engine: Arc<Engine>,
        who: Principal,
        call: C,
    ) -> Result<C::Wire, Failed> {
        let waits = call.waits();
        let work = move || call.answer(&engine, &who);
        if waits {
            Workers::run_unlimited(work).await
        } else {
            self.run(work).await
        }
    }

    /// Run engine work that mostly waits (a model's answer), without a permit.
    pub async fn run_unlimited<T: Send + 'static>(
        f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, Failed> {
        match tokio::task::spawn_blocking(f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(Failed::Engine(e)),
            Err(_) => Err(Failed::Crashed),
        }
    }
}
