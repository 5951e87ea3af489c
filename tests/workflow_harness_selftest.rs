//! The workflow harness's own tests (tests/workflows/test, `node --test`): file commands, status
//! functions and coercion, concurrency queues, parsing every workflow and action.yml, the step
//! runner and the refusal of actions without an adapter. Skips as the scenarios do.

#[path = "support/fake_github.rs"]
mod fake_github;
#[path = "support/nightly_repo.rs"]
mod nightly_repo;
#[path = "support/workflow_adapters.rs"]
mod workflow_adapters;
#[path = "support/workflow_harness.rs"]
mod workflow_harness;

use std::process::Command;

#[test]
fn the_node_harness_passes_its_own_tests() {
    if !workflow_harness::ready_or_skip("the_node_harness_passes_its_own_tests") {
        return;
    }
    let out = Command::new("node")
        .current_dir(workflow_harness::node_dir())
        .args(["--import", "./harness/register.mjs", "--test", "test/"])
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("# fail 0"), "{text}");
    assert!(!text.contains("# pass 0\n"), "no test ran: {text}");
}
