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

/// The checkpoint is made; the agent's next tool calls (a Write over a file, a Write of a
/// new one) start at once, as Claude Code starts them when the hook has answered, and the
/// capture is slowed down before it reads the work tree (`capture.begun:pause`), so that
/// the edits land first. They do not wait for it (issue 52): each keeps its file as it was,
/// and the snapshot holds the files as they were at the checkpoint.
fn a_checkpoint_followed_at_once_by_an_edit_records_the_tree_before_it(files: usize) {
    let p = project(files);
    // The step wrote src/main.txt: the capture records it too.
    let wrote = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PostToolUse",
                       "tool_name": "Write", "tool_use_id": "toolu_main",
                       "tool_input": {"file_path": p.path("src/main.txt"), "content": "before\n"},
                       "tool_response": {"type": "update", "filePath": p.path("src/main.txt"), "content": "before\n"}});
    assert!(hook_with(&p, "PostToolUse", &wrote, None).status.success());
    // Written long ago: the step's file record keeps the time of the file, not its copy's.
    let long_ago = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let main = std::fs::File::options()
        .write(true)
        .open(p.path("src/main.txt"));
    main.unwrap().set_modified(long_ago).unwrap();
    let out = hook_with(
        &p,
        "PreCompact",
        &pre_compact(&p),
        Some("capture.begun:pause"),
    );
    assert!(out.status.success());
    for (file, content) in [("src/main.txt", "after\n"), ("src/new.txt", "new\n")] {
        let write = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
                           "tool_name": "Write", "tool_use_id": "toolu_next",
                           "tool_input": {"file_path": p.path(file), "content": content}});
        assert!(hook_with(&p, "PreToolUse", &write, None).status.success());
        p.write(file, content);
    }
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
    assert_eq!(capture["git_dirty"], false, "the tree was HEAD's then");
    let main = &capture["files"][0];
    assert_eq!(main["path"], "src/main.txt", "{capture:#}");
    assert_eq!(main["size"], 7, "the step's file as it was: {capture:#}");
    let written = main["mod_time"].as_str().unwrap();
    assert!(written.starts_with("2001-09-09"), "{capture:#}");
    assert!(
        !p.path(".orchestration/capture.pre")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some()),
        "the kept files go with the capture"
    );
}

/// PreToolUse of a Write of `file` (root-relative).
fn write_to(p: &Project, file: &str) -> Value {
    json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
           "tool_name": "Write", "tool_use_id": "toolu_w",
           "tool_input": {"file_path": p.path(file), "content": "x\n"}})
}

/// How long the PreToolUse of a Write of `file` took.
fn timed_write(p: &Project, file: &str) -> Duration {
    let start = Instant::now();
    assert!(
        hook_with(p, "PreToolUse", &write_to(p, file), None)
            .status
            .success()
    );
    start.elapsed()
}

/// While a capture holds its lock, an edit whose file is known goes on at once; a Bash
/// command, which may write anywhere, waits for it (here until the lock's timeout: the
/// holder never lets go), and so does an edit of a file holding a secret, or any edit
/// while a rewind or a diff holds the lock.
#[test]
fn an_edit_goes_on_while_a_capture_runs_and_a_command_waits() {
    let p = project(10);
    let _ = std::fs::create_dir_all(p.path(".orchestration"));
    let mut holder = crate::util::hold(&p.path(".orchestration/capture.lock"));
    std::fs::write(p.path(".orchestration/capture.held"), "1-1").unwrap();
    let write = write_to(&p, "src/main.txt");
    let start = Instant::now();
    assert!(hook_with(&p, "PreToolUse", &write, None).status.success());
    let edit = start.elapsed();
    let bash = json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
                      "tool_name": "Bash", "tool_use_id": "toolu_b",
                      "tool_input": {"command": "make"}});
    let start = Instant::now();
    assert!(hook_with(&p, "PreToolUse", &bash, None).status.success());
    let command = start.elapsed();
    assert!(
        command >= Duration::from_secs(1),
        "the command waited: {command:?}"
    );
    assert!(
        edit < command / 2,
        "the edit went on at once: {edit:?} against {command:?}"
    );
    // A Write of a file that is not there yet goes on too: what it keeps is that there
    // was none. So does one of a file of exactly the largest size kept.
    p.write("src/four.bin", &"x".repeat(4 << 20));
    for file in ["src/brand_new.txt", "src/four.bin"] {
        let took = timed_write(&p, file);
        assert!(took < command / 2, "{file} went on: {took:?}");
    }
    // What a preimage cannot stand for waits: a file holding a secret (never copied), a
    // file past the largest kept, a link on the way.
    p.write("src/env.txt", "key AKIAQ3EGRTYU7WXZ2B4C\n");
    p.write("src/five.bin", &"x".repeat((4 << 20) + 1));
    std::os::unix::fs::symlink("main.txt", p.path("src/link.txt")).unwrap();
    for file in ["src/env.txt", "src/five.bin", "src/link.txt"] {
        let took = timed_write(&p, file);
        assert!(took >= Duration::from_secs(1), "{file} waited: {took:?}");
    }
    let kept = std::fs::read_dir(p.path(".orchestration/capture.pre/1-1")).unwrap();
    assert_eq!(
        kept.count(),
        5,
        "main.txt and four.bin kept (a copy and a record each), brand_new.txt's record"
    );
    // A rewind or a diff holds the lock with no name in `capture.held`: an edit waits.
    std::fs::write(p.path(".orchestration/capture.held"), "").unwrap();
    let start = Instant::now();
    assert!(hook_with(&p, "PreToolUse", &write, None).status.success());
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let _ = holder.kill();
    let _ = holder.wait();
}

/// What an edit made during a capture puts back is exact beyond the file's bytes: an
/// ignored file stays out of the snapshot; a secret the edit wrote leaves the file as it
/// was, no longer withheld; whether the tree differed from HEAD is the tree's at the
/// checkpoint (a secret left out is a change); what a killed capture kept or half wrote
/// is cleared.
#[test]
fn an_edit_during_a_capture_leaves_ignored_files_secrets_and_changes_as_they_were() {
    let p = project(10);
    p.write(".gitignore", "ignored.txt\n");
    git(p.root(), &["add", ".gitignore"]);
    git(p.root(), &["commit", "-qm", "ignore"]);
    p.write("ignored.txt", "before\n");
    p.write("src/secret.txt", "key AKIAQ3EGRTYU7WXZ2B4C\n");
    p.write(".orchestration/capture.pre/9-9/9-0.json", "{}");
    p.write(".orchestration/.capture.held.9.tmp", "9-9");
    let checkpoint_then_write = |round: &str, file: &str, content: &str| {
        let mut compact = pre_compact(&p);
        compact["custom_instructions"] = json!(round);
        let out = hook_with(&p, "PreCompact", &compact, Some("capture.begun:pause"));
        assert!(out.status.success());
        assert!(
            hook_with(&p, "PreToolUse", &write_to(&p, file), None)
                .status
                .success()
        );
        p.write(file, content);
        newest_capture(&p)
    };

    let first = checkpoint_then_write("first", "ignored.txt", "after\n");
    let snapshot = first["snapshot"].as_str().expect("a snapshot");
    let listed = git(p.root(), &["ls-tree", "-r", "--name-only", snapshot]);
    assert!(!listed.contains("ignored.txt"), "{listed}");
    assert_eq!(first["git_dirty"], true, "the secret left out is a change");
    assert!(!p.path(".orchestration/capture.pre/9-9").exists());
    assert!(!p.path(".orchestration/.capture.held.9.tmp").exists());

    std::fs::remove_file(p.path("src/secret.txt")).unwrap();
    p.write("src/main.txt", "changed\n");
    let second = checkpoint_then_write("second", "src/main.txt", "key AKIAQ3EGRTYU7WXZ2B4C\n");
    let snapshot = second["snapshot"].as_str().expect("a snapshot");
    let main = git(p.root(), &["show", &format!("{snapshot}:src/main.txt")]);
    assert_eq!(main, "changed\n");
    assert_eq!(second["withheld"], json!(null), "{second:#}");
    assert_eq!(second["git_dirty"], true);
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
