//! Kept events applied exactly once, however many (docs/guarantees.md, "Bounded and
//! stack-safe"): a pending.jsonl of tens of thousands of events, built from the real
//! fixtures, is applied by the events that follow, a bounded batch at a time, each event
//! leaving the journal as it is applied; every tool call's trace record appears once, none
//! is lost, and a process killed midway (SIGKILL) neither loses nor repeats one.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::util::Project;

const RELEASE: &str = "2.1.332";

/// The kinds of tool call kept, from the real fixtures: a Write, an Edit, a Bash command.
fn templates(p: &Project) -> Vec<Value> {
    [
        "PostToolUse-Write.json",
        "PostToolUse-Edit.json",
        "PostToolUse-Bash.json",
    ]
    .iter()
    .map(|f| serde_json::from_str(&p.fixture_of(RELEASE, f)).unwrap())
    .collect()
}

/// Kept event `i`: fixture `i % 3` with its own tool_use_id, a file among 40 (the task's
/// touched files stay few), a plain command.
fn kept(p: &Project, templates: &[Value], i: usize) -> String {
    let mut e = templates[i % templates.len()].clone();
    e["tool_use_id"] = format!("toolu_kept_{i}").into();
    e["session_id"] = "s".into();
    let file = p
        .path(&format!("src/kept/f{}.rs", i % 40))
        .display()
        .to_string();
    if e["tool_name"] == "Bash" {
        e["tool_input"]["command"] = format!("echo kept {i}").into();
    } else {
        e["tool_input"]["file_path"] = file.clone().into();
        e["tool_response"]["filePath"] = file.into();
    }
    let at = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap()
        + chrono::Duration::milliseconds(i as i64);
    json!({"received_at": at.to_rfc3339(), "event": "PostToolUse", "input": e}).to_string()
}

/// A project whose task exists, with `n` kept events in pending.jsonl.
fn with_pending(n: usize) -> Project {
    let p = Project::new();
    let first = live(&p, 0);
    assert_eq!(run_hook(&p, "PostToolUse", &first).status.code(), Some(0));
    let t = templates(&p);
    let mut text = String::with_capacity(n * 1200);
    for i in 0..n {
        text.push_str(&p.sealed(&kept(&p, &t, i)));
        text.push('\n');
    }
    std::fs::write(p.path(".orchestration/pending.jsonl"), text).unwrap();
    p
}

/// The live event `k`: a Bash call of its own.
fn live(p: &Project, k: usize) -> Value {
    let mut e: Value =
        serde_json::from_str(&p.fixture_of(RELEASE, "PostToolUse-Bash.json")).unwrap();
    e["tool_use_id"] = format!("toolu_live_{k}").into();
    e["session_id"] = "s".into();
    e["prompt_id"] = format!("live-{k}").into();
    e["tool_input"]["command"] = format!("echo live {k}").into();
    e
}

fn pending_left(p: &Project) -> bool {
    p.path(".orchestration/pending.jsonl").exists()
}

/// Runs live events (each within its deadline, exit 0) until nothing is kept; returns
/// how many ran, the first being `from`.
fn drain(p: &Project, from: usize, deadline: &str, most: usize) -> usize {
    let mut k = from;
    while pending_left(p) {
        assert!(
            k - from < most,
            "pending.jsonl still there after {most} events"
        );
        let mut cmd = hook_command(p, "PostToolUse");
        cmd.env("WAYMARK_HOOK_DEADLINE", deadline);
        let start = Instant::now();
        let out = spawn_hook(cmd, live(p, k).to_string().as_bytes())
            .wait_with_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let limit = humantime(deadline) + Duration::from_secs(2);
        assert!(
            start.elapsed() < limit,
            "event {k} took {:?}",
            start.elapsed()
        );
        k += 1;
    }
    assert!(!p.path(".orchestration/pending.cursor").exists());
    k - from
}

fn humantime(d: &str) -> Duration {
    Duration::from_secs_f64(d.trim_end_matches('s').parse().unwrap())
}

/// How many trace records each tool_use_id has.
fn trace_ids(p: &Project) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for r in trace_records(p) {
        if let Some(id) = r["metadata"]["waymark"]["tool_use_id"].as_str() {
            *counts.entry(id.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

/// Every kept event's record exactly once, and every live event's (those not killed).
fn assert_exactly_once(p: &Project, n: usize, live: impl Iterator<Item = usize>) {
    let counts = trace_ids(p);
    let wrong: Vec<String> = (0..n)
        .map(|i| format!("toolu_kept_{i}"))
        .chain(live.map(|k| format!("toolu_live_{k}")))
        .filter(|id| counts.get(id) != Some(&1))
        .map(|id| format!("{id}: {}", counts.get(&id).copied().unwrap_or(0)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} tool calls not traced exactly once, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}

fn drained_exactly_once(n: usize, deadline: &str) {
    let p = with_pending(n);
    let ran = drain(&p, 1, deadline, n);
    assert_exactly_once(&p, n, 0..=ran);
}

/// 20,000 kept events: applied by the events after, exactly once each, none lost.
#[test]
fn twenty_thousand_kept_events_are_applied_exactly_once() {
    drained_exactly_once(20_000, "4s");
}

/// 100,000 kept events, the same. Long in a debug build: run with the others by
/// `cargo test --test reliability -- --ignored` (or with `WAYMARK_TEST_BIN` a release build).
#[test]
#[ignore]
fn a_hundred_thousand_kept_events_are_applied_exactly_once() {
    drained_exactly_once(100_000, "4s");
}

/// Hooks applying kept events are killed (SIGKILL) at random moments; the events after
/// still apply each kept event exactly once.
#[test]
fn a_kill_midway_neither_loses_nor_repeats_a_kept_event() {
    let (mut rng, seed) = Rng::from_env_or_time("WAYMARK_PENDING_SEED");
    let n = 6_000;
    let p = with_pending(n);
    let mut killed = Vec::new();
    for k in 1..=12 {
        let mut cmd = hook_command(&p, "PostToolUse");
        cmd.env("WAYMARK_HOOK_DEADLINE", "4s");
        let mut child = spawn_hook(cmd, live(&p, k).to_string().as_bytes());
        std::thread::sleep(Duration::from_millis(50 + rng.below(1500)));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed.push(k);
        }
        child.wait().unwrap();
    }
    let ran = drain(&p, 13, "4s", n);
    let counts = trace_ids(&p);
    for k in &killed {
        let c = counts.get(&format!("toolu_live_{k}")).copied().unwrap_or(0);
        assert!(
            c <= 1,
            "seed {seed}: killed live event {k} traced {c} times"
        );
    }
    let finished = (0..13 + ran).filter(|k| !killed.contains(k));
    assert_exactly_once(&p, n, finished);
    assert!(!killed.is_empty(), "seed {seed}: no hook was killed");
}
