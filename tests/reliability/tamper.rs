//! The record is tamper-evident. Receipts are chained (task id, the previous receipt's
//! link, an authenticated head in hook.json), so `waymark receipts --verify` names a receipt
//! replayed from another task, reordered or deleted. The Agent Trace ledger's records each
//! name the SHA-256 of the line before them, so an edited, removed or inserted line breaks
//! the chain, and `waymark trace --verify` names where.

use crate::common::*;
use crate::util::Project;

/// A project whose ledger holds two cycles of an agent's events.
fn ledger() -> (Project, String) {
    let p = Project::new();
    for (tag, dir) in [("a1", "a"), ("b1", "b")] {
        for (e, v) in cycle(p.root(), "s", dir, tag) {
            assert_eq!(run_hook(&p, e, &v).status.code(), Some(0));
        }
    }
    let text = p.read(".orchestration/agent_trace.jsonl");
    assert!(text.lines().count() >= 8, "{text}");
    (p, text)
}

fn verify(p: &Project) -> (Option<i32>, String) {
    let out = p.waymark().args(["trace", "--verify"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), text)
}

#[test]
fn an_untouched_ledger_verifies_and_every_record_is_linked() {
    let (p, text) = ledger();
    let (code, out) = verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("chained from the first line") && out.contains("chain intact"),
        "{out}"
    );
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let prev = v["metadata"]["waymark"]["prev"].as_str().unwrap();
        assert_eq!(prev.is_empty(), i == 0, "line {}: {prev:?}", i + 1);
    }
}

#[test]
fn an_edited_removed_or_inserted_line_is_named() {
    let (p, text) = ledger();
    let lines: Vec<&str> = text.lines().collect();
    let write = |lines: &[String]| {
        p.write(
            ".orchestration/agent_trace.jsonl",
            &(lines.join("\n") + "\n"),
        )
    };
    let owned = || lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();

    // Line 3 edited (its exit code): the chain breaks at line 4, which names line 3.
    let mut edited = owned();
    edited[2] = edited[2].replacen("\"kind\":\"", "\"kind\":\"x", 1);
    assert_ne!(edited[2], lines[2]);
    write(&edited);
    let (code, out) = verify(&p);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("chain BROKEN at line 4: it does not name line 3"),
        "{out}"
    );

    // Line 5 removed.
    let mut removed = owned();
    removed.remove(4);
    write(&removed);
    let (code, out) = verify(&p);
    assert_eq!(code, Some(1));
    assert!(out.contains("chain BROKEN at line 5"), "{out}");

    // A record of someone else's inserted after line 2.
    let mut inserted = owned();
    inserted.insert(
        2,
        r#"{"version":"0.1.0","id":"x","timestamp":"2026-01-01T00:00:00Z","files":[]}"#.into(),
    );
    write(&inserted);
    let (code, out) = verify(&p);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("chain BROKEN at line 3: it carries no link"),
        "{out}"
    );

    // Listing without --verify says the same and is not a failure.
    let out = p.waymark().arg("trace").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("chain BROKEN at line 3"));
}

#[test]
fn a_ledger_begun_by_an_older_waymark_is_chained_from_where_the_chain_starts() {
    let p = Project::new();
    // Two records without links, as waymark wrote them before the chain.
    let old: Vec<String> = (0..2)
        .map(|i| format!(r#"{{"version":"0.1.0","id":"old-{i}","timestamp":"2026-01-01T00:00:00Z","files":[],"metadata":{{"waymark":{{"kind":"bash","event":"PostToolUse","session_id":"s"}}}}}}"#))
        .collect();
    p.write(".orchestration/agent_trace.jsonl", &(old.join("\n") + "\n"));
    for (e, v) in cycle(p.root(), "s", "a", "a1") {
        run_hook(&p, e, &v);
    }
    let (code, out) = verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("chained from line 3 (the 2 lines before it predate the chain)"),
        "{out}"
    );
}

fn receipts_verify(p: &Project) -> (Option<i32>, String) {
    let out = p.waymark().args(["receipts", "--verify"]).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn deleted_reordered_and_replayed_receipts_break_the_chain() {
    let p = Project::new();
    for (cmd, code) in [("exit 1", 1), ("exit 0", 0), ("exit 0", 0)] {
        p.waymark()
            .args(["validate", "--", "sh", "-c", cmd])
            .assert()
            .code(code);
    }
    let (code, out) = receipts_verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("chain: intact (3 chained receipts"), "{out}");
    let hook = p.hook_json();
    assert_eq!(hook["receipt_head"]["count"], 3);
    let log = format!(
        ".orchestration/tasks/{}/receipts.jsonl",
        hook["task_id"].as_str().unwrap()
    );
    let original = p.read(&log);
    let fails_with = |needle: &str| {
        let (code, out) = receipts_verify(&p);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(needle), "{needle}: {out}");
        // Every receipt left still has a valid signature: only the chain tells.
        assert!(!out.contains("INVALID:"), "{out}");
    };

    // The failing receipt deleted: the next one follows a receipt no longer there.
    p.edit_receipts(|r| {
        r.remove(0);
    });
    fails_with("chain: BROKEN at");
    fails_with("missing before it");
    p.write(&log, &original);

    // The last one deleted: hook.json's authenticated head counts one more.
    p.edit_receipts(|r| {
        r.pop();
    });
    fails_with(
        "missing at the end: hook.json's authenticated head counts 3 chained receipts, the log ends after 2",
    );
    p.write(&log, &original);

    // Two swapped.
    p.edit_receipts(|r| r.swap(1, 2));
    fails_with("reordered");
    p.write(&log, &original);

    a_receipt_of_another_task_is_a_replay(&p, &hook);
}

/// A passing receipt of another task, signed with the same key, copied into `p`'s log
/// (`hook` is `p`'s hook.json): its signature holds, the chain breaks and names it a replay.
fn a_receipt_of_another_task_is_a_replay(p: &Project, hook: &serde_json::Value) {
    // Task ids are to the second: the other task must start in another second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let other = Project::new();
    let key = "waymark/keys/master.key";
    std::fs::create_dir_all(other.config.path().join("waymark/keys")).unwrap();
    std::fs::copy(p.config.path().join(key), other.config.path().join(key)).unwrap();
    other
        .waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    let stolen = other.hook_json()["receipts"][0].clone();
    assert_ne!(stolen["task_id"], hook["task_id"]);
    p.edit_receipts(|r| r.push(stolen));
    let out = p
        .waymark()
        .args(["receipts", "--json", "--verify"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chain"]["status"], "broken");
    assert_eq!(
        v["receipts"][3]["status"], "valid",
        "the signature itself holds"
    );
    let why = v["receipts"][3]["chain"].as_str().unwrap();
    assert!(why.contains("replayed: it was made in task"), "{why}");
}

/// Every point where a validation writes: its receipt's log line (half written, then
/// whole), the plan and hook.json (each a temp file, then the rename), and after them.
const WRITES: &[&str] = &[
    "store.locked",
    "append.torn",
    "store.logged",
    "atomic.write",
    "atomic.rename",
    "atomic.swap",
    "store.saved",
];

/// A validation killed at each of its writes in turn (fault injection, not sampling),
/// followed by more validations: the chain never reads as tampered with (issue 30). A kill
/// after the receipt reached its log and before hook.json counted it leaves an
/// interrupted write, which `--verify` names as such, and which the next validation
/// counts and chains after.
#[test]
fn a_validation_killed_at_any_of_its_writes_never_makes_the_chain_look_tampered() {
    let mut struck = 0;
    for point in WRITES {
        for nth in 1..=3 {
            let p = Project::new();
            let validate = |fault: Option<String>| {
                let mut c = p.waymark();
                if let Some(f) = fault {
                    c.env("WAYMARK_TEST_FAULT", f);
                }
                c.args(["validate", "--", "true"]).output().unwrap()
            };
            assert!(validate(None).status.success());
            let killed = validate(Some(format!("{point}@{nth}:kill")));
            if killed.status.code().is_some() {
                continue; // the point is not reached that many times
            }
            struck += 1;
            let (code, out) = receipts_verify(&p);
            assert_eq!(code, Some(0), "{point}@{nth}, right after the kill:\n{out}");
            assert!(!out.contains("BROKEN"), "{point}@{nth}:\n{out}");
            for _ in 0..2 {
                assert!(validate(None).status.success(), "{point}@{nth}");
            }
            let (code, out) = receipts_verify(&p);
            assert_eq!(code, Some(0), "{point}@{nth}, after two more:\n{out}");
            assert!(
                out.contains("chain: intact") && !out.contains("interrupted"),
                "{point}@{nth}: head and log agree again:\n{out}"
            );
            let hook = p.hook_json();
            assert_eq!(
                hook["receipt_count"].as_u64().unwrap(),
                hook["receipts"].as_array().unwrap().len() as u64,
                "{point}@{nth}"
            );
        }
    }
    assert!(struck >= WRITES.len(), "only {struck} kills");
}

/// Killed between the receipt's log line and hook.json: `--verify` says an interrupted
/// write, never tampering; the next validation counts it.
#[test]
fn a_save_cut_between_the_log_and_hook_json_is_an_interrupted_write() {
    let p = Project::new();
    // The second save of a validation is the one that records its receipt.
    for fault in [None, Some("store.logged@2:kill")] {
        let mut c = p.waymark();
        if let Some(f) = fault {
            c.env("WAYMARK_TEST_FAULT", f);
        }
        c.args(["validate", "--", "true"]).output().unwrap();
    }
    let (code, out) = receipts_verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("chain: interrupted write at receipt 2 (rcpt-")
            && out.contains("not tampering"),
        "{out}"
    );
}
