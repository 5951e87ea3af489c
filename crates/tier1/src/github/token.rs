//! The bearer token: registered for redaction when wrapped, never shown by `Debug`.

use std::fmt;

/// A bearer token. Its `Debug` and `Display` never show the value.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wrap a token value; from now on it is redacted from every message
    /// (`crate::text::register_secret`), even one a server echoes back.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        crate::text::register_secret(&value);
        Token(value)
    }
    /// The secret value, for the `Authorization` header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}
