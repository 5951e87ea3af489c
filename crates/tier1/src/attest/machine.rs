//! What the machine itself shows to the attesting process, as opposed to what the runner reports
//! in `RUNNER_*` or what the jobs API says the job asked for: the operating system and the
//! architecture this very process executes on (a binary built for `x86_64-unknown-linux-gnu` runs
//! only where the kernel is Linux and the CPU executes x86-64 code).

use super::Check;

/// The operating system and architecture of the running process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Machine {
    /// `std::env::consts::OS` (`linux`, ...).
    pub(crate) os: String,
    /// `std::env::consts::ARCH` (`x86_64`, `aarch64`, ...).
    pub(crate) arch: String,
}

/// The OS a canonical run needs.
pub(crate) const REQUIRED_OS: &str = "linux";
/// The architecture a canonical run needs.
pub(crate) const REQUIRED_ARCH: &str = "x86_64";

impl Machine {
    /// This process's machine.
    pub(crate) fn this() -> Self {
        Machine {
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }

    /// The checks `machine_os` and `machine_arch`.
    pub(crate) fn checks(&self) -> [Check; 2] {
        [
            super::record::check(
                "machine_os",
                self.os == REQUIRED_OS,
                REQUIRED_OS,
                self.os.as_str(),
            ),
            super::record::check(
                "machine_arch",
                self.arch == REQUIRED_ARCH,
                REQUIRED_ARCH,
                self.arch.as_str(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_architecture_fails_its_check() {
        let m = Machine {
            os: "linux".into(),
            arch: "aarch64".into(),
        };
        let [os, arch] = m.checks();
        assert!(os.passed);
        assert!(!arch.passed);
        assert_eq!(
            (arch.expected.as_str(), arch.found.as_str()),
            ("x86_64", "aarch64")
        );
    }
}
