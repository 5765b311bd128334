//! Nested input through the binary (docs/guarantees.md, "Bounded and stack-safe"): a
//! Bash command of 10,000 nested `$(` used to overflow the hook's stack (SIGSEGV: in deny
//! mode no decision came back and the tool ran; in PostToolUse the event was lost). Every
//! kind of nesting, as deep and as long as the hook's input allows, gets its answer: exit
//! 0 within the deadline, `ask` in deny mode when the command cannot be read whole, and
//! the PostToolUse's trace record.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::Value;

use crate::common::*;
use crate::util::Project;

const INTENTS: &str = r#"active_intents:
  - id: INT-001
    name: Auth
    status: IN_PROGRESS
    owned_scope: ["src/auth/**"]
"#;

/// A project in deny mode with an intent in progress.
fn deny_mode() -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.path(".orchestration")).unwrap();
    p.write(".orchestration/active_intents.yaml", INTENTS);
    p.write(
        ".orchestration/waymark.json",
        r#"{"scope_enforcement": "deny"}"#,
    );
    p
}

/// `levels` of one kind of nesting around a write, up to `max` bytes.
fn nested(kind: usize, levels: usize, max: usize) -> String {
    let mut s = "echo x > out.txt".to_string();
    for level in 0..levels {
        let next = match kind {
            0 => format!("echo $({s})"),
            1 => format!("echo \"$({s})\""),
            2 => format!("echo `{}`", s.replace('\\', "\\\\").replace('`', "\\`")),
            3 => format!("cat <({s})"),
            4 => format!("bash <<E{level}\n{s}\nE{level}"),
            5 => format!("bash -c '{}'", s.replace('\'', r"'\''")),
            6 => format!("xargs {s}"),
            _ => format!("busybox {s}"),
        };
        if next.len() > max {
            break;
        }
        s = next;
    }
    s
}

/// Runs `event` with `command` as its Bash call; asserts exit 0 within the deadline (and
/// its grace); returns stdout parsed (Null when empty).
fn run(p: &Project, event: &str, command: &str, id: &str) -> Value {
    let mut e: Value =
        serde_json::from_str(&p.fixture_of("2.1.332", &format!("{event}-Bash.json"))).unwrap();
    e["tool_input"]["command"] = command.into();
    e["tool_use_id"] = id.into();
    e["prompt_id"] = id.into();
    let start = Instant::now();
    let out = spawn_hook(hook_command(p, event), e.to_string().as_bytes())
        .wait_with_output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{event} {}: {}",
        command.len(),
        String::from_utf8_lossy(&out.stderr)
    );
    let took = start.elapsed();
    assert!(took < Duration::from_secs(8), "{event}: {took:?}");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Deny mode asks about the command, and its PostToolUse is recorded.
fn asked_and_recorded(p: &Project, command: &str, id: &str) {
    answered_and_recorded(p, command, id, &["ask"]);
}

/// Deny mode answers the command one of `answers`, and its PostToolUse is recorded.
fn answered_and_recorded(p: &Project, command: &str, id: &str, answers: &[&str]) {
    let out = run(p, "PreToolUse", command, id);
    let decision = out["hookSpecificOutput"]["permissionDecision"].as_str();
    let shown = &command[..command.len().min(80)];
    assert!(
        answers.contains(&decision.unwrap_or("none")),
        "{shown}: {out}"
    );
    run(p, "PostToolUse", command, id);
    assert_eq!(trace_count(&trace_records(p), id), 1, "{id}");
}

/// The issue's case: 30 KB of 10,000 nested `$(`; and 10,000 `busybox` applets.
#[test]
fn ten_thousand_nested_substitutions_are_asked_about_and_recorded() {
    let p = deny_mode();
    let applets = format!("{}sed -i s/a/b/ src/auth/a.rs", "busybox ".repeat(10_000));
    asked_and_recorded(&p, &applets, "toolu_applets");
    let command = format!(
        "{}echo > out.txt{}",
        "$(".repeat(10_000),
        ")".repeat(10_000)
    );
    asked_and_recorded(&p, &command, "toolu_deep");
    // Unclosed, and in quotes.
    asked_and_recorded(&p, &"\"$(".repeat(15_000), "toolu_unclosed");
}

/// A command as long as the hook's input may be (64 MiB less the event around it).
#[test]
fn a_command_at_the_input_limit_is_asked_about_and_recorded() {
    let p = deny_mode();
    let command = "$(".repeat((64 << 20) / 2 - 4096);
    asked_and_recorded(&p, &command, "toolu_huge");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Every kind of nesting, past its bound, to 1 MiB.
    #[test]
    fn deep_nesting_of_any_kind_is_asked_about(kind in 0usize..8, extra in 0usize..3000) {
        let p = deny_mode();
        let levels = if kind < 4 { 33 + extra } else { 9 + extra % 20 };
        let command = nested(kind, levels, 1 << 20);
        let id = format!("toolu_kind_{kind}_{extra}");
        // `xargs … echo x > out.txt` names its write too: out of scope, denied.
        let answers: &[&str] = if kind >= 6 { &["ask", "deny"] } else { &["ask"] };
        answered_and_recorded(&p, &command, &id, answers);
    }
}

/// Within the bounds, deny mode judges the write itself: out of scope, denied.
#[test]
fn shallow_nesting_is_judged() {
    let p = deny_mode();
    for kind in 0..6 {
        let out = run(
            &p,
            "PreToolUse",
            &nested(kind, 3, 1 << 20),
            &format!("toolu_shallow_{kind}"),
        );
        let decision = &out["hookSpecificOutput"]["permissionDecision"];
        assert_eq!(decision, "deny", "kind {kind}: {out}");
    }
}

/// JSON nested 100,000 deep.
fn deep_json() -> String {
    format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000))
}

/// JSON anywhere the hook reads it, nested past serde_json's limit of 128 (which nothing
/// disables): the hook input, a transcript line, a trace line; and YAML intents nested past
/// serde-saphyr's budget (depth 64): each is refused as malformed, never a crash.
#[test]
fn deeply_nested_json_and_yaml_are_refused_not_a_crash() {
    let p = deny_mode();
    // The hook input itself.
    let input = format!(
        r#"{{"session_id": "s", "cwd": "{}", "tool_input": {}}}"#,
        p.root().display(),
        deep_json()
    );
    let out = spawn_hook(hook_command(&p, "PostToolUse"), input.as_bytes())
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A transcript line, read by the events that read the transcript.
    let transcript = p.path("transcript.jsonl");
    std::fs::write(&transcript, format!("{}\n", deep_json())).unwrap();
    for event in ["UserPromptSubmit", "Stop", "PreCompact"] {
        let mut e: Value =
            serde_json::from_str(&p.fixture_of("2.1.332", &format!("{event}.json"))).unwrap();
        e["transcript_path"] = transcript.display().to_string().into();
        let out = spawn_hook(hook_command(&p, event), e.to_string().as_bytes())
            .wait_with_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{event}: {out:?}");
    }
    // A trace line, read by the next PostToolUse and by `waymark log`.
    let trace = p.path(".orchestration/agent_trace.jsonl");
    let mut text = std::fs::read_to_string(&trace).unwrap_or_default();
    text.push_str(&deep_json());
    text.push('\n');
    std::fs::write(&trace, text).unwrap();
    run(&p, "PostToolUse", "echo after", "toolu_after_deep_trace");
    let log = p.waymark().args(["log"]).output().unwrap();
    assert!(log.status.code().is_some(), "waymark log: {log:?}");
    // Intents nested past the YAML budget, in flow and block style.
    let flow = format!(
        "active_intents: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let block: String = (0..5_000)
        .map(|i| format!("{}a:\n", "  ".repeat(i)))
        .collect();
    for yaml in [flow, block] {
        p.write(".orchestration/active_intents.yaml", &yaml);
        let out = run(&p, "PreToolUse", "echo x > out.txt", "toolu_yaml");
        assert_ne!(
            out["hookSpecificOutput"]["permissionDecision"], "allow",
            "{out}"
        );
    }
}
