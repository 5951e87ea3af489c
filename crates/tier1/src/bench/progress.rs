//! Progress on a terminal: one bar per target (warm-up executions, then timed rounds; the bar
//! grows while rounds are added for precision), drawn on stderr only when it is a terminal and not
//! inside GitHub Actions (which gets log groups instead). Ticks happen after a sample is taken,
//! never inside the timed window.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

fn enabled() -> bool {
    std::io::stderr().is_terminal() && !crate::gha::in_actions()
}

/// The bar of one target; cleared when dropped.
#[derive(Debug)]
pub(crate) struct TargetProgress(bool);

/// Start the bar of `target` with `total` expected steps (warm-ups plus the minimum rounds).
pub(crate) fn target(target: &str, total: u64) -> TargetProgress {
    if !enabled() {
        return TargetProgress(false);
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{prefix:>24} {wide_bar} {pos}/{len} {elapsed}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(target.to_string());
    *BAR.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    TargetProgress(true)
}

/// One more step of the current target (the bar grows when rounds run past the minimum).
pub(crate) fn tick() {
    if let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        bar.inc(1);
        if bar.length().is_some_and(|len| bar.position() >= len) {
            bar.set_length(bar.position() + 1);
        }
    }
}

impl Drop for TargetProgress {
    fn drop(&mut self) {
        if self.0
            && let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).take()
        {
            bar.finish_and_clear();
        }
    }
}
