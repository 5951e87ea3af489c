//! One benchmark as a tool's output reports it: its names, its samples, or why it cannot be used.

/// One benchmark of a tool's output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    /// The name the tool prints.
    pub(crate) name: String,
    /// Another name it may be given by (pytest's `fullname`, nvbench's benchmark of one state).
    pub(crate) alias: Option<String>,
    /// Time of one execution per sample (ms), in the tool's order.
    pub(crate) samples_ms: Vec<f64>,
    /// Why the tool's result for it cannot be used.
    pub(crate) error: Option<String>,
}

impl Measured {
    pub(super) fn failed(name: String, alias: Option<String>, error: Option<String>) -> Measured {
        Measured {
            name,
            alias,
            samples_ms: Vec::new(),
            error,
        }
    }

    pub(super) fn is(&self, name: &str) -> bool {
        self.name == name || self.alias.as_deref() == Some(name)
    }
}
