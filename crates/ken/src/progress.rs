//! A progress bar on stderr while indexing (terminals only).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ken_engine::EmbedProgress;
use ken_engine::Progress;

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
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
        Bar { bar }
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
}

impl EmbedProgress for Bar {
    fn embed_begin(&self, todo: u64, cached: u64) {
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
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
