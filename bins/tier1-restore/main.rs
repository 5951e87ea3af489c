//! `tier1-restore`: not implemented yet.

fn main() -> std::process::ExitCode {
    eprintln!("tier1-restore: not implemented yet");
    std::process::ExitCode::from(10)
}
