use chrono::TimeZone;
use serde_json::Value;

use super::*;
use crate::config::KeyDerivation;

use super::testing::signer;

fn derivation() -> KeyDerivation {
    crate::config::Config::default().key_derivation
}

fn run(observed: bool) -> Run {
    let start = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
        + chrono::Duration::nanoseconds(123_456_789);
    Run {
        command: "cargo test --lib".into(),
        exit_code: 0,
        started_at: start,
        completed_at: start + chrono::Duration::milliseconds(12_345),
        duration: Some(Duration::from_millis(12_345)),
        stdout_hash: sha256_hex(b"test result: ok\n"),
        stderr_hash: sha256_hex(b""),
        observed,
        tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
    }
}

fn signed(observed: bool, task_index: u32) -> ValidationReceipt {
    let mut r = ValidationReceipt::new("Write tests", run(observed));
    signer(1).sign(&mut r, task_index);
    r
}

#[test]
fn a_signed_receipt_verifies() {
    let r = signed(false, 3);
    assert_eq!(r.key_path, "m/44'/236'/0'/3");
    assert_eq!(r.sig_version, SIG_VERSION);
    assert_eq!(r.signature.len(), 128);
    assert_eq!(r.duration, "12.3s");
    assert!(r.receipt_id.starts_with("rcpt-"));
    assert_eq!(signer(1).verify(&r), Ok(()));
    // Through JSON and back (as stored in hook.json), it still verifies.
    let back: ValidationReceipt =
        serde_json::from_str(&serde_json::to_string_pretty(&r).unwrap()).unwrap();
    assert_eq!(signer(1).verify(&back), Ok(()));
}

/// Changes one JSON value so that it still parses but differs.
fn tamper(v: &Value) -> Value {
    match v {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => Value::from(n.as_i64().unwrap() + 1),
        Value::String(s) => match DateTime::parse_from_rfc3339(s) {
            // Even one nanosecond is a different time.
            Ok(t) => Value::String(
                (t.with_timezone(&Utc) + chrono::Duration::nanoseconds(1)).to_rfc3339(),
            ),
            Err(_) if s.starts_with("m/") => Value::String(s.replace("/3", "/4")),
            Err(_) => Value::String(format!("{s}x")),
        },
        other => panic!("unexpected field value {other}"),
    }
}

#[test]
fn every_field_tampered_fails() {
    // Walks the stored JSON, so that a field added to the receipt later and left out of
    // the signed message makes this test fail.
    for observed in [false, true] {
        let r = signed(observed, 3);
        let mut json = serde_json::to_value(&r).unwrap();
        if !observed {
            // `observed: false` is not written; adding it as true is a tamper too.
            json["observed"] = Value::Bool(false);
        }
        let fields: Vec<String> = json.as_object().unwrap().keys().cloned().collect();
        assert_eq!(fields.len(), 14, "{fields:?}");
        for field in fields.iter().filter(|f| *f != "signature") {
            let mut t = json.clone();
            t[field] = tamper(&json[field]);
            let changed: ValidationReceipt = serde_json::from_value(t).unwrap();
            assert_ne!(changed, r, "{field} unchanged");
            assert!(
                signer(1).verify(&changed).is_err(),
                "tampered {field} (observed={observed}) still verifies"
            );
        }
        // The signature itself, one bit.
        let mut t = r.clone();
        let mut sig = crate::text::unhex(&t.signature).unwrap();
        sig[10] ^= 1;
        t.signature = crate::text::hex(&sig);
        assert_eq!(signer(1).verify(&t), Err(VerifyError::BadSignature));
    }
}

#[test]
fn another_key_does_not_verify() {
    let r = signed(false, 0);
    assert_eq!(signer(2).verify(&r), Err(VerifyError::BadSignature));
    // The same master with another derivation account is another key too.
    let other = Ed25519Signer::new(
        MasterKey::from_bytes([1; 32]),
        KeyDerivation {
            account: 1,
            ..derivation()
        },
    );
    let mut moved = ValidationReceipt::new("Write tests", run(false));
    other.sign(&mut moved, 0);
    assert_eq!(moved.key_path, "m/44'/236'/1'/0");
    // Verification follows the receipt's own key path, whatever the signer's config.
    assert_eq!(signer(1).verify(&moved), Ok(()));
    moved.key_path = "m/44'/236'/0'/0".into();
    assert_eq!(signer(1).verify(&moved), Err(VerifyError::BadSignature));
}

#[test]
fn legacy_six_field_receipts_still_verify() {
    let s = signer(1);
    let json = r#"{
        "receipt_id": "rcpt-001",
        "step_name": "lint",
        "command": "magex lint",
        "exit_code": 0,
        "started_at": "2025-01-17T15:45:20Z",
        "completed_at": "2025-01-17T15:45:33Z",
        "duration": "12.3s",
        "stdout_hash": "a1b2c3",
        "stderr_hash": "def456",
        "key_path": "m/44'/236'/0'/5",
        "signature": ""
    }"#;
    let mut r: ValidationReceipt = serde_json::from_str(json).unwrap();
    assert_eq!(r.sig_version, LEGACY_SIG_VERSION);
    assert_eq!(
        signed_message(&r).unwrap(),
        b"rcpt-001|magex lint|0|a1b2c3|def456|1737128733"
    );
    r.signature = s.sign_bytes(&r.key_path, &signed_message(&r).unwrap());
    assert_eq!(s.verify(&r), Ok(()));
    // What the six fields cover still fails when changed …
    let mut t = r.clone();
    t.exit_code = 1;
    assert!(s.verify(&t).is_err());
    // … but a v2 signature relabelled as v1 (a downgrade) does not verify.
    let mut v2 = signed(false, 5);
    v2.sig_version = LEGACY_SIG_VERSION;
    assert_eq!(s.verify(&v2), Err(VerifyError::BadSignature));
}

#[test]
fn the_v4_v3_and_v2_messages_are_the_documented_ones() {
    let mut r = ValidationReceipt::new("Write tests", run(true));
    r.receipt_id = "rcpt-0000abcd".into();
    r.command = "a\nb".into();
    r.key_path = "m/44'/236'/0'/3".into();
    r.task_id = "task-1".into();
    r.prev = "ab".into();
    let v2 = |tag: &str| {
        format!(
            "waymark-receipt/{tag}\n\
         receipt_id:13:rcpt-0000abcd\n\
         step_name:11:Write tests\n\
         command:3:a\nb\n\
         exit_code:1:0\n\
         started_at:20:1772366400.123456789\n\
         completed_at:20:1772366412.468456789\n\
         duration:5:12.3s\n\
         stdout_hash:64:{}\n\
         stderr_hash:64:{}\n\
         key_path:15:m/44'/236'/0'/3\n\
         observed:4:true\n",
            sha256_hex(b"test result: ok\n"),
            sha256_hex(b"")
        )
    };
    r.tree = "t1".into();
    let m = String::from_utf8(signed_message(&r).unwrap()).unwrap();
    let v3 = |tag: &str| v2(tag) + "task_id:6:task-1\nprev:2:ab\nredacted:5:false\n";
    assert_eq!(m, v3("4") + "tree:2:t1\n");
    r.sig_version = 3;
    let m = String::from_utf8(signed_message(&r).unwrap()).unwrap();
    assert_eq!(m, v3("3"));
    r.sig_version = 2;
    let m = String::from_utf8(signed_message(&r).unwrap()).unwrap();
    assert_eq!(m, v2("2"));
    r.sig_version = 3;
    // Values that would blur field boundaries without the lengths give other messages.
    let mut a = r.clone();
    a.step_name = "x\ncommand:1:y".into();
    assert_ne!(signed_message(&a), signed_message(&r));
}

#[test]
fn malformed_and_unknown_are_reported_not_panicked() {
    let s = signer(1);
    let r = signed(false, 1);
    let mut t = r.clone();
    t.signature = "zz".into();
    assert_eq!(s.verify(&t), Err(VerifyError::MalformedSignature));
    let mut t = r.clone();
    t.key_path = "../etc/passwd".into();
    assert!(matches!(
        s.verify(&t),
        Err(VerifyError::MalformedKeyPath(_))
    ));
    let mut t = r.clone();
    t.sig_version = 9;
    assert_eq!(s.verify(&t), Err(VerifyError::UnknownVersion(9)));
    let mut t = r;
    t.signature.clear();
    assert_eq!(s.verify(&t), Err(VerifyError::Unsigned));
}

#[test]
fn verify_all_reports_each_status() {
    let good = signed(false, 0);
    let mut bad = good.clone();
    bad.step_name = "Something else".into();
    let mut unsigned = good.clone();
    unsigned.signature.clear();
    let list = [good.clone(), bad, unsigned.clone()];
    let s = signer(1);
    let got = verify_all(Some(&s), &list);
    assert_eq!(got[0], Verdict::Valid);
    assert_eq!(got[1], Verdict::Invalid(VerifyError::BadSignature));
    assert_eq!(got[2], Verdict::Unsigned);
    assert_eq!(
        verify_all(None, &[good, unsigned]),
        vec![Verdict::NoKey, Verdict::Unsigned]
    );
}

#[test]
fn a_thousand_receipts_verify() {
    let s = signer(1);
    let list: Vec<_> = (0..1000)
        .map(|i| {
            let mut r = ValidationReceipt::new(&format!("step {i}"), run(i % 2 == 0));
            s.sign(&mut r, i % 7);
            r
        })
        .collect();
    let verdicts = verify_all(Some(&s), &list);
    assert_eq!(verdicts.len(), 1000);
    assert!(verdicts.iter().all(Verdict::is_valid));
}

#[test]
fn each_verdict_has_its_word_and_only_valid_is_valid() {
    let cases = [
        (Verdict::Valid, "valid", true),
        (
            Verdict::Invalid(VerifyError::BadSignature),
            "invalid",
            false,
        ),
        (Verdict::Unsigned, "unsigned", false),
        (Verdict::NoKey, "no_key", false),
    ];
    for (verdict, word, valid) in cases {
        assert_eq!(
            (verdict.as_str(), verdict.is_valid()),
            (word, valid),
            "{verdict:?}"
        );
    }
}

#[test]
fn a_sealed_receipt_says_whether_secrets_were_masked() {
    let seal_run = |command: &str, already_redacted: bool| {
        let mut r = ValidationReceipt::new("Write tests", run(false));
        r.command = command.into();
        r.redacted = already_redacted;
        seal(&Config::default(), &mut r, "task-1", None, 0, None);
        r
    };
    let secret = "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 cargo test";
    let masked = seal_run(secret, false);
    assert!(masked.redacted);
    assert!(!masked.command.contains("ghp_abc"), "{}", masked.command);
    // Masked once already (a receipt sealed again): it stays marked.
    assert!(seal_run("cargo test", true).redacted);
    assert!(!seal_run("cargo test", false).redacted);
}

/// Version 3 receipts (no tree) still verify as they did; a version-4 receipt relabelled
/// version 3 (dropping the tree from what is signed) does not.
#[test]
fn version_3_receipts_verify_and_a_tree_cannot_be_dropped_by_relabelling() {
    let s = signer(1);
    let mut v3 = ValidationReceipt::new("Write tests", run(false));
    v3.tree.clear();
    v3.key_path = s.key_path(2);
    v3.sig_version = 3;
    v3.signature = s.sign_bytes(&v3.key_path, &signed_message(&v3).unwrap());
    assert_eq!(s.verify(&v3), Ok(()));
    let v4 = signed(false, 2);
    assert_eq!(v4.sig_version, 4);
    let mut relabelled = v4.clone();
    relabelled.sig_version = 3;
    assert_eq!(s.verify(&relabelled), Err(VerifyError::BadSignature));
    let mut moved = v4;
    moved.tree = "0".repeat(40);
    assert_eq!(s.verify(&moved), Err(VerifyError::BadSignature));
}
