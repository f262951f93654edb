//! A progress bar on stderr while indexing (terminals only), and what
//! Ctrl-C means to `ken index`: before the snapshot is searchable it stops
//! the run (what is written stays; the next run resumes); once it is
//! searchable, history and blame finish and the embedding stops, keeping
//! what is embedded; a second Ctrl-C ends the process at once.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ken_engine::EmbedProgress;
use ken_engine::Progress;

pub struct Bar {
    bar: Option<ProgressBar>,
    /// Ctrl-C presses since `watch_interrupts` (none without it).
    interrupts: Option<&'static AtomicUsize>,
    /// The snapshot is searchable: Ctrl-C no longer stops the run.
    searchable: AtomicBool,
}

/// Ctrl-C presses seen by the handler `watch_interrupts` installs.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

impl Bar {
    /// Count Ctrl-C instead of dying on the first: the run reads the count
    /// at its next batch boundary (see the module's comment). The second
    /// press exits at once with status 130.
    pub fn watch_interrupts(mut self) -> Bar {
        // SAFETY: the handler only touches an atomic and calls `_exit`,
        // both async-signal-safe.
        let installed = unsafe {
            signal_hook_registry::register(libc::SIGINT, || {
                if INTERRUPTS.fetch_add(1, Ordering::SeqCst) >= 1 {
                    libc::_exit(130);
                }
            })
        };
        if installed.is_ok() {
            self.interrupts = Some(&INTERRUPTS);
        }
        self
    }

    fn interrupted(&self) -> bool {
        self.interrupts
            .is_some_and(|n| n.load(Ordering::SeqCst) > 0)
    }

    /// A bar when stderr is a terminal and the user did not ask for quiet or JSON.
    pub fn new(enabled: bool) -> Bar {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr_with_hz(8));
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} files · {msg} · {per_sec} · ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Bar {
            bar,
            interrupts: None,
            searchable: AtomicBool::new(false),
        }
    }
}

impl Progress for Bar {
    fn begin(&self, files: u64, _bytes: u64) {
        if let Some(b) = &self.bar {
            b.set_length(files);
        }
    }

    fn advance(&self, files: u64, bytes: u64, chunks: u64) {
        if let Some(b) = &self.bar {
            b.set_position(files);
            b.set_message(format!("{chunks} chunks · {:.1} MB", bytes as f64 / 1e6));
        }
    }

    fn note(&self, message: &str) {
        if let Some(b) = &self.bar {
            b.println(message);
        }
    }

    fn end(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    fn searchable(&self, elapsed: Duration) {
        // from here a Ctrl-C keeps the index: history and blame finish,
        // the embedding stops at its first batch
        self.searchable.store(true, Ordering::SeqCst);
        if let Some(b) = &self.bar {
            b.println(format!(
                "  searchable after {:.1}s: `ken search` answers now (lexical, symbols, graph); \
                 history and embeddings follow{}",
                elapsed.as_secs_f64(),
                if self.interrupts.is_some() {
                    " (Ctrl-C while embedding keeps what is done; the next `ken index`, or `ken serve`/`ken worker` when it starts, finishes it)"
                } else {
                    ""
                }
            ));
        }
    }
}

impl EmbedProgress for Bar {
    fn cancelled(&self) -> bool {
        self.interrupted() && !self.searchable.load(Ordering::SeqCst)
    }

    fn stop_embedding(&self) -> bool {
        self.interrupted()
    }

    fn embed_begin(&self, todo: u64, cached: u64) {
        // an up-to-date run embeds without passing `searchable`
        self.searchable.store(true, Ordering::SeqCst);
        if let Some(b) = &self.bar {
            b.reset();
            b.set_length(todo);
            b.set_position(0);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} chunks embedded · {per_sec} · ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            if cached > 0 {
                b.println(format!("  {cached} chunks already embedded (cache)"));
            }
        }
    }

    fn embed_advance(&self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    fn embed_end(&self) {
        // the phase stays: a Ctrl-C from here on stops nothing but embedding
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
