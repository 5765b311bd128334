//! Secrets in what a session produces (prompts, command lines, output, error text, the
//! last message, the compaction summary, denial reasons, task subjects and descriptions,
//! todo items, push URLs, commit messages, validation command lines, wrong-typed fields)
//! never reach any file waymark writes, nor its stdout or stderr: every stored string
//! passes the redactor (docs/design.md rule 4; `src/redact`).

use std::path::Path;

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
    // The formats the first redactor missed (issue 13).
    (
        "https://ci:p@ss/w0rd-Zq8@git.example.com/team/app.git",
        "w0rd-Zq8",
    ),
    (
        "curl -u deploy:Sup3rS3cretPw https://api.example.com",
        "Sup3rS3cretPw",
    ),
    ("mysql -u root -pMyDbPw9988 shop", "MyDbPw9988"),
    (
        "export DB_PASSWORD='correct horse battery'",
        "correct horse battery",
    ),
    ("password = \"tr0ub4dor and 3\"", "tr0ub4dor and 3"),
    (
        "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE",
    ),
    (
        "AKIAIOSFODNN7EXAMPLE Zt7Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9Ij1Kl3M",
        "Zt7Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9Ij1Kl3M",
    ),
    (
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "rk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        "51HxYzAbCdEfGhIjKlMnOpQr",
    ),
    (
        "GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr cargo test",
        "R4nd0mT0k3nV4lu3Abcdefghijklmnopqr",
    ),
];

const PGP_BODY: &str = "lQOYBGZ3Qx8BCADm4Tq0c2VjcmV0a2V5bWF0ZXJpYWw";

fn pgp() -> String {
    format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PGP_BODY}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----"
    )
}

const PEM_BODY: &str = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";

fn pem() -> String {
    format!(
        "-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\nMkNsZXZlckJ1dE5vdFJlYWw=\n-----END PRIVATE KEY-----"
    )
}

fn all_secrets() -> String {
    let mut s: Vec<String> = SECRETS.iter().map(|(full, _)| full.to_string()).collect();
    s.push(pem());
    s.push(pgp());
    s.join("\n")
}

/// Feeds every place a secret can come in through.
fn leak_everything(p: &Project) {
    let root = p.root();
    let secrets = all_secrets();
    let mut events = tool_events(root, &secrets);
    events.extend(task_events(root));
    events.extend(git_validation_and_stop_events(root, &secrets));
    for (name, v) in events {
        let out = run_hook(p, name, &v);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        assert_clean(
            &format!("{name}'s stdout"),
            &String::from_utf8_lossy(&out.stdout),
        );
        assert_clean(
            &format!("{name}'s stderr"),
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    // A validation waymark runs itself, with the token on its command line.
    let out = p
        .waymark()
        .args([
            "validate",
            "--",
            "sh",
            "-c",
            &format!("{} true", SECRETS[17].0.replace(" cargo test", "")),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_clean("validate's stderr", &String::from_utf8_lossy(&out.stderr));
}

/// Event `name` of session "s" in `root`, with the fields of `extra`.
fn event(
    root: &Path,
    name: &'static str,
    extra: serde_json::Value,
) -> (&'static str, serde_json::Value) {
    let mut v = json!({"session_id": "s", "cwd": root, "hook_event_name": name});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    (name, v)
}

/// The prompt, a Write of `secrets`, a Bash call per secret, a failed one, a denied one,
/// and a compaction summary, each carrying secrets.
fn tool_events(root: &Path, secrets: &str) -> Vec<(&'static str, serde_json::Value)> {
    let mut events = vec![];
    let mut add =
        |name: &'static str, extra: serde_json::Value| events.push(event(root, name, extra));
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
    events
}

/// A task created (through TaskCreate and TaskCreated) per secret, and a todo list of them.
fn task_events(root: &Path) -> Vec<(&'static str, serde_json::Value)> {
    let mut events = vec![];
    let mut add =
        |name: &'static str, extra: serde_json::Value| events.push(event(root, name, extra));
    for (i, (full, _)) in SECRETS.iter().enumerate() {
        add(
            "PostToolUse",
            json!({"tool_name": "TaskCreate", "tool_use_id": format!("toolu_t{i}"),
            "tool_input": {"subject": format!("Rotate {full}"), "description": format!("old value {full}"),
                           "activeForm": format!("Rotating {full}")},
            "tool_response": {"task": {"id": format!("t{i}"), "subject": format!("Rotate {full}")}}}),
        );
        add(
            "TaskCreated",
            json!({"task_id": format!("c{i}"), "task_subject": format!("Use {full}"),
                   "task_description": format!("with {full}")}),
        );
    }
    add(
        "PostToolUse",
        json!({"tool_name": "TodoWrite", "tool_use_id": "toolu_todo",
        "tool_input": {"todos": SECRETS.iter().map(|(full, _)| json!({"content": format!("check {full}"),
            "status": "pending", "activeForm": format!("Checking {full}")})).collect::<Vec<_>>()},
        "tool_response": {}}),
    );
    events
}

/// A push and a commit naming secrets, a validation with a token on its command line, the
/// last message, and a wrong-typed field whose value is a secret.
fn git_validation_and_stop_events(
    root: &Path,
    secrets: &str,
) -> Vec<(&'static str, serde_json::Value)> {
    let mut events = vec![];
    let mut add =
        |name: &'static str, extra: serde_json::Value| events.push(event(root, name, extra));
    add(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_push",
        "tool_input": {"command": format!("git push {}", SECRETS[7].0)},
        "tool_response": {"stdout": "", "stderr": format!("To {}\n   1a2b3c4..5d6e7f8  main -> main", SECRETS[8].0), "interrupted": false}}),
    );
    add(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_commit",
        "tool_input": {"command": format!("git commit -qm 'Rotate {}'", SECRETS[15].0)},
        "tool_response": {"stdout": format!("[main 1a2b3c4] Rotate {}\n 1 file changed", SECRETS[17].0), "stderr": "", "interrupted": false}}),
    );
    add(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_validate",
        "tool_input": {"command": SECRETS[17].0},
        "tool_response": {"stdout": "test result: ok. 3 passed", "stderr": "", "interrupted": false}}),
    );
    add(
        "Stop",
        json!({"last_assistant_message": format!("Here are the keys: {secrets}")}),
    );
    // A wrong-typed field whose value is a secret: the parse error quotes it.
    add(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "toolu_typed",
        "tool_input": {"command": "true"}, "duration_ms": SECRETS[1].0,
        "tool_response": {"stdout": "", "stderr": "", "interrupted": false}}),
    );
    events
}

/// Every file waymark keeps for the project: the state directory, recursively, and AGENT.md.
fn every_stored_file(p: &Project) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = walk(&p.path(".orchestration"))
        .into_iter()
        .filter(|f| f.is_file())
        .map(|f| {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            (f.display().to_string(), text)
        })
        .collect();
    files.push(("AGENT.md".into(), p.read("AGENT.md")));
    files
}

fn assert_clean(what: &str, text: &str) {
    for (_, secret) in SECRETS {
        assert!(!text.contains(secret), "{what} leaks {secret}");
    }
    assert!(!text.contains(PEM_BODY), "{what} leaks the private key");
    assert!(!text.contains(PGP_BODY), "{what} leaks the PGP key");
}

#[test]
fn no_file_waymark_writes_holds_a_secret() {
    let p = Project::new();
    leak_everything(&p);
    let files = every_stored_file(&p);
    for name in [
        "hook.json",
        "HOOK.md",
        "agent_trace.jsonl",
        "waymark.log",
        "history.jsonl",
        "receipts.jsonl",
        "checkpoints.jsonl",
    ] {
        assert!(
            files.iter().any(|(f, _)| f.ends_with(name)),
            "{name} was not written"
        );
    }
    for (file, text) in &files {
        assert_clean(file, text);
    }
    // The wrong-typed field was refused with its value masked.
    let log = p.read(".orchestration/waymark.log");
    assert!(
        log.contains("duration_ms") || log.contains("invalid type"),
        "{log}"
    );
}

#[test]
fn a_receipt_signs_the_redacted_command_and_says_so() {
    let p = Project::new();
    leak_everything(&p);
    let receipts = p.hook_json()["receipts"].as_array().unwrap().clone();
    let redacted: Vec<_> = receipts.iter().filter(|r| r["redacted"] == true).collect();
    assert_eq!(
        redacted.len(),
        2,
        "the observed and the run validation: {receipts:?}"
    );
    for r in redacted {
        let command = r["command"].as_str().unwrap();
        assert!(command.contains("[REDACTED]"), "{command}");
    }
    p.waymark()
        .args(["receipts", "--verify"])
        .assert()
        .success();
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
