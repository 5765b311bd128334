//! `waymark log`: the task's timeline, from a real recorded Claude Code session replayed
//! into a real git repository, with real receipts.

mod util;

use serde_json::Value;
use util::Project;

/// The recorded session (two steps, a commit, a failed test run, a compaction), then a
/// validation that fails and one that passes.
fn session() -> Project {
    let p = Project::new();
    p.replay_lines(&p.session_lines());
    for cmd in [
        &["validate", "--", "sh", "-c", "exit 1"][..],
        &["validate", "--", "true"],
    ] {
        p.run(cmd, "");
    }
    p
}

fn log_json(p: &Project) -> Vec<Value> {
    log_json_of(p, &[])
}

fn log_json_of(p: &Project, args: &[&str]) -> Vec<Value> {
    let out = p.run(&[&["log", "--json"], args].concat(), "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_log_tells_the_recorded_session_in_time_order() {
    let p = session();
    let events = log_json(&p);
    assert_eq!(
        kinds(&events),
        [
            "session_started",
            "task_started",
            "step_started",
            "step_completed",
            "checkpoint",
            "step_started",
            "file_changed",
            "file_changed",
            "checkpoint",
            "compaction",
            "session_ended",
            "receipt",
            "step_started",
            "receipt",
            "checkpoint",
        ]
    );
    let times: Vec<&str> = events.iter().map(|e| e["time"].as_str().unwrap()).collect();
    // In time order to the millisecond (what the trace keeps).
    let parsed: Vec<i64> = times
        .iter()
        .map(|t| {
            t.parse::<chrono::DateTime<chrono::Utc>>()
                .unwrap()
                .timestamp_millis()
        })
        .collect();
    assert!(
        parsed.windows(2).all(|w| w[0] <= w[1]),
        "in time order: {times:?}"
    );
    for e in &events {
        let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["time", "kind", "what", "details"]);
    }
    // The files the second step wrote are its own, and its second attempt is told.
    assert_eq!(events[6]["details"]["step"], "Implement fix");
    assert_eq!(
        events[6]["details"]["files"],
        serde_json::json!(["src/parser.rs"])
    );
    assert_eq!(events[12]["details"]["attempt"], 2);
    assert_eq!(events[11]["details"]["passed"], false);
    assert_eq!(events[13]["details"]["passed"], true);
}

#[test]
fn every_checkpoint_and_receipt_of_the_logs_is_in_the_timeline_once() {
    let p = session();
    let events = log_json(&p);
    let hook = p.hook_json();
    let with = |key: &str, id: &Value| events.iter().filter(|e| e["details"][key] == *id).count();
    for c in hook["checkpoints"].as_array().unwrap() {
        assert_eq!(with("checkpoint_id", &c["checkpoint_id"]), 1, "{c}");
        let e = events
            .iter()
            .find(|e| e["details"]["checkpoint_id"] == c["checkpoint_id"])
            .unwrap();
        assert_eq!(e["details"]["trigger"], c["trigger"]);
        assert_eq!(
            e["time"]
                .as_str()
                .unwrap()
                .parse::<chrono::DateTime<chrono::Utc>>()
                .unwrap(),
            c["created_at"]
                .as_str()
                .unwrap()
                .parse::<chrono::DateTime<chrono::Utc>>()
                .unwrap()
        );
    }
    let receipts = hook["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 2);
    for r in receipts {
        assert_eq!(with("receipt_id", &r["receipt_id"]), 1, "{r}");
    }
}

#[test]
fn piped_the_log_is_plain_text_without_a_pager() {
    let p = session();
    let marker = p.config.path().join("pager-ran");
    let out = p
        .waymark()
        .arg("log")
        .env("PAGER", format!("touch {}; cat", marker.display()))
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no colour when piped: {text}");
    assert!(!marker.exists(), "no pager when stdout is not a terminal");
    let events = log_json(&p);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), events.len(), "{text}");
    for (line, e) in lines.iter().zip(&events) {
        assert!(line.contains(e["kind"].as_str().unwrap()), "{line}");
        assert!(line.ends_with(e["what"].as_str().unwrap()), "{line}");
    }
}

#[test]
fn all_adds_the_finished_tasks_from_their_archive() {
    let p = session();
    let first = p.hook_json()["task_id"].as_str().unwrap().to_string();
    assert!(p.run(&["task", "done"], "").status.success());
    assert!(
        p.run(&["task", "start", "--id", "second"], "")
            .status
            .success()
    );
    let current = log_json(&p);
    assert!(
        current.iter().all(|e| e["details"]["task"] == "second"),
        "{current:?}"
    );
    let all = log_json_of(&p, &["--all"]);
    let of = |t: &str| all.iter().filter(|e| e["details"]["task"] == t).count();
    assert!(of(&first) > current.len() && of("second") == current.len());
    let done = all
        .iter()
        .position(|e| e["kind"] == "task_completed")
        .unwrap();
    let second = all
        .iter()
        .position(|e| e["details"]["task"] == "second")
        .unwrap();
    assert!(
        done < second,
        "the first task ends before the second starts"
    );
    let text = String::from_utf8(p.run(&["log", "--all"], "").stdout).unwrap();
    assert!(
        text.contains(&format!("[{first}] ")) && text.contains("[second] "),
        "{text}"
    );
}

/// A session that pushes (a side effect) and stops on an API error, then a rewind: each is
/// told where it happened, the rewind after the checkpoint that can undo it.
#[test]
fn side_effects_errors_and_rewinds_are_in_the_log() {
    let p = session();
    let fixture = |name: &str| -> Value { serde_json::from_str(&p.fixture(name)).unwrap() };
    let failure = fixture("StopFailure.json");
    let mut start = fixture("SessionStart-startup.json");
    start["session_id"] = failure["session_id"].clone();
    let mut push = fixture("PostToolUse-Bash.json");
    push["session_id"] = failure["session_id"].clone();
    push["tool_input"]["command"] = "git push origin main".into();
    p.replay_lines(&[start.to_string(), push.to_string(), failure.to_string()]);
    let first = p.hook_json()["checkpoints"][0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    p.write("notes.txt", "made after the checkpoint\n");
    let out = p.run(&["rewind", &first], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let events = log_json(&p);
    let tail: Vec<String> = kinds(&events).split_off(15);
    assert_eq!(
        tail,
        [
            "session_started",
            "step_started",
            "side_effect",
            "checkpoint",
            "session_stopped_on_error",
            "checkpoint",
            "rewind",
        ]
    );
    let of = |k: &str| events.iter().find(|e| e["kind"] == k).unwrap();
    assert_eq!(
        of("side_effect")["details"]["command"],
        "git push origin main"
    );
    assert_eq!(of("side_effect")["details"]["step"], "Implement fix");
    assert_eq!(
        of("session_stopped_on_error")["details"]["error"],
        "invalid_request"
    );
    assert_eq!(of("rewind")["details"]["checkpoint_id"], first.as_str());
    assert_eq!(events[20]["details"]["trigger"], "pre_rewind");
}

/// `waymark log` in a terminal (a pseudo-terminal made by util-linux's `script`), with a
/// pager that leaves a mark, and what it printed.
fn in_a_terminal(p: &Project, no_color: bool) -> (String, bool) {
    let marker = p.config.path().join("pager-ran");
    let _ = std::fs::remove_file(&marker);
    let waymark = assert_cmd::cargo::cargo_bin("waymark");
    let mut cmd = p.command("script");
    cmd.args(["-qec", &format!("{} log", waymark.display()), "/dev/null"])
        .env("PAGER", format!("touch {}; cat", marker.display()))
        .env_remove("NO_COLOR");
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output().expect("util-linux's script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        marker.exists(),
    )
}

#[test]
fn in_a_terminal_the_log_is_paged_and_coloured_unless_no_color_is_set() {
    let p = session();
    let (text, paged) = in_a_terminal(&p, false);
    assert!(paged, "$PAGER runs when stdout is a terminal");
    assert!(
        text.contains("\x1b[32mreceipt"),
        "a passed receipt in green: {text:?}"
    );
    assert!(
        text.contains("\x1b[31mreceipt"),
        "a failed one in red: {text:?}"
    );
    let (text, paged) = in_a_terminal(&p, true);
    assert!(paged);
    assert!(!text.contains("\x1b["), "NO_COLOR: {text:?}");
    assert!(text.contains("receipt: true passed (exit 0)"), "{text}");
}
