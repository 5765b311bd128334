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

fn log_json(p: &Project, args: &[&str]) -> Vec<Value> {
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
    let events = log_json(&p, &[]);
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
    let parsed: Vec<chrono::DateTime<chrono::Utc>> =
        times.iter().map(|t| t.parse().unwrap()).collect();
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
    let events = log_json(&p, &[]);
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
    let events = log_json(&p, &[]);
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
    let current = log_json(&p, &[]);
    assert!(
        current.iter().all(|e| e["details"]["task"] == "second"),
        "{current:?}"
    );
    let all = log_json(&p, &["--all"]);
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
