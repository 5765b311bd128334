//! Checkpoints, crash detection and the resume brief, end to end through `waymark hook`
//! and `waymark replay` on the recorded session.

mod util;

use serde_json::{Value, json};
use util::{Project, context_of};

fn triggers(h: &Value) -> Vec<String> {
    h["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trigger"].as_str().unwrap().to_string())
        .collect()
}

/// `/clear`: SessionEnd (reason clear), then SessionStart (source clear). Returns hook.json
/// as SessionEnd left it and the brief the cleared session got.
fn clear(p: &Project) -> (Value, String) {
    let end = json!({"session_id": "s1", "cwd": p.root(), "hook_event_name": "SessionEnd", "reason": "clear"});
    p.hook("SessionEnd", &end.to_string());
    let hook = p.hook_json();
    let start = json!({"session_id": "s1", "cwd": p.root(), "hook_event_name": "SessionStart", "source": "clear"});
    let brief = context_of(&p.hook("SessionStart", &start.to_string())).unwrap();
    (hook, brief)
}

/// The recorded session up to the failing test: no Stop, no SessionEnd — Claude Code died.
fn crashed_session(p: &Project) {
    let lines = p.session_lines();
    p.replay_lines(&lines[..28]);
}

#[test]
fn a_session_that_stops_mid_step_is_a_crash_and_the_brief_says_how_to_resume() {
    let p = Project::new();
    crashed_session(&p);
    let out = p.hook("SessionStart", &p.fixture("SessionStart-startup.json"));
    let brief = context_of(&out).expect("a resume brief");
    assert!(brief.contains("CRASH DETECTED (signal)"), "{brief}");
    assert!(brief.contains("Recommended action:"), "{brief}");
    assert!(
        brief.contains(
            "Step 2 of 3 \"Implement fix\", attempt 1 of 3 (resuming makes it attempt 2 of 3)"
        ),
        "{brief}"
    );
    assert!(brief.contains("src/parser.rs, src/main.rs"), "{brief}");
    assert!(
        brief.contains("DO NOT REPEAT (completed):\n- step 1 \"Analyze parser\""),
        "{brief}"
    );
    assert!(
        brief.contains("Resumed from checkpoint: Commit 67f3bab02076: Add nil-safe parser"),
        "{brief}"
    );
    assert!(brief.ends_with(".orchestration/HOOK.md"), "{brief}");
    assert!(brief.len() <= 4000);

    let h = p.hook_json();
    assert_eq!(h["state"], "recovering");
    let r = &h["recovery"];
    assert_eq!(r["crash_type"], "signal");
    assert_eq!(r["last_known_state"], "step_running");
    assert_eq!(r["recommended_action"], "retry_from_checkpoint");
    assert_eq!(r["session_id"], "dc5c038f-fe1b-4284-bef5-f12c0c71733d");
    let md = p.read(".orchestration/HOOK.md");
    assert!(md.contains("Crash detected"), "{md}");
    assert!(
        md.contains("Resume step 2 \"Implement fix\" (attempt 2 of 3)"),
        "{md}"
    );

    // Recovery is idempotent: a second start (another Claude Code process) finds the same
    // verdict, no second transition.
    let second = p
        .waymark()
        .env("CLAUDE_PID", "4242")
        .args(["hook", "SessionStart"])
        .write_stdin(p.fixture("SessionStart-startup.json"))
        .output()
        .unwrap();
    let again = context_of(&String::from_utf8(second.stdout).unwrap()).unwrap();
    assert!(again.contains("CRASH DETECTED"));
    let h2 = p.hook_json();
    let crashes = h2["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["trigger"] == "crash_detected")
        .count();
    assert_eq!(crashes, 1);
    assert_eq!(h2["recovery"], h["recovery"]);

    // Going back to work on the step makes it attempt 2 and clears the verdict.
    p.hook("PostToolUse", &p.fixture("PostToolUse-Edit.json"));
    let h3 = p.hook_json();
    assert_eq!(h3["state"], "step_running");
    assert_eq!(h3["current_step"]["attempt"], 2);
    assert!(h3.get("recovery").is_none());
}

#[test]
fn a_clean_stop_is_not_a_crash() {
    let p = Project::new();
    let lines = p.session_lines();
    p.replay_lines(&lines[..30]);
    let brief =
        context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json"))).unwrap();
    assert!(!brief.contains("CRASH"), "{brief}");
    assert!(brief.contains("Resume step 2 \"Implement fix\" (attempt 1 of 3)"));
    assert_eq!(p.hook_json()["state"], "step_running");
}

#[test]
fn compaction_checkpoints_and_resumes() {
    let p = Project::new();
    let out = p.replay_lines(&p.session_lines());
    // What the agent reads after the compaction, quoted under its SessionStart.
    let after_compact = out.split("SessionStart (compact)").nth(1).unwrap();
    assert!(
        after_compact.contains("Resumed from checkpoint: Before manual compaction"),
        "{after_compact}"
    );
    let h = p.hook_json();
    assert_eq!(triggers(&h).last().unwrap(), "pre_compact");
    assert!(
        h["compact_summary"]
            .as_str()
            .unwrap()
            .contains("FAKE-COMPACT-SUMMARY")
    );
    // Automatic compaction too.
    p.hook("PreCompact", &p.fixture("PreCompact-auto.json"));
    let h = p.hook_json();
    let last = h["checkpoints"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["trigger"], "pre_compact");
    assert_eq!(last["description"], "Before auto compaction");
    assert_eq!(p.capture(&last)["files"].as_array().unwrap().len(), 2);
}

#[test]
fn clear_checkpoints_first_and_the_brief_after_it_says_what_changed() {
    let p = Project::new();
    p.write("src/main.rs", "fn main(){}\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    let lines = p.session_lines();
    p.replay_lines(&lines[..20]);
    p.write("src/main.rs", "fn main(){}\nfn more(){}\nfn again(){}\n");
    let (hook, brief) = clear(&p);
    assert_eq!(triggers(&hook).last().unwrap(), "clear");
    assert!(
        brief.contains("Resumed from checkpoint: Before /clear"),
        "{brief}"
    );
    assert!(
        brief.contains(
            "Changed before /clear, since the last checkpoint's commit: 1 file, +2/−0 lines."
        ),
        "{brief}"
    );
    assert!(!brief.contains("CRASH"));
}

#[test]
fn clear_with_checkpointing_off_or_prompt() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    p.write(
        ".orchestration/waymark.json",
        r#"{"auto_checkpoint_on_clear": "prompt", "verify_before_clear": false}"#,
    );
    let (hook, brief) = clear(&p);
    assert!(!triggers(&hook).contains(&"clear".to_string()));
    assert!(
        brief.contains("No checkpoint was saved before /clear"),
        "{brief}"
    );
    assert!(!brief.contains("Work changed"));
}

#[test]
fn auto_resume_off_and_prompt() {
    let p = Project::new();
    crashed_session(&p);
    let quiet = p
        .waymark()
        .env("WAYMARK_AUTO_RESUME_ON_START", "false")
        .args(["hook", "SessionStart"])
        .write_stdin(p.fixture("SessionStart-startup.json"))
        .output()
        .unwrap();
    assert!(quiet.stdout.is_empty());
    // Crash detection still ran.
    assert_eq!(p.hook_json()["state"], "recovering");
    let prompt = p
        .waymark()
        .env("CONTEXTD_AUTO_RESUME_ON_START", "prompt")
        .args(["hook", "SessionStart"])
        .write_stdin(p.fixture("SessionStart-resume.json"))
        .output()
        .unwrap();
    let text = context_of(&String::from_utf8(prompt.stdout).unwrap()).unwrap();
    assert!(text.contains("ask the user whether to resume"), "{text}");
    assert!(
        text.contains("step \"Implement fix\" (attempt 2)"),
        "{text}"
    );
}

#[test]
fn no_task_no_brief_and_no_checkpoint_is_said_plainly() {
    let p = Project::new();
    // Nothing to resume: only how to keep a plan (the agent may have no task list).
    let note =
        context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json"))).unwrap();
    assert!(
        note.contains("waymark plan") && !note.contains("Resume brief"),
        "{note}"
    );
    let quiet = Project::new();
    quiet.write(".orchestration/waymark.json", r#"{"plan_note": false}"#);
    assert_eq!(
        quiet.hook("SessionStart", &quiet.fixture("SessionStart-startup.json")),
        ""
    );
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    let brief =
        context_of(&p.hook("SessionStart", &p.fixture("SessionStart-resume.json"))).unwrap();
    assert!(brief.contains("No checkpoint yet for this task"), "{brief}");
    assert!(brief.contains("The task: write hello"), "{brief}");
}

#[test]
fn git_commit_through_bash_checkpoints_with_the_hash() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..26]);
    let h = p.hook_json();
    let cp = h["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["trigger"] == "git_commit")
        .unwrap();
    assert_eq!(
        cp["description"],
        "Commit 67f3bab02076: Add nil-safe parser"
    );
    assert_eq!(cp["step_name"], "Implement fix");
    assert_eq!(cp["git_branch"], "main");
    let capture = p.capture(cp);
    let paths: Vec<_> = capture["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/parser.rs", "src/main.rs"]);
}

#[test]
fn push_and_pull_request_checkpoint() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    for (cmd, out) in [
        (
            "git push origin main",
            "To example.com:repo.git\n   1a2b3c4..5d6e7f8  main -> main",
        ),
        ("gh pr create --fill", "https://github.com/acme/app/pull/42"),
    ] {
        let ev = json!({"session_id":"s","cwd":p.root(),"hook_event_name":"PostToolUse","tool_name":"Bash",
            "tool_input":{"command":cmd},"tool_response":{"stdout":out,"stderr":"","interrupted":false}});
        p.hook("PostToolUse", &ev.to_string());
    }
    let h = p.hook_json();
    let t = triggers(&h);
    assert!(
        t.ends_with(&["git_push".to_string(), "pr_created".to_string()]),
        "{t:?}"
    );
    assert_eq!(
        h["checkpoints"].as_array().unwrap().last().unwrap()["description"],
        "PR created: https://github.com/acme/app/pull/42"
    );
}

#[test]
fn interval_checkpoint_in_a_long_running_step() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    let out = p
        .waymark()
        .env("WAYMARK_CHECKPOINT_INTERVAL", "1ms")
        .args(["hook", "PostToolUse"])
        .write_stdin(p.fixture("PostToolUse-Read.json"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(triggers(&p.hook_json()).last().unwrap(), "interval");
    // With the default 5m nothing more happens.
    p.hook("PostToolUse", &p.fixture("PostToolUse-Read.json"));
    assert_eq!(
        triggers(&p.hook_json())
            .iter()
            .filter(|t| *t == "interval")
            .count(),
        1
    );
}

#[test]
fn context_threshold_checkpoints_once_per_crossing() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    let transcript = util::fixtures().join("transcript-sample.jsonl");
    let stop = json!({"session_id":"s","cwd":p.root(),"hook_event_name":"Stop","transcript_path":transcript,"last_assistant_message":"done"});
    for _ in 0..2 {
        p.waymark()
            .env("WAYMARK_CONTEXT_WINDOW_TOKENS", "25000")
            .args(["hook", "Stop"])
            .write_stdin(stop.to_string())
            .assert()
            .success();
    }
    let h = p.hook_json();
    assert_eq!(
        triggers(&h)
            .iter()
            .filter(|t| *t == "context_threshold")
            .count(),
        1
    );
    assert_eq!(h["context_percent"], 82);
    let cp = h["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["trigger"] == "context_threshold")
        .unwrap();
    assert!(cp["description"].as_str().unwrap().contains("82%"));
}

#[test]
fn manual_checkpoints_are_listed_in_order_and_pruned_fifo() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    p.waymark()
        .args(["checkpoint", "halfway done with refactor"])
        .assert()
        .success();
    let list = String::from_utf8(p.waymark().arg("checkpoints").output().unwrap().stdout).unwrap();
    let order: Vec<_> = list
        .lines()
        .filter(|l| !l.starts_with("    "))
        .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
        .collect();
    assert_eq!(order, ["step_complete", "manual"]);
    assert!(list.contains("halfway done with refactor"));
    for i in 0..4 {
        p.waymark()
            .env("WAYMARK_MAX_CHECKPOINTS", "3")
            .args(["checkpoint", &format!("c{i}")])
            .assert()
            .success();
    }
    // The task's checkpoints are the newest `max_checkpoints` of its log.
    let json: Value = serde_json::from_slice(
        &p.waymark()
            .env("WAYMARK_MAX_CHECKPOINTS", "3")
            .args(["checkpoints", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let d: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["description"].as_str().unwrap())
        .collect();
    assert_eq!(d, ["c1", "c2", "c3"]);
}

#[test]
fn stale_task_without_a_session_is_a_timeout_crash_via_recover() {
    let p = Project::new();
    p.waymark()
        .args(["task", "start", "--step", "Implement parser"])
        .assert()
        .success();
    p.waymark()
        .args(["step", "start", "Implement parser"])
        .assert()
        .success();
    let mut h = p.hook_json();
    h["updated_at"] = json!("2020-01-01T00:00:00Z");
    p.write(".orchestration/hook.json", &h.to_string());
    let out: Value = serde_json::from_slice(
        &p.waymark()
            .args(["recover", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(out["crash_detected_now"], true);
    assert_eq!(out["recovery"]["crash_type"], "timeout");
    assert_eq!(out["recovery"]["recommended_action"], "manual");
    let again: Value = serde_json::from_slice(
        &p.waymark()
            .args(["recover", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(again["crash_detected_now"], false);
    assert_eq!(again["recovery"], out["recovery"]);
    let text = String::from_utf8(p.waymark().arg("recover").output().unwrap().stdout).unwrap();
    assert!(text.contains("CRASH DETECTED (timeout)"), "{text}");
}

#[test]
fn files_changed_since_the_last_checkpoint_are_warned_about() {
    let p = Project::new();
    p.write("src/parser.rs", "pub fn parse() {}\n");
    crashed_session(&p);
    // The fixture's Write did not really write the file here; make the snapshot real.
    p.write(
        "src/parser.rs",
        "pub fn parse(s: Option<&str>) -> usize {\n    s.map(|v| v.len()).unwrap_or(0)\n}\n",
    );
    p.waymark()
        .args(["checkpoint", "before crash"])
        .assert()
        .success();
    p.write("src/parser.rs", "// changed after the checkpoint\n");
    p.hook("SessionStart", &p.fixture("SessionStart-startup.json"));
    let warnings = p.hook_json()["recovery"]["file_warnings"].clone();
    assert_eq!(warnings.as_array().unwrap().len(), 1, "{warnings}");
    assert!(warnings[0].as_str().unwrap().contains("src/parser.rs"));
    assert!(
        p.read(".orchestration/HOOK.md")
            .contains("Check `src/parser.rs` (modified")
    );
}

#[test]
fn a_finished_plan_completes_the_task_at_stop_and_a_new_prompt_starts_the_next() {
    let p = Project::new();
    let lines = p.session_lines();
    p.replay_lines(&lines[..20]);
    for id in ["2", "3"] {
        let ev = json!({"session_id":"s","cwd":p.root(),"hook_event_name":"PostToolUse","tool_name":"TaskUpdate",
            "tool_input":{"taskId":id,"status":"completed"},"tool_response":{"success":true,"taskId":id}});
        p.hook("PostToolUse", &ev.to_string());
    }
    p.hook("Stop", &p.fixture("Stop.json"));
    let h = p.hook_json();
    assert_eq!(h["state"], "completed");
    let id = h["task_id"].as_str().unwrap().to_string();
    assert!(
        p.path(&format!(".orchestration/tasks/{id}/hook.json"))
            .exists()
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    let next = p.hook_json();
    assert_ne!(next["task_id"], id);
    assert_eq!(next["task_index"], 1);
    assert_eq!(next["state"], "step_pending");
}

/// A fixture of Claude Code 2.1.332 sent as session `session`, in `cwd` when given.
fn today(p: &Project, name: &str, session: &str, cwd: Option<&std::path::Path>) -> String {
    let mut e: Value = serde_json::from_str(&p.fixture_of("2.1.332", name)).unwrap();
    e["session_id"] = session.into();
    if let Some(cwd) = cwd {
        e["cwd"] = cwd.display().to_string().into();
    }
    e.to_string()
}

/// `event` sent by session `session`.
fn as_session(event: &str, session: &str) -> String {
    let mut e: Value = serde_json::from_str(event).unwrap();
    e["session_id"] = session.into();
    e.to_string()
}

/// Claude Code 2.1.332 ends a turn that failed on an API error with StopFailure: the
/// session stopped, it did not crash, and the next session is told why the turn failed.
#[test]
fn a_turn_that_failed_on_an_api_error_is_a_stop_and_the_brief_says_why() {
    let p = Project::new();
    for name in ["SessionStart-startup.json", "UserPromptSubmit.json"] {
        p.hook(
            name.split(['-', '.']).next().unwrap(),
            &today(&p, name, "s1", None),
        );
    }
    p.hook(
        "PostToolUse",
        &as_session(&p.write_event("src/a.rs", "fn a() {}\n"), "s1"),
    );
    p.hook("StopFailure", &today(&p, "StopFailure.json", "s1", None));
    let h = p.hook_json();
    let session = &h["sessions"][0];
    assert_eq!(session["status"], "idle", "{h:#}");
    assert_eq!(session["failed_turn"]["error"], "unknown");
    let brief = context_of(&p.hook(
        "SessionStart",
        &today(&p, "SessionStart-resume.json", "s1", None),
    ))
    .unwrap();
    assert!(!brief.contains("CRASH DETECTED"), "{brief}");
    assert!(
        brief.contains("last turn ended on an API error ")
            && !brief.contains("(unknown)")
            && brief.contains("API Error: 400 E2E injected failure")
            && brief.contains("it did not crash"),
        "{brief}"
    );
    // Its next event is a new turn: the failure is no longer news.
    let mut next: Value =
        serde_json::from_str(&today(&p, "UserPromptSubmit.json", "s1", None)).unwrap();
    next["prompt_id"] = "the-next-prompt".into();
    p.hook("UserPromptSubmit", &next.to_string());
    assert!(p.hook_json()["sessions"][0]["failed_turn"].is_null());
}

/// A session that ended while it waited for a permission, with a subagent running, in a
/// worktree: the next session's brief says all three.
#[test]
fn a_crash_while_waiting_for_a_permission_in_a_worktree_is_told() {
    let p = Project::new();
    let worktree = p.path(".claude/worktrees/wt1");
    std::fs::create_dir_all(&worktree).unwrap();
    let wt = Some(worktree.as_path());
    p.hook(
        "SessionStart",
        &today(&p, "SessionStart-startup.json", "s1", wt),
    );
    p.hook(
        "UserPromptSubmit",
        &today(&p, "UserPromptSubmit.json", "s1", wt),
    );
    p.hook(
        "PostToolUse",
        &as_session(&p.write_event("src/a.rs", "fn a() {}\n"), "s1"),
    );
    p.hook(
        "SubagentStart",
        &today(&p, "SubagentStart.json", "s1", None),
    );
    p.hook(
        "PermissionRequest",
        &today(&p, "PermissionRequest.json", "s1", wt),
    );
    let h = p.hook_json();
    let s = &h["sessions"][0];
    let started: Value =
        serde_json::from_str(&today(&p, "SubagentStart.json", "s1", None)).unwrap();
    let agent = format!(
        "general-purpose {}",
        &started["agent_id"].as_str().unwrap()[..8]
    );
    assert_eq!(s["cwd"], ".claude/worktrees/wt1", "{h:#}");
    assert_eq!(s["agents"], json!([agent]), "{h:#}");
    assert!(
        s["waiting_for"]
            .as_str()
            .unwrap()
            .contains("permission to run Bash `touch needs-permission.txt`"),
        "{h:#}"
    );
    // Claude Code died there: the next session starts afresh.
    let brief = context_of(&p.hook(
        "SessionStart",
        &today(&p, "SessionStart-startup.json", "s2", None),
    ))
    .unwrap();
    for needle in [
        "CRASH DETECTED",
        "Claude Code session s1 was working in .claude/worktrees/wt1, not the project root",
        "Claude Code session s1 was waiting for the user's permission to run Bash `touch needs-permission.txt` when it ended",
        &format!("had subagents running when it ended ({agent})"),
    ] {
        assert!(brief.contains(needle), "lacks {needle:?}:\n{brief}");
    }
}

/// A hook command the user wrapped (`timeout 10 nice env stdbuf -o0 waymark hook …`, run
/// by `sh -c` as Claude Code runs hooks) records Claude Code's process, not a wrapper's:
/// the wrappers exit with each hook, and the session must still read as live (here the
/// test process plays Claude Code), so another session starting finds no crash.
#[test]
fn a_wrapped_hook_command_records_claude_code_not_the_wrapper() {
    let p = Project::new();
    let bin = assert_cmd::cargo::cargo_bin("waymark");
    let wrapped = |event: &str, input: &str| {
        let command = format!(
            "timeout 10 nice env stdbuf -o0 '{}' hook {event}",
            bin.display()
        );
        p.command("sh")
            .args(["-c", &command])
            .write_stdin(input)
            .assert()
            .success();
    };
    for name in ["SessionStart-startup.json", "UserPromptSubmit.json"] {
        let event = name.split(['-', '.']).next().unwrap();
        wrapped(event, &today(&p, name, "s1", None));
    }
    wrapped(
        "PostToolUse",
        &as_session(&p.write_event("src/a.rs", "fn a() {}\n"), "s1"),
    );
    let owner = p.hook_json()["sessions"][0]["owner"].clone();
    assert_eq!(owner["pid"], std::process::id(), "{owner}");
    // Session s1 is mid-turn and its Claude Code runs: a second session, in a Claude
    // Code of its own (here `git` running the hook as an alias), is not a recovery.
    let alias = format!("alias.start=!'{}' hook SessionStart", bin.display());
    let out = p
        .command("git")
        .args(["-c", &alias, "start"])
        .write_stdin(today(&p, "SessionStart-startup.json", "s2", None))
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    let h = p.hook_json();
    assert_ne!(h["sessions"][1]["owner"], owner, "{h:#}");
    assert_ne!(h["state"], "recovering", "{h:#}");
    assert!(!out.contains("CRASH DETECTED"), "{out}");
}

/// The recorded session up to the failing test, then the PreToolUse of a Bash `command`
/// that never got its PostToolUse: Claude Code died while it ran.
fn crashed_while_running(p: &Project, command: &str) {
    let mut lines = p.session_lines()[..28].to_vec();
    let mut pre: Value = serde_json::from_str(&lines[0]).unwrap();
    let session = pre["session_id"].clone();
    pre = json!({
        "session_id": session, "cwd": pre["cwd"], "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command, "description": "e2e"},
        "tool_use_id": "toolu_in_flight",
    });
    lines.push(pre.to_string());
    p.replay_lines(&lines);
}

/// A validation the agent ran from Bash (not `waymark validate`) that the crash
/// interrupted: the brief says to run it again (issue 31, item 3).
#[test]
fn a_validation_run_from_bash_and_interrupted_is_run_again() {
    let p = Project::new();
    crashed_while_running(&p, "cargo test --workspace");
    let brief = context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json")))
        .expect("a resume brief");
    assert!(brief.contains("CRASH DETECTED"), "{brief}");
    assert!(
        brief.contains("Re-run the interrupted validation: `cargo test --workspace`."),
        "{brief}"
    );
    let r = &p.hook_json()["recovery"];
    assert_eq!(r["was_validating"], true);
    assert_eq!(r["validation_cmd"], "cargo test --workspace");
}

/// A push the crash interrupted (PreToolUse seen, no PostToolUse): its outcome is unknown;
/// the brief says how to check, and running it again is asked about (issue 31, item 4).
#[test]
fn a_side_effect_in_flight_at_the_crash_is_checked_before_it_repeats() {
    let p = Project::new();
    crashed_while_running(&p, "git push origin main");
    let brief = context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json")))
        .expect("a resume brief");
    assert!(
        brief.contains("`git push origin main` was running when the session ended: whether it took effect is unknown. Check first: `git fetch` then `git status -sb`"),
        "{brief}"
    );
    assert!(
        brief.contains(
            "`git push origin main` (outcome unknown: it was running when the session ended"
        ),
        "{brief}"
    );
    let mut pre: Value = serde_json::from_str(&p.fixture("PreToolUse.json")).unwrap();
    pre["tool_name"] = "Bash".into();
    pre["tool_input"] = json!({"command": "git push origin main"});
    let out: Value = serde_json::from_str(&p.hook("PreToolUse", &pre.to_string())).unwrap();
    let decision = &out["hookSpecificOutput"];
    assert_eq!(decision["permissionDecision"], "ask", "{out}");
    let reason = decision["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains("whether it took effect is unknown"),
        "{reason}"
    );
}

/// A deploy left unknown by a crash has no check waymark knows: `waymark step checked`
/// says it was checked where it acts, the brief says so, and the repeat guard lets the
/// deploy run again (issue 42, case 5).
#[test]
fn waymark_step_checked_lets_an_unknown_side_effect_run_again() {
    let p = Project::new();
    p.write(
        ".orchestration/waymark.json",
        r#"{"side_effect_commands": ["^\\./deploy\\.sh"]}"#,
    );
    crashed_while_running(&p, "./deploy.sh prod");
    let brief = context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json")))
        .expect("a resume brief");
    assert!(
        brief.contains("then say so with `waymark step checked`"),
        "{brief}"
    );
    let mut pre: Value = serde_json::from_str(&p.fixture("PreToolUse.json")).unwrap();
    pre["tool_name"] = "Bash".into();
    pre["tool_input"] = json!({"command": "./deploy.sh prod"});
    let decision = |p: &Project| -> Value {
        let out = p.hook("PreToolUse", &pre.to_string());
        serde_json::from_str::<Value>(&out).map_or(Value::Null, |v| {
            v["hookSpecificOutput"]["permissionDecision"].clone()
        })
    };
    assert_eq!(decision(&p), "ask");
    let out = p.waymark().args(["step", "checked"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("Checked: `./deploy.sh prod`"),
        "{said}"
    );
    assert_eq!(decision(&p), Value::Null, "the guard no longer asks");
    let again = p.waymark().args(["step", "checked"]).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("Nothing to check"));
    // The next session (another start, another input).
    let mut start: Value = serde_json::from_str(&p.fixture("SessionStart-startup.json")).unwrap();
    start["session_id"] = "next-session".into();
    let brief = context_of(&p.hook("SessionStart", &start.to_string())).expect("a resume brief");
    assert!(brief.contains("checked since"), "{brief}");
}
