//! Commits carry their proof (`commit_trailers`): the prepare-commit-msg wrapper adds
//! `Waymark-Task`, `Waymark-Receipt` and `Waymark-Trace` trailers, and `trace --verify`
//! checks the ledger against the heads anchored in git history, without the key.

use serde_json::Value;
use sha2::{Digest, Sha256};
use util::Project;

mod util;

const LEDGER: &str = ".orchestration/agent_trace.jsonl";

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A project with the git hooks installed (and `commit_trailers` set to `on`), a file
/// written through a hook event (a trace record, a task) and a passing `waymark validate`
/// of the work tree as it is.
fn project(on: bool) -> Project {
    let p = Project::new();
    install_hooks(&p, on);
    p.hook("PostToolUse", &p.write_event("a.txt", "one\n"));
    p.waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    p
}

/// `commit_trailers` set to `on`, then `waymark git-hooks install`.
fn install_hooks(p: &Project, on: bool) {
    let value = if on { "true" } else { "false" };
    p.waymark()
        .args(["config", "set", "commit_trailers", value])
        .assert()
        .success();
    p.waymark()
        .args(["git-hooks", "install"])
        .assert()
        .success();
}

/// Commits everything (through the installed hooks, with the project's config home); the
/// commit's message.
fn commit(p: &Project, message: &str) -> String {
    p.command("git").args(["add", "-A"]).assert().success();
    p.command("git")
        .args(["commit", "-q", "-m", message])
        .assert()
        .success();
    p.git(&["log", "-1", "--format=%B"])
}

/// On: the commit names the task, the receipt of its exact tree and the trace's head at
/// commit time; a commit of an edited tree names no receipt. Off: no trailers at all.
#[test]
fn trailers_are_added_when_on_and_absent_when_off() {
    let p = project(true);
    let receipts = p.hook_json()["receipts"].clone();
    let receipt = receipts.as_array().unwrap().last().unwrap()["receipt_id"]
        .as_str()
        .unwrap()
        .to_string();
    let task = p.hook_json()["task_id"].as_str().unwrap().to_string();
    let ledger = p.read(LEDGER);
    let lines: Vec<&str> = ledger.lines().collect();
    let message = commit(&p, "Add a");
    assert!(
        message.contains(&format!("Waymark-Task: {task}")),
        "{message}"
    );
    assert!(
        message.contains(&format!("Waymark-Receipt: {receipt}")),
        "{message}"
    );
    let anchor = format!(
        "Waymark-Trace: {} {}",
        lines.len(),
        sha256(lines.last().unwrap())
    );
    assert!(message.contains(&anchor), "{message}");

    p.write("a.txt", "edited after the validation\n");
    let message = commit(&p, "Edit a");
    assert!(message.contains("Waymark-Task: "), "{message}");
    assert!(!message.contains("Waymark-Receipt"), "{message}");

    let off = project(false);
    let message = commit(&off, "Add a");
    assert!(!message.contains("Waymark-"), "{message}");
}

/// A prepare-commit-msg hook that was there runs first and keeps its part of the message;
/// one that refuses the commit still refuses it; with the guard set, waymark adds nothing.
#[test]
fn a_foreign_prepare_commit_msg_hook_is_chained() {
    let p = Project::new();
    let hook = p.path(".git/hooks/prepare-commit-msg");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'Signed-off-by: someone' >> \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    install_hooks(&p, true);
    assert!(
        p.path(".git/hooks/prepare-commit-msg.waymark-orig")
            .exists()
    );
    p.hook("PostToolUse", &p.write_event("a.txt", "one\n"));
    let message = commit(&p, "Add a");
    assert!(message.contains("Signed-off-by: someone"), "{message}");
    assert!(message.contains("Waymark-Task: "), "{message}");

    p.write("b.txt", "two\n");
    p.command("git").args(["add", "-A"]).assert().success();
    p.command("git")
        .env("WAYMARK_GIT_HOOK", "1")
        .args(["commit", "-q", "-m", "Add b"])
        .assert()
        .success();
    let message = p.git(&["log", "-1", "--format=%B"]);
    assert!(!message.contains("Waymark-"), "{message}");

    let refuse = p.path(".git/hooks/prepare-commit-msg.waymark-orig");
    std::fs::write(&refuse, "#!/bin/sh\nexit 1\n").unwrap();
    p.write("c.txt", "three\n");
    p.command("git").args(["add", "-A"]).assert().success();
    p.command("git")
        .args(["commit", "-q", "-m", "Add c"])
        .assert()
        .failure();
}

/// After a commit anchored the trace's head, rewriting the ledger before that line (and
/// re-chaining it so that the chain holds) fails `trace --verify`, with the key and the
/// local head gone: git history alone catches it.
#[test]
fn trace_verify_fails_after_the_ledger_is_rewritten_before_an_anchored_commit() {
    let p = project(true);
    p.hook("PostToolUse", &p.write_event("b.txt", "two\n"));
    commit(&p, "Add a and b");
    let out = p.waymark().args(["trace", "--verify"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("anchors: the ledger holds the heads 1 commit anchor"),
        "{said}"
    );

    let ledger = p.read(LEDGER);
    let mut lines: Vec<String> = ledger.lines().map(str::to_string).collect();
    let mut first: Value = serde_json::from_str(&lines[0]).unwrap();
    first["timestamp"] = "2020-01-01T00:00:00Z".into();
    lines[0] = first.to_string();
    p.write(LEDGER, &chained(&lines));
    std::fs::remove_file(p.path(".orchestration/trace.head")).unwrap();
    std::fs::remove_dir_all(p.config.path().join("waymark")).unwrap();

    let out = p.waymark().args(["trace", "--verify"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("chain intact"), "{said}");
    assert!(said.contains("anchor BROKEN: commit "), "{said}");
}

/// `lines` with every line after the first naming the one before it anew: a chain that
/// holds, whatever was changed.
fn chained(lines: &[String]) -> String {
    let mut out = vec![lines[0].clone()];
    for l in &lines[1..] {
        let mut v: Value = serde_json::from_str(l).unwrap();
        v["metadata"]["waymark"]["prev"] = sha256(out.last().unwrap()).into();
        out.push(v.to_string());
    }
    out.join("\n") + "\n"
}
