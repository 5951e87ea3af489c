//! The two process-level facilities tier1 needs from libc: killing a command target's whole
//! process group (its children included), and turning SIGINT/SIGTERM into a cancellation request
//! that long-running binaries observe at safe points (the harness between samples, the job chain
//! between steps) so that they stop cleanly: children killed, the run recorded as cancelled, no
//! work directory left behind. A second signal of the same kind ends the process at once.
#![allow(unsafe_code)] // kill(2) and sigaction(2) are libc calls; each block says why.

use std::sync::atomic::{AtomicI32, Ordering};

/// The termination signal received, 0 while none.
static REQUESTED: AtomicI32 = AtomicI32::new(0);

/// Send SIGKILL to every process of group `pgid` (a child started with `process_group(0)` leads
/// a group whose id is its pid). Returns true when at least one process received it.
pub fn kill_group(pgid: u32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if pgid <= 1 {
        return false; // never the caller's group, init, or "every process"
    }
    // SAFETY: kill(2) with a negative pid signals the process group -pid; it touches no memory.
    unsafe { libc::kill(-pgid, libc::SIGKILL) == 0 }
}

/// True while a process with id `pid` exists (a zombie not yet reaped included); false once it is
/// gone. Another user's process counts as existing.
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists; it sends nothing and
    // touches no memory.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

extern "C" fn on_termination(signal: libc::c_int) {
    // Only async-signal-safe work here: a second signal of a kind restores the default action
    // (set by SA_RESETHAND), so it terminates the process.
    REQUESTED.store(signal, Ordering::SeqCst);
}

/// Turn the first SIGINT or SIGTERM into a cancellation request ([`requested`]) instead of
/// termination. Call once, early, in binaries that can stop cleanly.
pub fn install_termination_handler() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; we set a handler
        // that only stores into an atomic, which is async-signal-safe; sigaction reads the struct
        // and writes no memory we pass (the old action pointer is null).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_termination as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The termination signal received since [`install_termination_handler`], if any.
pub fn requested() -> Option<Cancelled> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(Cancelled { signal: s }),
    }
}

/// A cancellation request by signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled {
    /// The signal number.
    pub signal: i32,
}

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.signal {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            _ => "a signal",
        };
        write!(f, "cancelled by {name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn killing_a_group_reaches_its_members() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(kill_group(child.id()));
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(!kill_group(1) && !kill_group(0));
    }

    #[test]
    fn a_reaped_process_is_not_alive() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!alive(pid), "{pid} was reaped");
        assert!(!alive(0));
    }
}
