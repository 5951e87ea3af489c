//! Text that reaches people, made safe in one place: control characters (C0, DEL, C1, and the
//! bidirectional overrides that reorder what a reader sees) are refused in free-text inputs and
//! shown as visible `\u{..}` escapes everywhere else, URLs lose their userinfo, query and
//! fragment, and credentials are redacted: the value of an `Authorization` header or a `Bearer`
//! scheme, GitHub token shapes (`ghp_…`, `ghs_…`), and every secret registered with
//! [`register_secret`] (the token tier1 was given). Every error message, log line, annotation and
//! rendered page goes through here.

mod controls;
mod humans;
pub(crate) mod numbers;
mod secrets;
mod urls;

pub(crate) use controls::{check_printable, push_visible};
pub(crate) use humans::for_humans;
pub(crate) use numbers::{fmt_apart, fmt_pct, fmt_sig};
pub(crate) use secrets::{REDACTED, redact_secrets, register_secret};
pub(crate) use urls::redact_urls;
