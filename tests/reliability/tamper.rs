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

    // A passing receipt of another task, signed with the same key, copied in. (Task ids
    // are to the second: the other task must start in another second.)
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

/// A validation syncs one file: hook.json holds its receipt whole until the receipts log
/// is known to be on disk (`receipts.synced`). A log that lost its last line before that
/// (a power cut between the write and the disk) is not tampered with: the receipt is
/// given back from hook.json, to `--verify` at once and to the log at the next
/// validation. Once the log is known synced, the same missing line is a deletion again.
#[test]
fn a_receipt_a_power_cut_took_from_the_log_is_given_back_from_hook_json() {
    let p = Project::new();
    let validate = |cmd: &str| {
        p.waymark()
            .args(["validate", "--", "sh", "-c", cmd])
            .assert()
            .success();
    };
    for cmd in ["exit 0", "true"] {
        validate(cmd);
    }
    let hook = p.hook_json();
    let task = hook["task_id"].as_str().unwrap().to_string();
    let log = format!(".orchestration/tasks/{task}/receipts.jsonl");
    let marker = format!(".orchestration/tasks/{task}/receipts.synced");
    let unsynced = hook["unsynced_receipts"].as_array().unwrap();
    assert_eq!(unsynced.len(), 1, "only the newest is held: {unsynced:?}");
    let last = unsynced[0]["receipt_id"].as_str().unwrap().to_string();
    assert_eq!(p.read(&marker), last, "a command syncs the log at once");

    // The power cut: the log without its last line, and the sync never said.
    let text = p.read(&log);
    let kept: Vec<&str> = text.lines().collect();
    let first = serde_json::from_str::<serde_json::Value>(kept[0]).unwrap();
    p.write(&log, &format!("{}\n", kept[0]));
    p.write(&marker, first["receipt_id"].as_str().unwrap());
    let (code, out) = receipts_verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("chain: intact (2 chained receipts"), "{out}");

    // The next validation gives the log its line back, before its own.
    validate("exit 0");
    let lines: Vec<String> = p.read(&log).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        lines[1],
        text.lines().nth(1).unwrap(),
        "given back as it was"
    );
    let (code, out) = receipts_verify(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("chain: intact (3 chained receipts"), "{out}");
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("had lost its last 1 receipt(s)"),
        "the loss is logged"
    );

    // Synced, then deleted: that is tampering, and nothing hides it.
    p.write(&log, &(lines[..2].join("\n") + "\n"));
    let (code, out) = receipts_verify(&p);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("missing at the end"), "{out}");
}
