//! Logging to stderr: the subscriber that renders every field through `crate::text::for_humans`,
//! and setting it up (with the TLS provider) at a binary's start.

use tracing::Subscriber;

/// The log subscriber: fields rendered through [`crate::text::for_humans`], written to `writer`.
fn subscriber<W>(filter: tracing_subscriber::EnvFilter, writer: W, ansi: bool) -> impl Subscriber
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let fields = tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let shown = format!("{value:?}");
        let shown = crate::text::for_humans(&shown);
        if field.name() == "message" {
            write!(w, "{shown}")
        } else {
            write!(w, "{}={shown}", field.name())
        }
    });
    tracing_subscriber::fmt()
        .with_writer(writer)
        .fmt_fields(tracing_subscriber::field::MakeExt::delimited(fields, " "))
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        // A log line that cannot be written is dropped: the fallback would panic on a bad stderr.
        .log_internal_errors(false)
        .finish()
}

/// Set up stderr logging (`TIER1_LOG`, default `info`) and install the rustls crypto provider.
pub fn init() {
    init_at("info");
}

/// [`init`] with another default level: `--emit-target` logs at `warn` unless `TIER1_LOG` says
/// otherwise, so a side-by-side comparison's invocations of a built-in target add no lines of
/// their own to a night's stderr.
pub fn init_at(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TIER1_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing::subscriber::set_global_default(subscriber(filter, std::io::stderr, ansi));
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn log_lines_redact_urls_and_show_control_characters() {
        let out = Captured::default();
        let sink = out.clone();
        let sub = subscriber(
            tracing_subscriber::EnvFilter::new("info"),
            move || sink.clone(),
            false,
        );
        tracing::subscriber::with_default(sub, || {
            let url = "https://user:hunter2@h.example/p?token=SEKRET#frag";
            tracing::warn!(
                url,
                "fetching https://h.example/x?sig=SIG2 for \u{1b}[2Jbob\nforged"
            );
        });
        let text = String::from_utf8(out.0.lock().expect("lock").clone()).expect("utf8");
        for leak in ["hunter2", "SEKRET", "SIG2", "frag", "\u{1b}", "\nforged"] {
            assert!(!text.contains(leak), "{leak:?} in {text:?}");
        }
        assert!(text.contains("https://h.example/x?[redacted]"), "{text}");
        assert!(
            text.contains("url=\"https://***@h.example/p?[redacted]\""),
            "{text}"
        );
        assert!(text.contains("\\u{1b}[2Jbob\\u{a}forged"), "{text}");
        assert_eq!(text.lines().count(), 1, "one event, one line: {text:?}");
    }
}
