//! Secrets in what a session produces (prompts, command lines, output, error text, the
//! last message, the compaction summary, denial reasons) never reach the trace, HOOK.md,
//! hook.json or AGENT.md's lessons: they are redacted (DESIGN.md rule 4).

use serde_json::json;

use crate::common::*;
use crate::util::Project;

/// Real-looking secrets of the kinds redaction knows, each with the part that must never
/// be written down.
const SECRETS: &[(&str, &str)] = &[
    (
        "sk-ant-api03-Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh",
        "Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh",
    ),
    (
        "ghp_Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4",
        "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4",
    ),
    ("AKIAQ3EXAMPLE7KEYZZ9", "AKIAQ3EXAMPLE7KEYZZ9"),
    ("xoxb-1234567890-AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),
    ("password=Tr0ub4dor-and-3", "Tr0ub4dor-and-3"),
    (
        "Authorization: Bearer Qm9keUJ1aWxkZXJUb2tlbjEyMzQ1",
        "Qm9keUJ1aWxkZXJUb2tlbjEyMzQ1",
    ),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ3YXltYXJrLXRlc3QifQ.c2lnbmF0dXJlLXBhcnQtaGVyZQ",
        "c2lnbmF0dXJlLXBhcnQtaGVyZQ",
    ),
    (
        "https://deploy:Hunter2Hunter2@git.example.com/repo.git",
        "Hunter2Hunter2",
    ),
];

const PEM_BODY: &str = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";

fn pem() -> String {
    format!(
        "-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\nMkNsZXZlckJ1dE5vdFJlYWw=\n-----END PRIVATE KEY-----"
    )
}

fn all_secrets() -> String {
    let mut s: Vec<String> = SECRETS.iter().map(|(full, _)| full.to_string()).collect();
    s.push(pem());
    s.join("\n")
}

/// Feeds every place a secret can come in through.
fn leak_everything(p: &Project) {
    let root = p.root();
    let secrets = all_secrets();
    let base = |name: &str| json!({"session_id": "s", "cwd": root, "hook_event_name": name});
    let mut events = vec![];
    let mut add = |name: &'static str, extra: serde_json::Value| {
        let mut v = base(name);
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        events.push((name, v));
    };
    add(
        "UserPromptSubmit",
        json!({"prompt": format!("use these: {secrets}")}),
    );
    add(
        "PostToolUse",
        json!({"tool_name": "Write", "tool_use_id": "toolu_w",
        "tool_input": {"file_path": root.join(".env"), "content": secrets},
        "tool_response": {"type": "create", "filePath": root.join(".env"), "content": secrets, "structuredPatch": []}}),
    );
    for (i, (full, _)) in SECRETS.iter().enumerate() {
        add(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_b{i}"),
            "tool_input": {"command": format!("curl -H 'X: {full}' https://api.example.com")},
            "tool_response": {"stdout": format!("ok\n{secrets}\ndone"), "stderr": full, "interrupted": false}}),
        );
    }
    add(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_f",
        "tool_input": {"command": "cargo test"},
        "error": format!("Exit code 101\nthread panicked: {secrets}\ntest result: FAILED"), "is_interrupt": false}),
    );
    add(
        "PermissionDenied",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_d",
        "tool_input": {"command": format!("echo {}", SECRETS[0].0)},
        "reason": format!("blocked: {}", SECRETS[1].0)}),
    );
    add(
        "PostCompact",
        json!({"trigger": "manual", "compact_summary": format!("summary {secrets}")}),
    );
    add(
        "Stop",
        json!({"last_assistant_message": format!("Here are the keys: {secrets}")}),
    );
    for (name, v) in events {
        let out = run_hook(p, name, &v);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
    }
}

fn assert_clean(what: &str, text: &str) {
    for (_, secret) in SECRETS {
        assert!(!text.contains(secret), "{what} leaks {secret}");
    }
    assert!(!text.contains(PEM_BODY), "{what} leaks the private key");
}

#[test]
fn secrets_are_redacted_in_hook_md_and_hook_json() {
    let p = Project::new();
    leak_everything(&p);
    let md = p.read(".orchestration/HOOK.md");
    assert!(
        md.contains("[REDACTED]"),
        "the redacted text is there: {md}"
    );
    assert_clean("HOOK.md", &md);
    assert_clean("hook.json", &p.read(".orchestration/hook.json"));
    // The brief the next session gets is made from the same state.
    let brief = p.hook("SessionStart", &p.fixture("SessionStart-resume.json"));
    assert_clean("the resume brief", &brief);
}

/// Depends on the trace writer (issue 6).
#[test]
fn secrets_are_redacted_in_the_trace() {
    let p = Project::new();
    leak_everything(&p);
    let trace = p.read(".orchestration/agent_trace.jsonl");
    assert!(trace.contains("[REDACTED]"));
    assert_clean("the trace", &trace);
    assert!(trace_records(&p).len() >= SECRETS.len());
}

/// Depends on the lessons post-hooks (issue 6): the verification-failure lesson (from the
/// failed `cargo test`) and the governance lesson (from the denial) carry no secret.
#[test]
fn secrets_are_redacted_in_lessons() {
    let p = Project::new();
    leak_everything(&p);
    let agent_md = p.read("AGENT.md");
    assert!(lessons(&p).len() >= 2, "{agent_md}");
    assert_clean("AGENT.md", &agent_md);
}
