//! No secret reaches a file waymark writes (issue 32, item 1), whatever channel it comes
//! through: a failing run's output quoted in an AGENT.md lesson, a command in the trace,
//! an MCP tool's input kept in the pending journal while the task is locked.

use std::path::Path;

use serde_json::{Value, json};
use util::Project;

mod util;

const SECRET: &str = "Hunter2pw";

/// Every file under `dir` (but `.git`) that holds `secret`.
fn holding(dir: &Path, secret: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_name() == ".git" {
            continue;
        }
        if path.is_dir() {
            found.extend(holding(&path, secret));
        } else if String::from_utf8_lossy(&std::fs::read(&path).unwrap()).contains(secret) {
            found.push(path.display().to_string());
        }
    }
    found
}

/// What waymark wrote: the state directory and AGENT.md (the project's own files, which
/// the tests write secrets into on purpose, are left out).
fn leaks(p: &Project) -> Vec<String> {
    let mut found = holding(&p.path(".orchestration"), SECRET);
    if p.path("AGENT.md").exists() && p.read("AGENT.md").contains(SECRET) {
        found.push("AGENT.md".into());
    }
    found
}

fn event(p: &Project, fixture: &str, with: Value) -> String {
    let mut e: Value = serde_json::from_str(&p.fixture_of("2.1.332", fixture)).unwrap();
    for (k, v) in with.as_object().unwrap() {
        e[k] = v.clone();
    }
    e.to_string()
}

#[test]
fn a_failing_run_s_secrets_reach_no_lesson_and_no_ledger() {
    let p = Project::new();
    p.hook(
        "SessionStart",
        &p.fixture_of("2.1.332", "SessionStart-startup.json"),
    );
    let output = [
        "test config::loads ... FAILED",
        "assertion failed: left == right",
        "  left: {",
        "    \"user\": \"app\",",
        "    \"password\":",
        &format!("      \"{SECRET}\""),
        "  }",
        // A value the output wrapped mid-string (issue 50, item 6).
        &format!(
            "  right: {{\"user\": \"app\", \"password\": \"{}",
            &SECRET[..6]
        ),
        &format!("{}\"}}", &SECRET[6..]),
        "| user | password |",
        "| ---- | -------- |",
        &format!("| app  | {SECRET} |"),
        "db:",
        "  password: |",
        &format!("    {SECRET}"),
        &format!("note: set DB_PASSWORD {SECRET} before running"),
        "test result: FAILED. 0 passed; 1 failed",
    ]
    .join("\n");
    let command = format!("sshpass -p {SECRET} ssh ci 'cargo test' || cargo test");
    let failed = event(
        &p,
        "PostToolUseFailure-Bash.json",
        json!({"tool_input": {"command": command}, "error": format!("Exit code 101\n{output}")}),
    );
    p.hook("PostToolUseFailure", &failed);
    let agent = p.read("AGENT.md");
    assert!(agent.contains("config::loads"), "the lesson is written");
    assert!(!agent.contains(&format!("{}\"}}", &SECRET[6..])), "{agent}");
    assert_eq!(leaks(&p), Vec::<String>::new());
}

#[test]
fn an_mcp_tool_s_password_is_hidden_while_its_event_waits() {
    let p = Project::new();
    p.write(
        ".orchestration/waymark.json",
        r#"{"hook_deadline": "500ms"}"#,
    );
    p.hook(
        "SessionStart",
        &p.fixture_of("2.1.332", "SessionStart-startup.json"),
    );
    let mut holder = util::hold(&p.path(".orchestration/hook.json.lock"));
    let mcp = event(
        &p,
        "PostToolUse-Bash.json",
        json!({"tool_name": "mcp__postgres__connect",
               "tool_input": {"host": "db.internal", "user": "app", "password": SECRET, "port": 5432},
               "tool_response": {"ok": true}}),
    );
    p.hook("PostToolUse", &mcp);
    let write = p.write_event(
        ".env.example",
        &format!("DB_HOST=db\ndb_password: |\n  {SECRET}\n"),
    );
    p.hook("PostToolUse", &write);
    holder.kill().unwrap();
    holder.wait().unwrap();
    let pending = p.read(".orchestration/pending.jsonl");
    assert!(
        pending.contains("mcp__postgres__connect"),
        "the event waits: {pending}"
    );
    assert!(
        pending.contains("db.internal"),
        "what is not a secret is kept: {pending}"
    );
    assert!(
        !pending.contains(SECRET) && !pending.contains("4242"),
        "{pending}"
    );
    // The next event applies what waited; nothing it writes holds the secret either.
    p.hook("Stop", &p.fixture_of("2.1.332", "Stop.json"));
    assert!(!p.path(".orchestration/pending.jsonl").exists());
    let leaked: Vec<String> = leaks(&p)
        .into_iter()
        .filter(|f| !f.ends_with(".env.example"))
        .collect();
    assert_eq!(leaked, Vec::<String>::new());
}

/// Every object reachable from waymark's snapshot refs, as text.
fn snapshot_objects(p: &Project) -> String {
    let refs = p.git(&["for-each-ref", "--format=%(refname)", "refs/waymark/"]);
    assert!(!refs.trim().is_empty(), "a snapshot was taken");
    let mut text = String::new();
    for r in refs.lines() {
        for line in p.git(&["rev-list", "--objects", r]).lines() {
            let id = line.split_whitespace().next().unwrap();
            text += &p.git(&["cat-file", "-p", id]);
        }
    }
    text
}

/// A file that holds a secret is kept out of every snapshot (refs a `git push --mirror`
/// would publish), recorded by hash, told in the brief, and left alone by a rewind.
#[test]
fn a_file_holding_a_secret_stays_out_of_snapshots_and_rewinds() {
    let p = Project::new();
    p.write("config.yml", "db:\n  host: localhost\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "base"]);
    p.run(&["task", "start", "--id", "T-1"], "");
    p.write(".env.local", &format!("DB_PASSWORD={SECRET}\n"));
    p.write(
        "config.yml",
        &format!("db:\n  host: localhost\n  password: {SECRET}\n"),
    );
    p.write("src/a.rs", "pub fn a() {}\n");
    let out = p.run(&["checkpoint", "secrets in the tree"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    let objects = snapshot_objects(&p);
    assert!(
        objects.contains("pub fn a() {}"),
        "the rest of the work is in the snapshot"
    );
    assert!(!objects.contains(SECRET), "{objects}");
    let capture: Value =
        serde_json::from_str(&p.read(&format!(".orchestration/tasks/T-1/checkpoints/{id}.json")))
            .unwrap();
    let withheld: Vec<&str> = capture["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["path"].as_str().unwrap())
        .collect();
    assert_eq!(withheld, [".env.local", "config.yml"]);
    assert_eq!(capture["withheld"][0]["sha256"].as_str().unwrap().len(), 64);
    // A rewind to it leaves both files as they are, and says so.
    p.write("src/a.rs", "pub fn a() { changed() }\n");
    let rewind = p.run(&["rewind", &id], "");
    let said = String::from_utf8_lossy(&rewind.stdout);
    assert!(rewind.status.success(), "{said}");
    assert!(said.contains("left as it is: .env.local"), "{said}");
    assert_eq!(p.read("src/a.rs"), "pub fn a() {}\n");
    assert!(p.read(".env.local").contains(SECRET));
    assert!(p.read("config.yml").contains(SECRET));
    assert!(
        !snapshot_objects(&p).contains(SECRET),
        "nor the rewind's undo point"
    );
}

/// An ignored file a rewind would replace is saved for the undo (a snapshot of it), but
/// not one that holds a secret: that one is left as it is.
#[test]
fn an_ignored_file_holding_a_secret_is_left_out_of_the_undo_and_the_rewind() {
    let p = Project::new();
    p.write("README.md", "base\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "base"]);
    p.run(&["task", "start", "--id", "T-1"], "");
    p.write("local.cfg", "placeholder\n");
    let out = p.run(&["checkpoint", "before the secret"], "");
    let id = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    p.write(".gitignore", "local.cfg\n");
    p.write("local.cfg", &format!("token = \"{SECRET}\"\n"));
    let rewind = p.run(&["rewind", &id], "");
    let said = String::from_utf8_lossy(&rewind.stdout);
    assert!(rewind.status.success(), "{said}");
    assert!(said.contains("left as it is: local.cfg"), "{said}");
    assert!(p.read("local.cfg").contains(SECRET));
    assert!(!snapshot_objects(&p).contains(SECRET));
}

/// A file whose name is not UTF-8 is judged by its real name: one holding a secret stays
/// out of the snapshot like any other.
#[test]
fn a_secret_in_a_file_named_in_no_utf8_stays_out_of_snapshots() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new();
    p.write("README.md", "base\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "base"]);
    p.run(&["task", "start", "--id", "T-1"], "");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.env");
    std::fs::write(p.root().join(name), format!("DB_PASSWORD={SECRET}\n")).unwrap();
    p.write("src/a.rs", "pub fn a() {}\n");
    let out = p.run(&["checkpoint", "a name in latin-1"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects = snapshot_objects(&p);
    assert!(objects.contains("pub fn a() {}"));
    assert!(!objects.contains(SECRET), "{objects}");
}

/// Issue 43, item 6: the kinds of secret a step name or a command's output may hold.
/// Each: the text, and the secret inside it that must not come out.
const KINDS: &[(&str, &str)] = &[
    (
        "push with ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ),
    (
        "use key AKIAQ3EGRTYU7WXZ2B4C for s3",
        "AKIAQ3EGRTYU7WXZ2B4C",
    ),
    (
        "call with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    ),
    (
        "machine api.example.com login bob password hunter2xyz",
        "hunter2xyz",
    ),
    (
        "send Authorization: Bearer abcdefghijklmnop.qrstuv",
        "abcdefghijklmnop.qrstuv",
    ),
];

/// `waymark ARGS` in `p`: its exit status checked, stdout and stderr together.
fn said(p: &Project, args: &[&str]) -> String {
    let out = p.run(args, "");
    assert!(out.status.success(), "{args:?}: {out:?}");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn what_waymark_plan_and_step_print_of_a_step_is_what_they_store_redacted() {
    for (text, secret) in KINDS {
        let p = Project::new();
        let out = said(&p, &["plan", text, "then test"]);
        assert!(!out.contains(secret) && out.contains("[REDACTED]"), "{out}");
        // Planned again (the same words): it is known, and the listing keeps it hidden.
        let out = said(&p, &["plan", text]);
        assert!(
            out.contains("1 already in it") && !out.contains(secret),
            "{out}"
        );
        let out = said(&p, &["plan"]);
        assert!(!out.contains(secret) && out.contains(" 1. [ ] "), "{out}");
        // `waymark step add`, then the step found by the words it was given.
        let step = format!("also {text}");
        let out = said(&p, &["step", "add", &step]);
        assert!(
            !out.contains(secret) && out.contains("Added 1 step"),
            "{out}"
        );
        let out = said(&p, &["step", "start", &step]);
        assert!(
            !out.contains(secret) && out.contains("in_progress"),
            "{out}"
        );
        // A step that is not there: the error quotes what was typed, redacted.
        let out = p.run(&["step", "done", &format!("not {text}")], "");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && !err.contains(secret), "{err}");
        let stored = holding(&p.path(".orchestration"), secret);
        assert_eq!(stored, Vec::<String>::new(), "{text}");
    }
}

#[test]
fn a_bash_command_s_output_tail_in_the_trace_hides_each_kind_of_secret() {
    for (text, secret) in KINDS {
        let p = Project::new();
        let output = format!("connecting\n{text}\ndone");
        let bash = event(
            &p,
            "PostToolUse-Bash.json",
            json!({"tool_input": {"command": "./deploy.sh", "description": "deploy"},
                   "tool_response": {"stdout": output, "stderr": "", "interrupted": false,
                                     "isImage": false, "noOutputExpected": false}}),
        );
        p.hook("PostToolUse", &bash);
        let trace = p.read(".orchestration/agent_trace.jsonl");
        let last: Value = serde_json::from_str(trace.lines().last().unwrap()).unwrap();
        let tail = last["metadata"]["waymark"]["output_tail"].as_str().unwrap();
        assert!(
            tail.contains("[REDACTED]") && tail.contains("done"),
            "{tail}"
        );
        assert!(!trace.contains(secret), "{text}: {trace}");
        assert_eq!(
            holding(&p.path(".orchestration"), secret),
            Vec::<String>::new()
        );
    }
}
