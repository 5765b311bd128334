//! Durable task state from the recorded session: hook.json, HOOK.md, status, regenerate,
//! corrupt files, and steps driven by hand.

mod util;

use serde_json::Value;
use util::Project;

fn step<'a>(hook: &'a Value, name: &str) -> &'a Value {
    hook["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap()
}

#[test]
fn replaying_the_recorded_session_yields_the_expected_plan() {
    let p = Project::new();
    let out = p.replay_lines(&p.session_lines());
    assert_eq!(util::replayed_events(&out).len(), 35);
    let h = p.hook_json();
    assert_eq!(h["schema_version"], "3.0");
    assert_eq!(step(&h, "Analyze parser")["status"], "completed");
    assert_eq!(step(&h, "Implement fix")["status"], "in_progress");
    assert_eq!(step(&h, "Implement fix")["attempt"], 1);
    assert_eq!(step(&h, "Validate")["status"], "pending");
    assert_eq!(h["state"], "step_running");
    let cur = &h["current_step"];
    assert_eq!(cur["step_name"], "Implement fix");
    assert_eq!(cur["attempt"], 1);
    assert_eq!(
        cur["files_touched"],
        serde_json::json!(["src/parser.rs", "src/main.rs"])
    );
    assert_eq!(
        cur["last_output"],
        "Implemented the fix; one test still fails."
    );
    assert_eq!(cur["working_on"], "Implementing fix");
    let triggers: Vec<_> = h["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trigger"].as_str().unwrap())
        .collect();
    assert_eq!(triggers, ["step_complete", "git_commit", "pre_compact"]);
    assert_eq!(h["checkpoints"][0]["step_name"], "Analyze parser");
    assert_eq!(h["checkpoints"][1]["step_name"], "Implement fix");
    // The history tells the story: start, step 1 running, completed, step 2 running.
    let hist: Vec<_> = h["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["trigger"].as_str().unwrap())
        .collect();
    assert_eq!(
        hist,
        [
            "task_start",
            "setup_complete",
            "step_start",
            "step_complete",
            "step_start"
        ]
    );
    assert_eq!(h["history"][0]["from_state"], "");

    let md = p.read(".orchestration/HOOK.md");
    assert!(
        md.contains("Resume step 2 \"Implement fix\" (attempt 1 of 3)"),
        "{md}"
    );
    assert!(md.contains("Do not repeat step 1 \"Analyze parser\": it is completed."));
    assert!(md.contains("## Completed Steps — DO NOT REPEAT"));
    assert!(md.contains("`src/parser.rs`") && md.contains("`src/main.rs`"));
    assert!(md.contains("git_commit"));
}

#[test]
fn replay_reports_bad_lines_by_number_and_goes_on() {
    let p = Project::new();
    let mut lines = p.session_lines()[..5].to_vec();
    lines.insert(2, "{ not json".into());
    lines.insert(4, "[]".into());
    let out = p.run(&["replay", "-"], lines.join("\n"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3: skipped"), "{err}");
    assert!(err.contains("line 5: skipped"), "{err}");
    assert_eq!(
        util::replayed_events(&String::from_utf8_lossy(&out.stdout)).len(),
        5
    );
    assert_eq!(p.hook_json()["steps"].as_array().unwrap().len(), 1);
}

#[test]
fn replay_from_a_file_exits_0() {
    let p = Project::new();
    let file = util::fixtures().join("session-tasks-commit-fail-compact.jsonl");
    p.waymark().arg("replay").arg(file).assert().success();
    assert_eq!(p.hook_json()["state"], "step_running");
}

#[test]
fn status_shows_state_step_attempt_checkpoints_and_receipts() {
    let p = Project::new();
    p.replay_lines(&p.session_lines());
    let out = p.waymark().arg("status").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("State:  step_running"), "{text}");
    assert!(
        text.contains("Step:   2 \"Implement fix\" — attempt 1 of 3"),
        "{text}"
    );
    assert!(text.contains("Checkpoints: 3"));
    let json: Value = serde_json::from_slice(
        &p.waymark()
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["task"]["current_step"]["step_name"], "Implement fix");
    assert_eq!(json["task"]["checkpoints"].as_array().unwrap().len(), 3);
}

#[test]
fn a_deleted_or_corrupt_hook_md_is_rebuilt() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..20]);
    let good = p.read(".orchestration/HOOK.md");
    std::fs::remove_file(p.path(".orchestration/HOOK.md")).unwrap();
    p.waymark().arg("regenerate").assert().success();
    let rebuilt = p.read(".orchestration/HOOK.md");
    assert_eq!(strip_ago(&rebuilt), strip_ago(&good));
    p.write(".orchestration/HOOK.md", "garbage");
    // The next session start rebuilds it, even with nothing else to save.
    let compact = p.fixture("SessionStart-compact.json").replace(
        "3f982ded-ddff-46cb-8184-424a80a480d3",
        "dc5c038f-fe1b-4284-bef5-f12c0c71733d",
    );
    let before = p.read(".orchestration/hook.json");
    p.hook("SessionStart", &compact);
    assert_eq!(
        p.read(".orchestration/hook.json"),
        before,
        "nothing else changed"
    );
    assert_eq!(
        strip_ago(&p.read(".orchestration/HOOK.md")),
        strip_ago(&good)
    );
    p.write(".orchestration/HOOK.md", "garbage");
    // Any change regenerates it too.
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    assert!(
        p.read(".orchestration/HOOK.md")
            .contains("## What To Do Now")
    );
}

fn strip_ago(md: &str) -> String {
    md.lines()
        .filter(|l| !l.contains(" ago"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_corrupt_hook_json_is_restored_from_the_bak_and_logged() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..22]);
    p.write(
        ".orchestration/hook.json",
        "{\"version\": \"1.0\", \"task_id\": ",
    );
    let out = p.run(&["hook", "Stop"], p.fixture("Stop.json"));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("restored the last good state from hook.json.bak")
    );
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("hook.json was corrupt")
    );
    let h = p.hook_json();
    assert_eq!(step(&h, "Implement fix")["status"], "in_progress");
    let kept = std::fs::read_dir(p.path(".orchestration"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("hook.json.corrupt-")
        })
        .count();
    assert_eq!(kept, 1, "the corrupt bytes are kept, not lost");
}

#[test]
fn a_future_schema_is_reported_and_never_overwritten() {
    let p = Project::new();
    p.replay_lines(&p.session_lines()[..5]);
    let text = p
        .read(".orchestration/hook.json")
        .replace("\"schema_version\": \"3.0\"", "\"schema_version\": \"4.0\"");
    p.write(".orchestration/hook.json", &text);
    let out = p.run(
        &["hook", "UserPromptSubmit"],
        p.fixture("UserPromptSubmit.json"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema version 4.0"));
    assert_eq!(p.read(".orchestration/hook.json"), text);
    p.waymark().arg("status").assert().code(1);
}

#[test]
fn steps_by_hand_and_attempts_after_failure() {
    let p = Project::new();
    p.waymark()
        .args([
            "task",
            "start",
            "--id",
            "fix-parser",
            "--step",
            "analyze",
            "--step",
            "implement",
        ])
        .assert()
        .success();
    p.waymark()
        .args(["step", "start", "analyze"])
        .assert()
        .success();
    p.waymark()
        .args(["step", "fail", "analyze"])
        .assert()
        .success();
    let out = p
        .waymark()
        .args(["step", "start", "analyze"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("attempt 2"));
    p.waymark()
        .args(["step", "done", "analyze"])
        .assert()
        .success();
    let h = p.hook_json();
    assert_eq!(h["task_id"], "fix-parser");
    assert_eq!(step(&h, "analyze")["attempt"], 2);
    assert_eq!(h["checkpoints"][0]["trigger"], "step_complete");
    p.waymark().args(["step", "start", "nope"]).assert().code(2);
    p.waymark().args(["task", "start"]).assert().code(2);
    p.waymark().args(["task", "abandon"]).assert().success();
    assert_eq!(p.hook_json()["state"], "abandoned");
    assert!(p.path(".orchestration/tasks/fix-parser/hook.json").exists());
    assert!(p.path(".orchestration/tasks/fix-parser/HOOK.md").exists());
}

#[test]
fn max_attempts_from_config_hands_over_to_a_human() {
    let p = Project::new();
    p.write(".orchestration/waymark.json", r#"{"max_attempts": 2}"#);
    p.waymark()
        .args(["task", "start", "--step", "flaky"])
        .assert()
        .success();
    for _ in 0..2 {
        p.waymark()
            .args(["step", "start", "flaky"])
            .assert()
            .success();
        p.waymark()
            .args(["step", "fail", "flaky"])
            .assert()
            .success();
    }
    // Past the last attempt the start is refused, every time, with the way out.
    for _ in 0..2 {
        p.waymark()
            .args(["step", "start", "flaky"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("waymark step retry"));
    }
    let h = p.hook_json();
    assert_eq!(h["state"], "awaiting_human");
    assert_eq!(
        h["history"].as_array().unwrap().last().unwrap()["trigger"],
        "max_attempts_exceeded"
    );
}

#[test]
fn todo_write_feeds_the_plan() {
    let p = Project::new();
    let event = serde_json::json!({
        "session_id": "s", "cwd": p.root(), "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
        "tool_input": {"todos": [
            {"content": "Read code", "status": "completed", "activeForm": "Reading code"},
            {"content": "Write fix", "status": "in_progress", "activeForm": "Writing fix"},
            {"content": "Run tests", "status": "pending", "activeForm": "Running tests"}
        ]},
        "tool_response": {}
    });
    p.hook("PostToolUse", &event.to_string());
    let h = p.hook_json();
    assert_eq!(step(&h, "Read code")["status"], "completed");
    assert_eq!(step(&h, "Write fix")["status"], "in_progress");
    assert_eq!(h["current_step"]["working_on"], "Writing fix");
}

#[test]
fn every_state_change_goes_to_the_tasks_history_log_not_to_hook_json() {
    let p = Project::new();
    p.waymark()
        .args([
            "task", "start", "--id", "long", "--step", "a", "--step", "b",
        ])
        .assert()
        .success();
    let mut lines = Vec::new();
    for i in 0..120 {
        let id = if i % 2 == 0 { "step-1" } else { "step-2" };
        lines.push(
            serde_json::json!({"session_id":"s","cwd":p.root(),"hook_event_name":"PostToolUse","tool_name":"TaskUpdate",
                "tool_input":{"taskId": id,"status":"in_progress"},"tool_response":{}})
            .to_string(),
        );
    }
    p.replay_lines(&lines);
    let raw: Value = serde_json::from_str(&p.read(".orchestration/hook.json")).unwrap();
    assert!(
        raw.get("history").is_none(),
        "hook.json does not grow with the task"
    );
    let counted = raw["history_count"].as_u64().unwrap();
    assert!(counted > 240, "{counted}");
    let log = p.log(".orchestration/tasks/long/history.jsonl");
    assert_eq!(log.len() as u64, counted);
    assert_eq!(log[0]["trigger"], "task_start");
}

/// A hook.json of schema 1 (one session, history, checkpoints with their snapshots and
/// receipts inline) is read as it is, and moved to schema 3 at the next change: nothing
/// is lost.
#[test]
fn a_schema_1_hook_json_is_migrated_and_nothing_is_lost() {
    let p = Project::new();
    let v1 = serde_json::json!({
        "version": "1.0", "schema_version": "1.0", "task_id": "old", "workspace_id": "w",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:10:00Z",
        "state": "step_running", "task_index": 0,
        "current_step": {"step_id": "1", "step_name": "Fix", "step_index": 0,
            "started_at": "2026-01-01T00:00:00Z", "attempt": 1, "max_attempts": 3,
            "files_touched": ["src/a.rs"]},
        "steps": [{"id": "1", "name": "Fix", "index": 0, "status": "in_progress",
            "source": "task", "attempt": 1, "receipt_ids": ["rcpt-00000001"]}],
        "history": [
            {"timestamp": "2026-01-01T00:00:00Z", "from_state": "", "to_state": "initializing", "trigger": "task_start"},
            {"timestamp": "2026-01-01T00:00:01Z", "from_state": "initializing", "to_state": "step_pending", "trigger": "setup_complete"}],
        "history_archived": 0,
        "checkpoints": [{"checkpoint_id": "ckpt-00000001", "created_at": "2026-01-01T00:05:00Z",
            "step_name": "Fix", "step_index": 0, "description": "Commit abc", "trigger": "git_commit",
            "git_branch": "main", "git_commit": "0123456789012345678901234567890123456789",
            "git_dirty": true,
            "files_snapshot": [{"path": "src/a.rs", "size": 3, "mod_time": "2026-01-01T00:05:00Z",
                "sha256": "0011223344556677", "exists": true}]}],
        "receipts": [{"receipt_id": "rcpt-00000001", "step_name": "Fix", "command": "cargo test",
            "exit_code": 0, "started_at": "2026-01-01T00:06:00Z", "completed_at": "2026-01-01T00:06:01Z",
            "duration": "1s", "stdout_hash": "aa", "stderr_hash": "bb", "key_path": "m/44'/236'/0'/0",
            "signature": "", "sig_version": 2}],
        "session": {"session_id": "s-old", "started_at": "2026-01-01T00:00:00Z",
            "last_event_at": "2026-01-01T00:10:00Z", "status": "idle"}
    });
    p.write(".orchestration/hook.json", &v1.to_string());
    // Read as it is.
    let out = p.waymark().args(["status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["task"]["state"], "step_running", "{status}");
    // The next change moves it to schema 3.
    p.waymark().args(["step", "add", "Test"]).assert().success();
    let raw: Value = serde_json::from_str(&p.read(".orchestration/hook.json")).unwrap();
    assert_eq!(raw["schema_version"], "3.0");
    for gone in ["history", "checkpoints", "receipts", "session"] {
        assert!(raw.get(gone).is_none(), "{gone} is still inline");
    }
    assert_eq!(raw["sessions"][0]["session_id"], "s-old");
    assert_eq!(
        (
            raw["checkpoint_count"].as_u64(),
            raw["receipt_count"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let h = p.hook_json();
    let triggers: Vec<_> = h["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["trigger"].as_str().unwrap())
        .collect();
    assert_eq!(triggers[..2], ["task_start", "setup_complete"]);
    assert_eq!(h["checkpoints"][0]["checkpoint_id"], "ckpt-00000001");
    assert_eq!(h["receipts"][0]["receipt_id"], "rcpt-00000001");
    // The checkpoint's inline snapshot became its capture record.
    let capture = p.capture(&h["checkpoints"][0]);
    assert_eq!(capture["files"][0]["sha256"], "0011223344556677");
    assert_eq!(capture["git_dirty"], true);
}

#[test]
fn a_task_binds_to_the_in_progress_intent() {
    let p = Project::new();
    p.write(
        ".orchestration/active_intents.yaml",
        "active_intents:\n  - id: INT-007\n    name: Parser\n    status: IN_PROGRESS\n    owned_scope: [\"src/**\"]\n    steps: [\"Analyze\", \"Fix\"]\n",
    );
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    let h = p.hook_json();
    assert_eq!(h["task_id"], "INT-007");
    assert_eq!(h["intent_id"], "INT-007");
    assert_eq!(h["steps"].as_array().unwrap().len(), 2);
    p.waymark().args(["task", "done"]).assert().success();
    assert!(p.path(".orchestration/tasks/INT-007/hook.json").exists());
}

/// An agent with no task-list tool (Claude Code 2.1.332's default) keeps its plan from its
/// Bash tool: `waymark plan` adds the steps once and numbers them, `waymark step … N`
/// moves step N, and the step is the session's that ran the command.
#[test]
fn an_agent_keeps_its_plan_with_waymark_plan_and_step_numbers() {
    let p = Project::new();
    let plan = p
        .waymark()
        .args(["plan", "Read the grammar", "Write the parser"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&plan.stdout);
    assert!(plan.status.success(), "{said}");
    assert!(
        said.contains("Added 2 steps to the plan.")
            && said.contains(" 1. [ ] Read the grammar")
            && said.contains(" 2. [ ] Write the parser"),
        "{said}"
    );
    p.waymark()
        .args(["step", "start", "2"])
        .env("CLAUDE_CODE_SESSION_ID", "agent-session-1")
        .assert()
        .success();
    let again = p
        .waymark()
        .args(["plan", "write the parser", "Test it"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.contains("Added 1 step to the plan (1 already in it).")
            && said.contains(" 2. [>] Write the parser")
            && said.contains(" 3. [ ] Test it"),
        "{said}"
    );
    let h = p.hook_json();
    assert_eq!(h["current_step"]["step_name"], "Write the parser");
    assert_eq!(h["sessions"][0]["session_id"], "agent-session-1");
    assert_eq!(h["sessions"][0]["step"], "Write the parser");
    p.waymark().args(["step", "done", "2"]).assert().success();
    let listed = p.waymark().arg("plan").output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains(" 2. [x] Write the parser"));
    p.waymark().args(["step", "start", "9"]).assert().code(2);
}

/// A schema-2 hook.json as the previous waymark wrote it (tests/fixtures/state/schema-2:
/// its plan inline, the outline and sums of its sealed members, and a receipt it held
/// until its log was synced, which a power cut took from the log) becomes schema 3 at the
/// next change: the plan in plan.json, the bookkeeping gone, the receipt back in its log.
#[test]
fn a_schema_2_hook_json_is_migrated_and_nothing_is_lost() {
    let p = Project::new();
    let task = "task-20261126-090440";
    copy_the_schema_2_state(&p, task);
    let out = p.waymark().args(["status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        status["task"]["steps"].as_array().unwrap().len(),
        3,
        "{status}"
    );
    p.waymark()
        .args(["step", "add", "Document it"])
        .assert()
        .success();
    let raw: Value = serde_json::from_str(&p.read(".orchestration/hook.json")).unwrap();
    assert_eq!(raw["schema_version"], "3.0");
    for gone in [
        "steps",
        "outline",
        "plan_sum",
        "listed",
        "redacted_by",
        "unsynced_receipts",
    ] {
        assert!(raw.get(gone).is_none(), "{gone} is still in hook.json");
    }
    nothing_of_the_schema_2_state_is_lost(&p);
}

/// Copies tests/fixtures/state/schema-2 (hook.json and the logs of `task`) into `p`'s
/// state directory, pointed at `p`.
fn copy_the_schema_2_state(p: &Project, task: &str) {
    let from =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/state/schema-2");
    for f in [
        "hook.json".to_string(),
        format!("tasks/{task}/history.jsonl"),
        format!("tasks/{task}/checkpoints.jsonl"),
        format!("tasks/{task}/receipts.jsonl"),
    ] {
        let text = std::fs::read_to_string(from.join(&f))
            .unwrap()
            .replace(util::RECORDED_ROOT, p.root().to_str().unwrap());
        p.write(&format!(".orchestration/{f}"), &text);
    }
}

/// Checks that the migrated state holds the plan with the added step, the running step,
/// the receipt the log had lost (back after the one it follows), the history and the
/// checkpoints, and that HOOK.md names them.
fn nothing_of_the_schema_2_state_is_lost(p: &Project) {
    let h = p.hook_json();
    let names: Vec<&str> = h["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Analyze parser", "Implement fix", "Validate", "Document it"]
    );
    assert_eq!(step(&h, "Analyze parser")["status"], "completed");
    assert_eq!(h["current_step"]["step_name"], "Implement fix");
    // The receipt the log had lost is back, after the one it follows.
    let ids: Vec<&str> = h["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["receipt_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["rcpt-f3bf5454", "rcpt-442d0de4"]);
    assert_eq!(h["receipt_count"], 2);
    assert_eq!(
        h["history"].as_array().unwrap().len() as u64,
        h["history_count"].as_u64().unwrap()
    );
    assert_eq!(h["checkpoints"].as_array().unwrap().len(), 2);
    let md = p.read(".orchestration/HOOK.md");
    assert!(
        md.contains("Document it") && md.contains("rcpt-442d0de4"),
        "{md}"
    );
}

/// A planted or hand-grown hook.json is cut to the bounds when read (issue 32, item 8):
/// 10,000 sessions to 8, 20,000 files of a step to 1,000, and HOOK.md names 50 of them.
#[test]
fn a_planted_task_is_cut_to_its_bounds() {
    let p = Project::new();
    p.replay_lines(&p.session_lines());
    let path = ".orchestration/hook.json";
    let mut hook: Value = serde_json::from_str(&p.read(path)).unwrap();
    let session = hook["sessions"][0].clone();
    hook["sessions"] = (0..10_000)
        .map(|i| {
            let mut s = session.clone();
            s["session_id"] = format!("planted-{i}").into();
            s["status"] = "ended".into();
            s
        })
        .collect();
    hook["current_step"]["files_touched"] = (0..20_000).map(|i| format!("src/f{i}.rs")).collect();
    p.write(path, &hook.to_string());
    p.hook("PostToolUse", &p.write_event("src/new.rs", "fn new() {}\n"));
    let h = p.hook_json();
    assert_eq!(h["sessions"].as_array().unwrap().len(), 8);
    let files = h["current_step"]["files_touched"].as_array().unwrap();
    assert_eq!(files.len(), 1000);
    assert!(!files.iter().any(|f| f == "src/new.rs"), "the list is full");
    let md = p.read(".orchestration/HOOK.md");
    assert!(
        md.contains("… and 950 more files (hook.json lists them)"),
        "{md}"
    );
    assert!(
        md.contains("the list keeps a step's first 1000 files"),
        "{md}"
    );
    assert!(md.len() < 20_000, "HOOK.md is {} bytes", md.len());
}

/// A step named with 10 MB of text dense with secrets' keywords is kept, cut and
/// redacted, within the hook's deadline (issue 32, item 8): every keyword looks only
/// near itself, so the cost grows with the text, not with the text times its keywords.
#[test]
fn a_huge_keyword_dense_step_name_is_kept_within_the_deadline() {
    let p = Project::new();
    let mut e: Value =
        serde_json::from_str(&p.fixture_of("2.1.332", "PostToolUse-TaskCreate.json")).unwrap();
    let unit = "password=hunter2 token=abc api_key=xyz DB_PASSWORD x --token y | a | password | ";
    let name = unit.repeat((10 << 20) / unit.len());
    e["tool_input"]["subject"] = name.clone().into();
    e["tool_response"]["task"]["subject"] = name.into();
    p.hook("PostToolUse", &e.to_string());
    let log = std::fs::read_to_string(p.path(".orchestration/waymark.log")).unwrap_or_default();
    assert!(!log.contains("deadline"), "{log}");
    let h = p.hook_json();
    let kept = h["steps"][0]["name"].as_str().unwrap();
    assert_eq!(kept.chars().count(), 500);
    assert!(
        kept.contains("[REDACTED]") && !kept.contains("hunter2"),
        "{kept}"
    );
}
