//! Progress on a terminal: one bar per variant (`<target> <variant>`, warm-up and timed iterations),
//! drawn on stderr only when it is a terminal and not inside GitHub Actions (which gets log groups
//! instead). Ticks happen after a sample is taken, never inside the timed window.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

fn enabled() -> bool {
    std::io::stderr().is_terminal() && !crate::gha::in_actions()
}

/// The bar of one variant; cleared when dropped.
#[derive(Debug)]
pub struct VariantProgress(bool);

/// Start the bar of `variant` of `target` with `total` runs (warm-up plus timed).
pub fn variant(target: &str, variant: &str, total: u64) -> VariantProgress {
    if !enabled() {
        return VariantProgress(false);
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{prefix:>24} {wide_bar} {pos}/{len} {elapsed}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(format!("{target} {variant}"));
    *BAR.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    VariantProgress(true)
}

/// One more run of the current variant.
pub fn tick() {
    if let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        bar.inc(1);
    }
}

impl Drop for VariantProgress {
    fn drop(&mut self) {
        if self.0
            && let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).take()
        {
            bar.finish_and_clear();
        }
    }
}
