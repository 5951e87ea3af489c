//! Protected promotion (placeholder).
