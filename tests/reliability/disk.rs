//! Disk trouble: a write that fails (file-size limit, read-only state dir, a file where a
//! directory should be) → the hook exits 0, the error is logged (or said on stderr when
//! the log itself cannot be written), and the previous state is intact.
//!
//! Tests run as root, so permission bits stop nothing; the failures are made with
//! `ulimit -f` (SIGXFSZ ignored, so the write fails with EFBIG instead of killing the
//! process), with obstacles of the wrong file type, and with a read-only bind mount in a
//! user namespace where the system allows one.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::util::Project;

/// Runs `waymark hook <event>` under `ulimit -f <blocks>` (512-byte blocks).
fn hook_with_file_limit(p: &Project, event: &str, input: &Value, blocks: u64) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" hook {event}"
        ))
        .arg(bin())
        .current_dir(p.root())
        .env("CLAUDE_PROJECT_DIR", p.root())
        .env("XDG_CONFIG_HOME", p.config.path())
        .env("HOME", p.config.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    spawn_hook(cmd, input.to_string().as_bytes())
        .wait_with_output()
        .unwrap()
}

/// A task whose plan is large (120 steps), and one running step.
fn big_task(p: &Project) -> Vec<(&'static str, Value)> {
    let lines: Vec<String> = (0..120)
        .map(|i| {
            json!({"hook_event_name": "TaskCreated", "session_id": "s", "cwd": p.root(),
                   "task_id": format!("plan-{i}"), "task_subject": format!("Planned step number {i} of the big plan"),
                   "task_description": "x".repeat(100)})
            .to_string()
        })
        .collect();
    p.replay_lines(&lines);
    let events = cycle(p.root(), "s", "a", "a1");
    for (e, v) in &events[..4] {
        assert_eq!(run_hook(p, e, v).status.code(), Some(0));
    }
    events
}

fn file_len(p: &Project, rel: &str) -> u64 {
    std::fs::metadata(p.path(rel)).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn a_hook_json_write_over_the_file_size_limit_exits_0_logs_and_keeps_the_old_state() {
    let p = Project::new();
    let events = big_task(&p);
    let before = std::fs::read(p.path(".orchestration/hook.json")).unwrap();
    let plan_before = std::fs::read(p.path(".orchestration/plan.json")).unwrap();
    assert!(plan_before.len() > 16 * 1024, "{}", plan_before.len());
    // Room for the log line, not for the plan (the step's completion changes it).
    std::fs::remove_file(p.path(".orchestration/waymark.log")).ok();
    let (e, done) = &events[8];
    let out = hook_with_file_limit(&p, e, done, 16);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("File too large")
    );
    // The previous state, byte for byte; no half-written temp left.
    assert_eq!(
        std::fs::read(p.path(".orchestration/hook.json")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read(p.path(".orchestration/plan.json")).unwrap(),
        plan_before
    );
    assert!(tmp_leftovers(&p).is_empty(), "{:?}", tmp_leftovers(&p));
    // With room again, the same change goes through.
    assert_eq!(run_hook(&p, e, &again(done)).status.code(), Some(0));
    let hook = p.hook_json();
    let step = hook["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "a1")
        .unwrap();
    assert_eq!(step["status"], "completed");
}

/// Depends on the trace writer (issue 6): an append cut short by the file-size limit
/// leaves a torn line; the hook exits 0 and logs it; the next append repairs the file.
#[test]
fn a_trace_append_cut_by_the_file_size_limit_is_repaired_by_the_next_write() {
    let p = Project::new();
    let events = cycle(p.root(), "s", "a", "a1");
    for (e, v) in &events[..4] {
        assert_eq!(run_hook(&p, e, v).status.code(), Some(0));
    }
    // Grow the trace past hook.json with a few long Bash outputs.
    for i in 0..6 {
        let mut bash = events[4].1.clone();
        bash["tool_use_id"] = json!(format!("toolu_grow_{i}"));
        bash["tool_response"]["stdout"] = json!(format!("line {i}\n").repeat(150));
        assert_eq!(run_hook(&p, "PostToolUse", &bash).status.code(), Some(0));
    }
    let records = trace_records(&p).len();
    let size = file_len(&p, ".orchestration/agent_trace.jsonl");
    assert!(size > file_len(&p, ".orchestration/hook.json"), "{size}");
    std::fs::remove_file(p.path(".orchestration/waymark.log")).ok();
    // A limit a little above the trace's size: the next record starts and is cut.
    let mut long = events[4].1.clone();
    long["tool_response"]["stdout"] = json!("y".repeat(1500));
    let out = hook_with_file_limit(&p, "PostToolUse", &long, size / 512 + 1);
    assert_eq!(out.status.code(), Some(0));
    let text = p.read(".orchestration/agent_trace.jsonl");
    assert!(
        !text.ends_with('\n'),
        "the limit was meant to tear the record"
    );
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("File too large")
    );
    // The next write cuts the torn fragment and appends whole.
    assert_eq!(
        run_hook(&p, events[6].0, &events[6].1).status.code(),
        Some(0)
    );
    let after = trace_records(&p);
    assert_eq!(after.len(), records + 1);
    assert_eq!(trace_count(&after, "toolu_a1_edit"), 1);
}

#[test]
fn a_lock_file_that_is_a_directory_fails_cleanly() {
    let p = Project::new();
    let events = big_task(&p);
    let before = std::fs::read(p.path(".orchestration/hook.json")).unwrap();
    std::fs::remove_file(p.path(".orchestration/hook.json.lock")).unwrap();
    std::fs::create_dir(p.path(".orchestration/hook.json.lock")).unwrap();
    let out = run_hook(&p, events[8].0, &events[8].1);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open lock file"));
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("cannot open lock file")
    );
    assert_eq!(
        std::fs::read(p.path(".orchestration/hook.json")).unwrap(),
        before
    );
}

/// A task that cannot be archived (a file where `tasks/` should be) is not finished: the
/// finished state would otherwise be overwritten by the next task with no copy kept.
/// (`tasks/` holds the running task's logs, so it is moved aside, then put back.)
#[test]
fn a_task_that_cannot_be_archived_stays_unfinished_until_it_can() {
    let p = Project::new();
    let events = cycle(p.root(), "s", "a", "a1");
    for (e, v) in &events[..9] {
        assert_eq!(run_hook(&p, e, v).status.code(), Some(0));
    }
    let aside = p.path(".orchestration/tasks.aside");
    std::fs::rename(p.path(".orchestration/tasks"), &aside).unwrap();
    std::fs::write(p.path(".orchestration/tasks"), "in the way").unwrap();
    let stop = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "Stop",
                      "last_assistant_message": "done"});
    let out = run_hook(&p, "Stop", &stop);
    assert_eq!(out.status.code(), Some(0));
    assert!(!out.stderr.is_empty(), "the failure is said");
    assert!(p.read(".orchestration/waymark.log").contains("ERROR"));
    assert_ne!(
        p.hook_json()["state"],
        "completed",
        "finished without an archive"
    );
    // The obstacle gone, the next Stop finishes and archives it.
    std::fs::remove_file(p.path(".orchestration/tasks")).unwrap();
    std::fs::rename(&aside, p.path(".orchestration/tasks")).unwrap();
    assert_eq!(run_hook(&p, "Stop", &again(&stop)).status.code(), Some(0));
    let hook = p.hook_json();
    assert_eq!(hook["state"], "completed");
    let id = hook["task_id"].as_str().unwrap();
    assert!(
        p.path(&format!(".orchestration/tasks/{id}/hook.json"))
            .exists()
    );
}

/// A read-only state directory, made with a read-only bind mount inside a user namespace
/// (`unshare -rm`): the one way to make a directory unwritable for root without
/// privileges. Where user namespaces are not allowed the test says so and checks nothing.
#[test]
fn a_read_only_state_dir_exits_0_and_changes_nothing() {
    if !Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIPPED: user namespaces are not available here (unshare -rm)");
        return;
    }
    let p = Project::new();
    let events = big_task(&p);
    let before = std::fs::read(p.path(".orchestration/hook.json")).unwrap();
    let log_before = std::fs::read(p.path(".orchestration/waymark.log")).unwrap_or_default();
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c"])
        .arg(
            "mount --bind .orchestration .orchestration && \
             mount -o remount,bind,ro .orchestration && exec \"$0\" hook PostToolUse",
        )
        .arg(bin())
        .current_dir(p.root())
        .env("CLAUDE_PROJECT_DIR", p.root())
        .env("XDG_CONFIG_HOME", p.config.path())
        .env("HOME", p.config.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = spawn_hook(cmd, events[8].1.to_string().as_bytes())
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read(p.path(".orchestration/hook.json")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read(p.path(".orchestration/waymark.log")).unwrap_or_default(),
        log_before
    );
    // Writable again, the event goes through.
    assert_eq!(
        run_hook(&p, events[8].0, &events[8].1).status.code(),
        Some(0)
    );
}
