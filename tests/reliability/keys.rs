//! Keys and forgery: a key file others can read is refused (by `waymark validate`, by the
//! hooks' observed receipts, and by verification); a receipt signed with another key, or
//! moved onto another key path, fails `waymark receipts --verify`. (Editing a receipt's
//! fields is tests/receipts.rs::an_edited_receipt_fails_verification.)

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::common::*;
use crate::util::Project;

fn key(p: &Project) -> std::path::PathBuf {
    p.config.path().join("waymark/keys/master.key")
}

fn receipts(p: &Project) -> Vec<Value> {
    p.hook_json()["receipts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn verify_json(p: &Project) -> (Option<i32>, Value) {
    let out = p
        .waymark()
        .args(["receipts", "--verify", "--json"])
        .output()
        .unwrap();
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

#[test]
fn a_receipt_signed_with_another_key_fails_verification() {
    let p = Project::new();
    p.waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    // Someone else, with a key of their own, adds a receipt to this project.
    let other = tempfile::tempdir().unwrap();
    p.waymark()
        .env("XDG_CONFIG_HOME", other.path())
        .env("HOME", other.path())
        .args(["validate", "--", "true"])
        .assert()
        .success();
    assert!(other.path().join("waymark/keys/master.key").exists());
    let r = receipts(&p);
    assert_eq!(r.len(), 2);
    assert_eq!(
        r[1]["signature"].as_str().unwrap().len(),
        128,
        "it is signed"
    );
    // With this project's key: the first is valid, the forged one is not.
    let (code, v) = verify_json(&p);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["receipts"][0]["status"], "valid", "{v}");
    assert_eq!(v["receipts"][1]["status"], "invalid", "{v}");
    // And with the other key, the other way round: each key vouches only for its own.
    let out = p
        .waymark()
        .env("XDG_CONFIG_HOME", other.path())
        .env("HOME", other.path())
        .args(["receipts", "--verify", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["receipts"][0]["status"], "invalid", "{v}");
    assert_eq!(v["receipts"][1]["status"], "valid", "{v}");
}

#[test]
fn a_signature_moved_to_another_key_path_fails_verification() {
    let p = Project::new();
    p.waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    p.edit_receipts(|r| {
        let kp = r[0]["key_path"].as_str().unwrap().to_string();
        let moved = match kp.rsplit_once('/') {
            Some((head, _)) => format!("{head}/99"),
            None => "m/44'/236'/0'/99".into(),
        };
        r[0]["key_path"] = json!(moved);
    });
    let (code, v) = verify_json(&p);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["receipts"][0]["status"], "invalid", "{v}");
}

#[test]
fn key_files_readable_by_group_or_others_are_refused() {
    for mode in [0o640, 0o604, 0o644] {
        let p = Project::new();
        p.waymark()
            .args(["validate", "--", "true"])
            .assert()
            .success();
        std::fs::set_permissions(key(&p), std::fs::Permissions::from_mode(mode)).unwrap();
        let out = p
            .waymark()
            .args(["validate", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "the command's code, still");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("UNSIGNED"), "{mode:o}: {stderr}");
        assert_eq!(receipts(&p)[1]["signature"], "", "{mode:o}");
        let (code, v) = verify_json(&p);
        assert_eq!(code, Some(1), "{mode:o}");
        assert_eq!(v["key"]["status"], "refused", "{mode:o}: {v}");
        assert_eq!(
            std::fs::metadata(key(&p)).unwrap().permissions().mode() & 0o777,
            mode,
            "the key is reported, never rewritten"
        );
    }
}

#[test]
fn a_readable_key_is_refused_by_hooks_too_and_the_hook_still_exits_0() {
    let p = Project::new();
    p.waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    std::fs::set_permissions(key(&p), std::fs::Permissions::from_mode(0o644)).unwrap();
    let root = p.root();
    let bash = json!({"session_id": "s", "cwd": root, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "toolu_v",
        "tool_input": {"command": "cargo test"},
        "tool_response": {"stdout": "test result: ok. 3 passed", "stderr": "", "interrupted": false}});
    let out = run_hook(&p, "PostToolUse", &bash);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r = receipts(&p);
    let observed: Vec<_> = r.iter().filter(|r| r["observed"] == true).collect();
    assert!(
        observed.iter().all(|r| r["signature"] == ""),
        "signed with a refused key: {observed:?}"
    );
    let log = p.read(".orchestration/waymark.log");
    assert!(
        log.contains("stored unsigned") && log.contains("readable by others"),
        "{log}"
    );
    assert!(!observed.is_empty(), "the validation still got its receipt");
}
