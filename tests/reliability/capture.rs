//! A checkpoint's snapshot is the project as it was when the checkpoint was made, however
//! fast the agent edits next (issue 30): the capture a hook leaves to its forked copy holds
//! `capture.lock`, which the next PreToolUse of a tool that writes waits on. A capture
//! killed midway leaves no temporary index and its checkpoint reads as missing.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::util::{Project, git};

/// A git project with `files` committed files under `src/` (and `src/main.txt`), and a
/// task whose step is running.
fn project(files: usize) -> Project {
    let p = Project::new();
    for i in 0..files {
        p.write(
            &format!("src/d{}/f{i}.txt", i % 100),
            &format!("file {i}\n"),
        );
    }
    p.write("src/main.txt", "before\n");
    git(p.root(), &["add", "-A"]);
    git(p.root(), &["commit", "-qm", "the project"]);
    p.waymark()
        .args(["task", "start", "--step", "Edit main"])
        .assert()
        .success();
    p.waymark()
        .args(["step", "start", "Edit main"])
        .assert()
        .success();
    p
}

/// `waymark hook <event>` with `fault` armed (for the hook and its forked capture).
fn hook_with(p: &Project, event: &str, input: &Value, fault: Option<&str>) -> std::process::Output {
    let mut c = hook_command(p, event);
    if let Some(f) = fault {
        c.env("WAYMARK_TEST_FAULT", f);
    }
    spawn_hook(c, input.to_string().as_bytes())
        .wait_with_output()
        .unwrap()
}

/// PreCompact: a `pre_compact` checkpoint, its capture left to the hook's forked copy.
fn pre_compact(p: &Project) -> Value {
    json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreCompact",
           "trigger": "manual", "custom_instructions": ""})
}

/// The capture record of the newest checkpoint, once it is written (waited for).
fn newest_capture(p: &Project) -> Value {
    let start = Instant::now();
    loop {
        let hook = p.hook_json();
        let id = hook["checkpoints"].as_array().unwrap().last().unwrap()["checkpoint_id"]
            .as_str()
            .unwrap()
            .to_string();
        let task = hook["task_id"].as_str().unwrap();
        let path = format!(".orchestration/tasks/{task}/checkpoints/{id}.json");
        let text = std::fs::read_to_string(p.path(&path)).unwrap_or_default();
        if !text.is_empty() {
            return serde_json::from_str(&text).unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no capture of {id}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The checkpoint is made; the agent's next tool call (a Write) starts at once, as Claude
/// Code starts it when the hook has answered; the capture is slowed down (`pause`) so
/// that it is surely still running then. The snapshot holds the file as it was.
fn a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it(files: usize) {
    let p = project(files);
    let out = hook_with(
        &p,
        "PreCompact",
        &pre_compact(&p),
        Some("capture.staged:pause"),
    );
    assert!(out.status.success());
    let write = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
                       "tool_name": "Write", "tool_use_id": "toolu_next",
                       "tool_input": {"file_path": p.path("src/main.txt"), "content": "after\n"}});
    let waited = Instant::now();
    assert!(hook_with(&p, "PreToolUse", &write, None).status.success());
    let waited = waited.elapsed();
    // The Write itself, and a file it creates.
    p.write("src/main.txt", "after\n");
    p.write("src/new.txt", "new\n");
    let capture = newest_capture(&p);
    let snapshot = capture["snapshot"].as_str().expect("a snapshot");
    let main = git(p.root(), &["show", &format!("{snapshot}:src/main.txt")]);
    assert_eq!(
        main, "before\n",
        "the snapshot holds the later edit ({files} files)"
    );
    let listed = git(p.root(), &["ls-tree", "-r", "--name-only", snapshot]);
    assert!(!listed.contains("src/new.txt"), "{files} files");
    assert!(listed.lines().count() > files, "every file is in it");
    assert!(
        waited >= Duration::from_millis(300),
        "the PreToolUse did not wait for the capture: {waited:?}"
    );
}

#[test]
fn a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it_small() {
    a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it(10);
}

#[test]
fn a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it_20000_files() {
    a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it(20_000);
}

/// A read of a file neither waits nor changes anything: only tools that may write wait.
#[test]
fn a_read_does_not_wait_for_the_capture() {
    let p = project(10);
    hook_with(
        &p,
        "PreCompact",
        &pre_compact(&p),
        Some("capture.staged:pause"),
    );
    let read = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
                      "tool_name": "Read", "tool_use_id": "toolu_read",
                      "tool_input": {"file_path": p.path("src/main.txt")}});
    let start = Instant::now();
    assert!(hook_with(&p, "PreToolUse", &read, None).status.success());
    assert!(
        start.elapsed() < Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
    newest_capture(&p);
}

/// The capture is killed after staging the work tree: no temporary index is left once
/// the next one to take the capture lock has run, the checkpoint says its snapshot is
/// missing, and the next checkpoint's capture is whole.
#[test]
fn a_capture_killed_midway_leaves_nothing_behind_and_its_snapshot_reads_as_missing() {
    let p = project(10);
    assert!(
        hook_with(
            &p,
            "PreCompact",
            &pre_compact(&p),
            Some("capture.staged:kill")
        )
        .status
        .success()
    );
    let id = p.hook_json()["checkpoints"][0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    // `waymark checkpoints` waits for a capture in flight: this one died.
    let listed = p.waymark().arg("checkpoints").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&id) && listed.contains("snapshot missing: its capture was interrupted"),
        "{listed}"
    );
    assert_eq!(temp_indexes(p.root()), Vec::<String>::new());
    p.waymark()
        .args(["checkpoint", "after the kill"])
        .assert()
        .success();
    assert!(newest_capture(&p)["snapshot"].is_string());
    assert_eq!(temp_indexes(p.root()), Vec::<String>::new());
}

/// Temporary indexes anywhere waymark may leave one.
fn temp_indexes(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in [root.join(".git"), root.join(".orchestration")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.contains("index") && name != "index" {
                found.push(name);
            }
        }
    }
    found
}
