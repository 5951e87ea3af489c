//! The two process-level facilities tier1 needs from libc: killing a command target's whole
//! process group (its children included), and turning SIGINT/SIGTERM into a cancellation request
//! that long-running binaries observe at safe points (the harness between samples, the job chain
//! between steps) so that they stop cleanly: children killed, the run recorded as cancelled, no
//! work directory left behind. A second signal of the same kind ends the process at once. And
//! `wait_group`: waiting for such a child until a deadline or a cancellation, then killing its
//! group.
#![allow(unsafe_code)] // kill(2) and sigaction(2) are libc calls; each block says why.

use std::sync::atomic::{AtomicI32, Ordering};

/// The termination signal received, 0 while none.
static REQUESTED: AtomicI32 = AtomicI32::new(0);

/// Send SIGKILL to every process of group `pgid` (a child started with `process_group(0)` leads
/// a group whose id is its pid). Returns true when at least one process received it.
pub(crate) fn kill_group(pgid: u32) -> bool {
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
pub(crate) fn alive(pid: u32) -> bool {
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

/// Turn the first SIGINT or SIGTERM into a cancellation request (`requested`) instead of
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
pub(crate) fn requested() -> Option<Cancelled> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(Cancelled { signal: s }),
    }
}

/// A cancellation request by signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled {
    /// The signal number.
    pub(crate) signal: i32,
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

/// How waiting for a child ended when it did not exit by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The deadline passed; the child's process group was killed.
    Timeout,
    /// A cancellation was requested ([`requested`]); the child's process group was killed.
    Cancelled(Cancelled),
    /// Waiting failed.
    Io(String),
}

/// Wait for `child`, which leads its own process group (`process_group(0)`), until it exits, the
/// deadline passes or a cancellation is requested; in the last two cases its whole group is
/// killed. Whatever the child left running in its group after it exited is killed too.
pub(crate) fn wait_group(
    child: &mut std::process::Child,
    deadline: std::time::Instant,
) -> Result<std::process::ExitStatus, WaitEnd> {
    let group = child.id();
    let end = loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                kill_group(group);
                return Ok(s);
            }
            Ok(None) if std::time::Instant::now() >= deadline => break WaitEnd::Timeout,
            Ok(None) if let Some(c) = requested() => break WaitEnd::Cancelled(c),
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => break WaitEnd::Io(e.to_string()),
        }
    };
    kill_group(group);
    let _ = child.wait();
    Err(end)
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
    fn waiting_past_the_deadline_kills_the_group() {
        use std::os::unix::process::CommandExt;
        let start = std::time::Instant::now();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = start + std::time::Duration::from_millis(200);
        assert_eq!(wait_group(&mut child, deadline), Err(WaitEnd::Timeout));
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        let mut quick = std::process::Command::new("true")
            .process_group(0)
            .spawn()
            .unwrap();
        let far = std::time::Instant::now() + std::time::Duration::from_secs(30);
        assert!(wait_group(&mut quick, far).unwrap().success());
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
