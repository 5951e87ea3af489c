//! Exit codes by name: `exit_code(Exit::Gate)` is the number `ExitStatus::code` reports for
//! `tier1::exit::Exit::Gate`, so a test says which outcome it expects, not which number.

pub use tier1::exit::Exit;

/// The process exit status of `e`, as `std::process::ExitStatus::code` reports it.
pub const fn exit_code(e: Exit) -> i32 {
    e.code() as i32
}
