//! The post-hooks' acceptance scenarios (docs/design.md, Post-hooks: US1–US3), driven
//! through the real binary (`waymark hook …`) with hook inputs built from the Claude Code
//! 2.1.197 fixtures, checking the files a user sees: `.orchestration/agent_trace.jsonl`,
//! `active_intents.yaml`, `intent_map.md`, `AGENT.md`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::{Value, json};
use util::git;

mod util;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/claude-code-2.1.197"
);
const SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agent-trace/trace-record.json"
);

const INTENTS: &str = r#"# Sprint intents (kept by hand)
active_intents:
  - id: "INT-001"
    name: "JWT Authentication Migration"
    status: "IN_PROGRESS"   # set by the lead
    owned_scope:
      - "src/auth/**"
      - "src/session.ts"
    constraints:
      - "Must not use external auth providers"
    acceptance_criteria:
      - "src/auth/"
      - "test result: ok"
      - 're:\d+ passed'
    owner: alice

  - id: INT-002
    name: Docs
    status: PENDING
    owned_scope: ["docs/**"]
"#;

struct Proj {
    dir: tempfile::TempDir,
    config: tempfile::TempDir,
    /// The inputs sent so far (see [`Proj::hook_env`]).
    sent: std::cell::RefCell<std::collections::HashSet<String>>,
}

impl Proj {
    /// A real git repository with one commit, so records carry a revision.
    fn new() -> Proj {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["config", "user.email", "t@example.com"],
            &["config", "user.name", "t"],
        ] {
            git(d, args);
        }
        fs::write(d.join("README.md"), "# demo\n").unwrap();
        git(d, &["add", "README.md"]);
        git(d, &["commit", "-qm", "init"]);
        Proj {
            dir,
            config: tempfile::tempdir().unwrap(),
            sent: Default::default(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap_or_default()
    }

    fn intents(&self, yaml: &str) {
        self.write(".orchestration/active_intents.yaml", yaml);
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("waymark").unwrap();
        c.env("CLAUDE_PROJECT_DIR", self.root())
            .env("XDG_CONFIG_HOME", self.config.path())
            .env_remove("WAYMARK_TEST_PANIC")
            .env_remove("WAYMARK_MODEL_ID")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("WAYMARK_SCOPE_ENFORCEMENT")
            .env_remove("WAYMARK_TRACE_WINDOW")
            .env_remove("WAYMARK_AGENT_MD");
        c
    }

    /// Runs `waymark hook <event>`; asserts exit 0; returns the parsed stdout (or Null).
    fn hook(&self, event: &str, input: &Value) -> Value {
        self.hook_env(event, input, &[])
    }

    /// Sends `input` as one new event: Claude Code gives each tool call an id of its own,
    /// so a test that sends a call again means another call, which gets an id of its own
    /// here (one input sent twice is one event delivered to two registrations, handled
    /// once: tests/hook_cli.rs).
    fn hook_env(&self, event: &str, input: &Value, env: &[(&str, &str)]) -> Value {
        let mut c = self.cmd();
        for (k, v) in env {
            c.env(k, v);
        }
        let mut input = input.clone();
        if !self.sent.borrow_mut().insert(input.to_string()) && input.get("tool_use_id").is_some() {
            input["tool_use_id"] = next_tool_use_id().into();
        }
        let out = c
            .args(["hook", event])
            .write_stdin(input.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "hook exits 0: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        if stdout.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&stdout).expect("stdout is hook JSON")
        }
    }

    fn trace(&self) -> Vec<Value> {
        self.read(".orchestration/agent_trace.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("every trace line is JSON"))
            .collect()
    }

    fn records_of(&self, kind: &str) -> Vec<Value> {
        self.trace()
            .into_iter()
            .filter(|r| r["metadata"]["waymark"]["kind"] == kind)
            .collect()
    }

    fn log(&self) -> String {
        self.read(".orchestration/waymark.log")
    }

    /// A fixture with the recorded project path moved onto this project.
    fn fixture(&self, name: &str) -> Value {
        let text = fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap();
        let text = text.replace("/home/dev/project", self.root().to_str().unwrap());
        serde_json::from_str(&text).unwrap()
    }

    /// PostToolUse Write (create) of `rel` with `content`, in the fixture's shape.
    fn write_event(&self, rel: &str, content: &str) -> Value {
        let mut e = self.fixture("PostToolUse-Write.json");
        let abs = self.abs(rel);
        e["tool_input"]["file_path"] = json!(abs);
        e["tool_input"]["content"] = json!(content);
        e["tool_response"]["filePath"] = json!(abs);
        e["tool_response"]["content"] = json!(content);
        e
    }

    fn edit_event(&self, rel: &str) -> Value {
        let mut e = self.fixture("PostToolUse-Edit.json");
        let abs = self.abs(rel);
        e["tool_input"]["file_path"] = json!(abs);
        e["tool_response"]["filePath"] = json!(abs);
        e
    }

    fn bash_event(&self, command: &str, stdout: &str) -> Value {
        let mut e = self.fixture("PostToolUse-Bash.json");
        e["tool_input"]["command"] = json!(command);
        e["tool_response"]["stdout"] = json!(stdout);
        e
    }

    fn bash_failure(&self, command: &str, error: &str) -> Value {
        let mut e = self.fixture("PostToolUseFailure-Bash.json");
        e["tool_input"]["command"] = json!(command);
        e["error"] = json!(error);
        e
    }

    fn pre_write(&self, rel: &str) -> Value {
        let mut e = self.fixture("PreToolUse.json");
        e["tool_input"]["file_path"] = json!(self.abs(rel));
        e
    }

    /// PreToolUse of a Bash command (the shape of 2.1.332's PreToolUse-Bash.json).
    fn pre_bash(&self, command: &str) -> Value {
        let mut e = self.fixture("PreToolUse.json");
        e["tool_name"] = json!("Bash");
        e["tool_input"] = json!({"command": command, "description": "test"});
        e
    }

    /// PreToolUse of an MCP tool (`mcp__<server>__<tool>`) with `input`.
    fn pre_mcp(&self, tool: &str, input: Value) -> Value {
        let mut e = self.fixture("PreToolUse.json");
        e["tool_name"] = json!(tool);
        e["tool_input"] = input;
        e
    }

    fn abs(&self, rel: &str) -> String {
        if rel.starts_with('/') {
            rel.to_string()
        } else {
            self.path(rel).to_str().unwrap().to_string()
        }
    }
}

fn context(out: &Value) -> String {
    out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn warnings(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .flat_map(|r| {
            r["metadata"]["waymark"]["warnings"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

// ---- The ledger itself ----------------------------------------------------------------

#[test]
fn mutations_are_recorded_with_line_ranges_hashes_and_revision() {
    let p = Proj::new();
    let head = git(p.root(), &["rev-parse", "HEAD"]).trim().to_string();
    p.hook("PostToolUse", &p.write_event("src/lib.rs", "a\nb\nc\n"));
    p.hook("PostToolUse", &p.edit_event("hello.txt"));
    p.hook(
        "PostToolUse",
        &p.bash_event("echo hi > b.txt && echo bash-ok", "bash-ok"),
    );
    let t = p.trace();
    assert_eq!(t.len(), 3);
    let w = &t[0];
    assert_eq!(w["vcs"], json!({"type": "git", "revision": head}));
    assert_eq!(w["tool"]["name"], "claude-code");
    assert_eq!(w["files"][0]["path"], "src/lib.rs");
    let conv = &w["files"][0]["conversations"][0];
    assert_eq!(conv["contributor"], json!({"type": "ai"}));
    assert!(
        conv["url"]
            .as_str()
            .unwrap()
            .starts_with("file:///home/dev/.claude/projects/")
    );
    let r = &conv["ranges"][0];
    assert_eq!(
        (r["start_line"].as_u64(), r["end_line"].as_u64()),
        (Some(1), Some(3))
    );
    assert!(r["content_hash"].as_str().unwrap().starts_with("sha256:"));
    let m = &w["metadata"]["waymark"];
    assert_eq!(m["kind"], "mutation");
    assert_eq!(m["mutation_class"], "create");
    assert_eq!(m["session_id"], "691a2a5a-7237-4f61-95b1-055a0d4eec5c");
    assert_eq!(m["tool_use_id"], "toolu_3521e96c3297431ab482b30c");
    // The Edit fixture: line 1 replaced.
    let e = &t[1];
    assert_eq!(e["files"][0]["path"], "hello.txt");
    assert_eq!(e["metadata"]["waymark"]["mutation_class"], "edit");
    let r = &e["files"][0]["conversations"][0]["ranges"];
    assert_eq!(r.as_array().unwrap().len(), 1);
    assert_eq!(
        (r[0]["start_line"].as_u64(), r[0]["end_line"].as_u64()),
        (Some(1), Some(1))
    );
    // Bash: no files, command and exit code.
    let b = &t[2];
    assert_eq!(b["files"], json!([]));
    assert_eq!(
        b["metadata"]["waymark"]["command"],
        "echo hi > b.txt && echo bash-ok"
    );
    assert_eq!(b["metadata"]["waymark"]["exit_code"], 0);
    assert_eq!(b["metadata"]["waymark"]["output_tail"], "bash-ok");
}

#[test]
fn model_id_comes_from_the_environment() {
    let p = Proj::new();
    p.hook_env(
        "PostToolUse",
        &p.write_event("a.txt", "x\n"),
        &[("ANTHROPIC_MODEL", "claude-opus-4-8")],
    );
    assert_eq!(
        p.trace()[0]["files"][0]["conversations"][0]["contributor"]["model_id"],
        "anthropic/claude-opus-4-8"
    );
}

#[test]
fn a_path_outside_the_root_is_recorded_never_written() {
    let p = Proj::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("notes.txt");
    p.hook(
        "PostToolUse",
        &p.write_event(target.to_str().unwrap(), "x\n"),
    );
    let t = p.trace();
    assert_eq!(t[0]["files"][0]["path"], target.to_str().unwrap());
    assert!(warnings(&t)[0].contains("outside the project root"));
    assert!(!target.exists());
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn secrets_in_commands_and_output_are_redacted() {
    let p = Proj::new();
    let key = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh";
    p.hook(
        "PostToolUse",
        &p.bash_event(
            &format!("curl -H 'x-api-key: {key}' x"),
            &format!("token {key}"),
        ),
    );
    let text = p.read(".orchestration/agent_trace.jsonl");
    assert!(!text.contains(key), "{text}");
}

#[test]
fn the_trace_validates_against_the_agent_trace_schema() {
    let schema: Value = serde_json::from_str(&fs::read_to_string(SCHEMA).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let p = Proj::new();
    p.intents(INTENTS);
    let env = [("ANTHROPIC_MODEL", "claude-opus-4-8")];
    // Every kind of record: create, edit, overwrite, outside path, scope warnings,
    // bash, tool failure, transition.
    p.hook_env(
        "PostToolUse",
        &p.write_event("src/auth/login.ts", "fn a() {}\n"),
        &env,
    );
    p.hook_env("PostToolUse", &p.edit_event("src/auth/login.ts"), &env);
    let mut over = p.write_event("src/main.rs", "fn main() {}\n");
    over["tool_response"]["type"] = json!("update");
    over["tool_response"]["structuredPatch"] = json!([{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-x", "+fn main() {}"]}]);
    p.hook_env("PostToolUse", &over, &env);
    p.hook_env(
        "PostToolUse",
        &p.write_event("/tmp/waymark-outside/x.txt", "x\n"),
        &env,
    );
    p.hook_env(
        "PostToolUseFailure",
        &p.bash_failure("echo failing >&2; exit 3", "Exit code 3\nfailing"),
        &env,
    );
    p.hook_env(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed"),
        &env,
    );
    let t = p.trace();
    let kinds: Vec<_> = t
        .iter()
        .map(|r| {
            r["metadata"]["waymark"]["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for k in ["mutation", "scope_warning", "bash", "transition"] {
        assert!(kinds.iter().any(|x| x == k), "no {k} record in {kinds:?}");
    }
    for r in &t {
        let errors: Vec<String> = validator.iter_errors(r).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{r}\n{errors:#?}");
    }
    // The current schema wants `X.Y.Z`: the `"0.1"` of older records no longer passes.
    assert_eq!(t[0]["version"], "0.1.0");
    let mut r = t[0].clone();
    r["version"] = json!("0.1");
    assert!(!validator.is_valid(&r));
}

/// A tool use id no other call of this test run has.
fn next_tool_use_id() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("toolu_test_{}", N.fetch_add(1, Ordering::SeqCst))
}

#[test]
fn concurrent_hooks_lose_no_record() {
    let p = Proj::new();
    let root = p.root().to_path_buf();
    let events: Vec<String> = (0..8)
        .map(|i| p.write_event(&format!("f{i}.txt"), "x\n").to_string())
        .collect();
    let handles: Vec<_> = events
        .into_iter()
        .map(|e| {
            let root = root.clone();
            let cfg = p.config.path().to_path_buf();
            std::thread::spawn(move || {
                for _ in 0..5 {
                    let mut call: Value = serde_json::from_str(&e).unwrap();
                    call["tool_use_id"] = next_tool_use_id().into();
                    let mut c = Command::cargo_bin("waymark").unwrap();
                    c.env("CLAUDE_PROJECT_DIR", &root)
                        .env("XDG_CONFIG_HOME", &cfg)
                        .args(["hook", "PostToolUse"])
                        .write_stdin(call.to_string())
                        .assert()
                        .success();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(p.records_of("mutation").len(), 40);
}

// ---- US1: intent progress -------------------------------------------------------------

#[test]
fn us1_all_criteria_met_completes_the_intent_and_logs_the_transition() {
    let p = Proj::new();
    p.intents(INTENTS);
    p.hook(
        "PostToolUse",
        &p.write_event("src/auth/login.ts", "export {}\n"),
    );
    assert_eq!(
        p.read(".orchestration/active_intents.yaml"),
        INTENTS,
        "partial: unchanged"
    );
    let out = p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed; 0 failed"),
    );
    // Only the status line changed: comments, order, quoting, extra fields all stay.
    assert_eq!(
        p.read(".orchestration/active_intents.yaml"),
        INTENTS.replace(
            "status: \"IN_PROGRESS\"   # set",
            "status: \"COMPLETED\"   # set"
        )
    );
    let tr = p.records_of("transition");
    assert_eq!(tr.len(), 1);
    let t = &tr[0]["metadata"]["waymark"]["transition"];
    assert_eq!(t["intent_id"], "INT-001");
    assert_eq!(t["from"], "IN_PROGRESS");
    assert_eq!(t["to"], "COMPLETED");
    assert_eq!(t["criteria"].as_array().unwrap().len(), 3);
    assert_eq!(tr[0]["files"], json!([]));
    assert!(context(&out).contains("INT-001"), "{out}");
    // Once completed, nothing more happens.
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed"),
    );
    assert_eq!(p.records_of("transition").len(), 1);
}

#[test]
fn us1_some_criteria_met_is_a_no_op() {
    let p = Proj::new();
    p.intents(INTENTS);
    p.hook(
        "PostToolUse",
        &p.write_event("src/auth/login.ts", "export {}\n"),
    );
    // "test result: ok" but no "N passed".
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok."),
    );
    assert_eq!(p.read(".orchestration/active_intents.yaml"), INTENTS);
    assert!(p.records_of("transition").is_empty());
}

#[test]
fn us1_criteria_in_the_forks_trace_dialect_count() {
    let p = Proj::new();
    p.intents(INTENTS);
    // A ledger left by one of the forks, then one waymark event.
    p.write(
        ".orchestration/agent_trace.jsonl",
        concat!(
            r#"{"id":"f1","timestamp":"2026-02-21T10:00:00Z","vcs":{"revision_id":"abc"},"files":[{"relative_path":"src/auth/jwt.ts","conversations":[{"contributor":{"entity_type":"AI","model_identifier":"claude-3-5"},"ranges":[{"start_line":1,"end_line":2,"content_hash":"sha256:00"}],"related":[{"type":"specification","value":"INT-001"}]}]}],"mutation_class":"AST_REFACTOR"}"#,
            "\n",
            r#"{"id":"f2","timestamp":"2026-02-21T10:01:00Z","tool":"execute_command","output":"test result: ok. 9 passed","files":[]}"#,
            "\n"
        ),
    );
    p.hook("PostToolUse", &p.edit_event("src/auth/jwt.ts"));
    // The fork's change counts by its path; its output is words, not a run that passed.
    assert!(
        !p.read(".orchestration/active_intents.yaml")
            .contains("status: \"COMPLETED\"")
    );
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 9 passed"),
    );
    assert!(
        p.read(".orchestration/active_intents.yaml")
            .contains("status: \"COMPLETED\"")
    );
}

/// Words are not runs (issue 32, item 6): an `echo` of the criterion, and a failing run
/// whose output matches it, meet nothing; the same output from a validation that exited
/// 0 does.
#[test]
fn us1_criteria_are_met_by_runs_that_passed_not_by_words() {
    let p = Proj::new();
    p.intents(INTENTS);
    p.hook("PostToolUse", &p.edit_event("src/auth/jwt.ts"));
    let yaml = || p.read(".orchestration/active_intents.yaml");
    p.hook(
        "PostToolUse",
        &p.bash_event("echo 'test result: ok'", "test result: ok"),
    );
    let failing = p.bash_failure(
        "cargo test",
        "Exit code 101\ntest result: ok. 1 passed; 1 failed",
    );
    p.hook("PostToolUseFailure", &failing);
    assert!(!yaml().contains("COMPLETED"), "{}", yaml());
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 2 passed"),
    );
    assert!(yaml().contains("COMPLETED"), "{}", yaml());
}

#[test]
fn us1_every_running_intent_owning_the_file_completes_on_its_own() {
    let p = Proj::new();
    let intents = r#"# two intents at work on src/, a third elsewhere
- id: WIDE
  name: Refactor src
  status: in_progress
  owned_scope: ["src/**"]
  acceptance_criteria: ["test result: ok", "src/a.rs"]
- id: NARROW
  name: Fix a.rs
  status: active   # since Monday
  owned_scope: src/a.rs
  acceptance_criteria:
    - 're:\d+ passed'
    - src/a.rs
- id: DOCS
  name: Docs
  status: in_progress
  owned_scope: ["docs/**"]
  acceptance_criteria: ["test result: ok"]
"#;
    p.intents(intents);
    // A test run with no file: three intents run, none chosen, nothing to judge it under.
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed; 0 failed"),
    );
    assert_eq!(p.read(".orchestration/active_intents.yaml"), intents);
    // An edit of src/a.rs: both intents owning it meet their criteria, each completes.
    let out = p.hook("PostToolUse", &p.write_event("src/a.rs", "fn a() {}\n"));
    assert_eq!(
        p.read(".orchestration/active_intents.yaml"),
        intents
            .replacen("status: in_progress\n", "status: completed\n", 1)
            .replace("status: active   #", "status: completed   #")
    );
    let tr = p.records_of("transition");
    let moves: Vec<_> = tr
        .iter()
        .map(|r| {
            let t = &r["metadata"]["waymark"]["transition"];
            format!("{} {} -> {}", t["intent_id"], t["from"], t["to"])
        })
        .collect();
    assert_eq!(
        moves,
        [
            r#""WIDE" "in_progress" -> "completed""#,
            r#""NARROW" "active" -> "completed""#
        ]
    );
    assert_eq!(tr[1]["metadata"]["waymark"]["intent_id"], "NARROW");
    let told = context(&out);
    assert!(
        told.contains("intent WIDE (Refactor src) is now completed")
            && told.contains("intent NARROW (Fix a.rs) is now completed"),
        "{told}"
    );
}

// ---- US2: scope drift -----------------------------------------------------------------

#[test]
fn us2_near_boundary_is_a_warning_in_the_trace_and_to_the_agent() {
    let p = Proj::new();
    p.intents(INTENTS);
    let out = p.hook("PostToolUse", &p.write_event("src/session.ts", "x\n"));
    let w = warnings(&p.records_of("scope_warning"));
    assert!(
        w.iter()
            .any(|w| w.contains("src/session.ts") && w.contains("near the boundary")),
        "{w:?}"
    );
    assert!(context(&out).contains("near the boundary"), "{out}");
    assert!(
        out["hookSpecificOutput"]
            .get("permissionDecision")
            .is_none()
    );
}

#[test]
fn us2_scope_expansion_is_noted_and_mapped_once() {
    let p = Proj::new();
    p.intents(INTENTS);
    let out = p.hook("PostToolUse", &p.write_event("src/auth/new.ts", "x\n"));
    assert_eq!(
        out,
        Value::Null,
        "an expansion note is for the trace, not the agent"
    );
    let map = p.read(".orchestration/intent_map.md");
    assert!(
        map.contains("## INT-001: JWT Authentication Migration\n\n- src/auth/new.ts\n"),
        "{map}"
    );
    let w = warnings(&p.records_of("scope_warning"));
    assert_eq!(
        w.iter().filter(|w| w.contains("Scope expansion")).count(),
        1
    );
    // The same file again: already mapped, no second note, no duplicate line.
    p.hook("PostToolUse", &p.edit_event("src/auth/new.ts"));
    assert_eq!(p.read(".orchestration/intent_map.md"), map);
    assert_eq!(p.records_of("scope_warning").len(), 1);
    // A user-written map entry for a directory covers its files.
    p.write(
        ".orchestration/intent_map.md",
        "## INT-001\n- `src/auth/` — the module\n",
    );
    p.hook("PostToolUse", &p.write_event("src/auth/other.ts", "x\n"));
    assert_eq!(p.records_of("scope_warning").len(), 1);
}

#[test]
fn us2_out_of_scope_warns_and_never_blocks() {
    let p = Proj::new();
    p.intents(INTENTS);
    let pre = p.hook("PreToolUse", &p.pre_write("src/main.rs"));
    assert_eq!(pre, Value::Null, "warn mode never denies");
    let out = p.hook(
        "PostToolUse",
        &p.write_event("src/main.rs", "fn main() {}\n"),
    );
    let ctx = context(&out);
    assert!(
        ctx.contains("src/main.rs is out of scope for INT-001"),
        "{ctx}"
    );
    assert!(ctx.contains("src/auth/**"));
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert!(warnings(&p.records_of("scope_warning"))[0].contains("out of scope"));
    // The mutation itself is recorded as usual.
    assert_eq!(p.records_of("mutation").len(), 1);
}

#[test]
fn scope_enforcement_off_is_silent() {
    let p = Proj::new();
    p.intents(INTENTS);
    // Switched off by the user (the environment); a project may not (tests/admin.rs).
    let off = [("WAYMARK_SCOPE_ENFORCEMENT", "off")];
    let out = p.hook_env("PostToolUse", &p.write_event("src/main.rs", "x\n"), &off);
    assert_eq!(out, Value::Null);
    assert!(p.records_of("scope_warning").is_empty());
}

#[test]
fn deny_mode_denies_out_of_scope_writes_in_pre_tool_use() {
    let p = Proj::new();
    p.intents(INTENTS);
    p.write(
        ".orchestration/waymark.json",
        r#"{"scope_enforcement": "deny"}"#,
    );
    let out = p.hook("PreToolUse", &p.pre_write("src/main.rs"));
    let h = &out["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "deny");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("Scope Violation: INT-001 is not authorized to edit src/main.rs"),
        "{out}"
    );
    // In scope: allowed, nothing printed.
    assert_eq!(
        p.hook("PreToolUse", &p.pre_write("src/auth/a.ts")),
        Value::Null
    );
    // The denial is a governance lesson.
    let agent = p.read("AGENT.md");
    assert!(agent.contains("## Lessons Learned"));
    assert!(agent.contains("Scope violation denied: src/main.rs"));
    assert!(agent.contains("**Category**: governance"));
    assert!(agent.contains("**Related Intent**: INT-001"));
}

/// Deny mode sees where a write really lands (issue 32, item 5): through a directory
/// linked inside the project to a place out of the scope, or into a file with another name
/// (a hard link) the scope cannot see.
#[test]
fn deny_mode_follows_links_to_where_a_write_lands() {
    let p = Proj::new();
    p.intents(INTENTS);
    p.write(
        ".orchestration/waymark.json",
        r#"{"scope_enforcement": "deny"}"#,
    );
    p.write("src/main.rs", "fn main() {}\n");
    // src/auth/up is src/: in the project, out of the scope.
    std::fs::create_dir_all(p.path("src/auth")).unwrap();
    std::os::unix::fs::symlink("..", p.path("src/auth/up")).unwrap();
    // A write to `rel` is denied, for the reason that holds `why`.
    let denied = |rel: &str, why: &str| {
        let out = p.hook("PreToolUse", &p.pre_write(rel));
        let h = &out["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "deny", "{out}");
        let reason = h["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains(why), "{out}");
    };
    denied("src/auth/up/main.rs", "edit src/main.rs");
    p.write("src/auth/token.ts", "export {}\n");
    std::fs::hard_link(p.path("src/auth/token.ts"), p.path("src/shared.ts")).unwrap();
    denied("src/auth/token.ts", "has 2 names (hard links)");
    // A plain file in scope is still written freely.
    assert_eq!(
        p.hook("PreToolUse", &p.pre_write("src/auth/a.ts")),
        Value::Null
    );
}

/// A hard-linked file is refused only where a scope judges the write: in warn mode, or
/// with no intent in progress, it is written like any other file.
#[test]
fn a_hard_linked_file_is_not_denied_where_no_scope_applies() {
    let p = Proj::new();
    p.intents(&INTENTS.replace("\"IN_PROGRESS\"", "\"PENDING\""));
    p.write("src/auth/token.ts", "export {}\n");
    std::fs::hard_link(p.path("src/auth/token.ts"), p.path("src/shared.ts")).unwrap();
    let write = p.pre_write("src/auth/token.ts");
    assert_eq!(p.hook("PreToolUse", &write), Value::Null, "warn mode");
    p.write(
        ".orchestration/waymark.json",
        r#"{"scope_enforcement": "deny"}"#,
    );
    assert_eq!(
        p.hook("PreToolUse", &write),
        Value::Null,
        "no intent in progress"
    );
    // With the intent in progress its scope judges the write, and the second name is
    // one it cannot see.
    p.intents(INTENTS);
    let (d, reason) = decision(&p, &write);
    assert_eq!(d, "deny", "{reason}");
    assert!(reason.contains("has 2 names (hard links)"), "{reason}");
}

/// The PreToolUse decision for `input` ("" for none) and its reason.
fn decision(p: &Proj, input: &Value) -> (String, String) {
    let out = p.hook("PreToolUse", input);
    let h = &out["hookSpecificOutput"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        text(&h["permissionDecision"]),
        text(&h["permissionDecisionReason"]),
    )
}

/// Codex CLI's PreToolUse for `tool` with `input`, through `waymark hook --agent codex`;
/// the decision and its reason.
fn codex_decision(p: &Proj, tool: &str, input: Value) -> (String, String) {
    let e = json!({"session_id": "01a21ec5-0000-7000-8000-000000000009", "cwd": p.root(),
        "hook_event_name": "PreToolUse", "model": "gpt-5.5", "turn_id": "t",
        "tool_name": tool, "tool_use_id": next_tool_use_id(), "tool_input": input});
    let out = p
        .cmd()
        .args(["hook", "--agent", "codex", "PreToolUse"])
        .write_stdin(e.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    let h = &v["hookSpecificOutput"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        text(&h["permissionDecision"]),
        text(&h["permissionDecisionReason"]),
    )
}

/// Deny mode reads Codex's patches as Codex does (issue 50, item 2): an indented header
/// is a header; `apply_patch` run from the shell (a here-document, after a `cd`) is judged
/// by the files its patch names; and no scope, not even `**`, covers `.git/` or
/// waymark's own state, for a patch as for Claude Code's Write.
#[test]
fn deny_mode_reads_codex_patches_as_codex_does() {
    let p = deny_mode();
    let patch = |header: &str| format!("*** Begin Patch\n{header}\n+x\n*** End Patch\n");
    let (d, reason) = codex_decision(
        &p,
        "apply_patch",
        json!({"command": patch("   *** Add File: docs/x.md")}),
    );
    assert_eq!(d, "deny", "an indented header: {reason}");
    assert!(reason.contains("docs/x.md"), "{reason}");
    let (d, _) = codex_decision(
        &p,
        "apply_patch",
        json!({"command": patch("*** Add File: src/auth/b.ts")}),
    );
    assert_eq!(d, "", "in scope");
    for shell in [
        format!(
            "apply_patch <<'EOF'\n{}EOF\n",
            patch("*** Add File: docs/y.md")
        ),
        format!(
            "cd docs && apply_patch <<'EOF'\n{}EOF\n",
            patch("*** Add File: y.md")
        ),
    ] {
        let (d, reason) = codex_decision(&p, "Bash", json!({"command": shell}));
        assert_eq!(d, "deny", "{shell}: {reason}");
        assert!(reason.contains("docs/y.md"), "{reason}");
    }
    p.intents(&INTENTS.replace("- \"src/auth/**\"", "- \"**\""));
    let (d, reason) = codex_decision(
        &p,
        "apply_patch",
        json!({"command": patch("*** Add File: .git/hooks/pre-commit")}),
    );
    assert_eq!(d, "deny", "{reason}");
    let (d, _) = decision(&p, &p.pre_write(".git/hooks/post-commit"));
    assert_eq!(d, "deny");
    let (d, _) = decision(&p, &p.pre_write("src/anything.rs"));
    assert_eq!(d, "", "`**` owns the rest");
}

fn deny_mode() -> Proj {
    let p = Proj::new();
    p.intents(INTENTS);
    p.write(
        ".orchestration/waymark.json",
        r#"{"scope_enforcement": "deny"}"#,
    );
    p.write("src/auth/a.ts", "export {}\n");
    p.write("src/main.rs", "fn main() {}\n");
    p
}

/// Deny mode judges the files a Bash command writes like a Write's path (issue 32, item
/// 5): a redirection, `sed -i`, `tee`, a copy's destination, after a `cd`, in a `bash -c`
/// script, through a symlink, out of the project; what stays in scope runs.
#[test]
fn deny_mode_denies_a_bash_command_writing_out_of_scope() {
    let p = deny_mode();
    std::os::unix::fs::symlink("..", p.path("src/auth/up")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside_file = format!("{}/f", outside.path().display());
    for (command, path) in [
        ("echo x > other/file", "other/file"),
        ("sed -i 's/main/start/' src/main.rs", "src/main.rs"),
        (
            "timeout 5 sed -i 's/main/start/' src/main.rs",
            "src/main.rs",
        ),
        ("env -S \"sed -i s/main/start/\" src/main.rs", "src/main.rs"),
        ("flock /tmp/lock -c 'touch notes.md'", "notes.md"),
        ("/usr/bin/time -o times.txt cargo test", "times.txt"),
        ("cargo test 2>&1 | tee build.log", "build.log"),
        ("cp src/auth/a.ts other/b.ts", "other/b.ts"),
        ("cp src/auth/a.ts src", "src/a.ts"),
        ("cd src && echo x >> main.rs", "src/main.rs"),
        ("bash -c 'touch notes.md'", "notes.md"),
        ("echo x > src/auth/up/main.rs", "src/main.rs"),
        (&format!("echo x > {outside_file}"), outside_file.as_str()),
    ] {
        let (d, reason) = decision(&p, &p.pre_bash(command));
        assert_eq!(d, "deny", "{command}: {reason}");
        let says = format!("Scope Violation: INT-001 is not authorized to edit {path}.");
        assert!(reason.starts_with(&says), "{command}: {reason}");
    }
    let agent = p.read("AGENT.md");
    assert!(
        agent.contains("Scope violation denied: other/file"),
        "{agent}"
    );
    assert!(agent.contains("Bash tried to edit other/file"), "{agent}");
    for command in [
        "echo x > src/auth/b.ts",
        "sed -i 's/a/b/' src/auth/a.ts",
        "cp README.md src/auth/",
        "cargo test 2>&1 | tee src/auth/test.log > /dev/null",
        "ls -la > /dev/null 2>&1",
        "cargo build && git status",
    ] {
        assert_eq!(decision(&p, &p.pre_bash(command)).0, "", "{command}");
    }
}

/// A Bash command whose targets the text does not name is asked about, naming why and the
/// scope; never denied, and no lesson. One that also names a file out of scope is denied.
#[test]
fn deny_mode_asks_about_a_bash_command_writing_where_it_cannot_read() {
    let p = deny_mode();
    for (command, why) in [
        (r#"echo x > "$OUT""#, "`$OUT` is not a literal path"),
        ("echo x > *.log", "`*.log` is not a literal path"),
        (
            r#"python3 -c "open('x', 'w').write('y')""#,
            "`python3` runs inline code that may write files",
        ),
        (
            "git ls-files | xargs sed -i s/a/b/",
            "`xargs sed` writes files the text does not name",
        ),
    ] {
        let (d, reason) = decision(&p, &p.pre_bash(command));
        assert_eq!(d, "ask", "{command}: {reason}");
        assert!(reason.contains(why), "{command}: {reason}");
        assert!(
            reason.contains("INT-001's owned_scope (src/auth/**, src/session.ts)"),
            "{reason}"
        );
    }
    assert!(!p.read("AGENT.md").contains("Scope violation"));
    let (d, reason) = decision(&p, &p.pre_bash(r#"echo x > "$OUT"; echo y > other.txt"#));
    assert_eq!(d, "deny", "{reason}");
    // No intent in progress: nothing to hold a command to.
    p.intents(&INTENTS.replace("IN_PROGRESS", "DONE"));
    assert_eq!(decision(&p, &p.pre_bash(r#"echo x > "$OUT""#)).0, "");
}

/// Issue 43, item 3: writers waymark did not know are judged by their files (refused out
/// of scope, let through in it); what only running can tell is asked about; an MCP tool's
/// command line is read like Bash's, and a path given to an MCP tool waymark does not
/// know is asked about.
#[test]
fn deny_mode_judges_every_writer_and_asks_about_the_rest() {
    let p = deny_mode();
    for command in [
        "rsync -a build/ other/out/",
        "awk -i inplace '{print}' other/c.ts",
        "ed -s other/d.ts < fix.ed",
        "busybox sed -i s/a/b/ other/e.ts",
        "patch -o other/f.ts src/auth/a.ts fix.patch",
    ] {
        let (d, reason) = decision(&p, &p.pre_bash(command));
        assert_eq!(d, "deny", "{command}: {reason}");
    }
    for command in [
        "awk -i inplace '{print}' src/auth/a.ts",
        "busybox sed -i s/a/b/ src/session.ts",
    ] {
        assert_eq!(decision(&p, &p.pre_bash(command)).0, "", "{command}");
    }
    for (command, why) in [
        (
            "eval \"$(cat cmds)\"",
            "`eval` runs a command line built at run time",
        ),
        (
            "patch -p1 < fix.patch",
            "`patch` writes the files its patch names",
        ),
        (
            "tar xzf vendor.tar.gz",
            "`tar` extracts the files its archive holds",
        ),
        ("$EDITOR src/auth/a.ts", "is not named literally"),
        (
            "ln -s /etc src/auth/cfg && echo x > src/auth/cfg/hosts",
            "written through a link",
        ),
    ] {
        let (d, reason) = decision(&p, &p.pre_bash(command));
        assert_eq!(d, "ask", "{command}: {reason}");
        assert!(reason.contains(why), "{command}: {reason}");
    }
    let run = json!({"command": format!("echo x > {}", p.abs("other/g.ts"))});
    assert_eq!(decision(&p, &p.pre_mcp("mcp__shell__run", run)).0, "deny");
    let unknown = json!({"path": p.abs("src/main.rs"), "text": "x"});
    let (d, reason) = decision(&p, &p.pre_mcp("mcp__notes__sync_note", unknown));
    assert_eq!(d, "ask", "{reason}");
    assert!(reason.contains("which waymark does not know"), "{reason}");
    let looks = json!({"path": p.abs("src/main.rs")});
    assert_eq!(
        decision(&p, &p.pre_mcp("mcp__notes__get_note", looks)).0,
        ""
    );
}

/// MCP filesystem writes are judged by the paths their input names: a move by both.
#[test]
fn deny_mode_judges_mcp_filesystem_writes() {
    let p = deny_mode();
    let write = |rel: &str| json!({"path": p.abs(rel), "content": "x"});
    let (d, reason) = decision(
        &p,
        &p.pre_mcp("mcp__filesystem__write_file", write("other/b.ts")),
    );
    assert_eq!(d, "deny", "{reason}");
    assert!(
        reason.contains("not authorized to edit other/b.ts"),
        "{reason}"
    );
    for (from, to, out) in [
        ("src/auth/a.ts", "docs/a.ts", "docs/a.ts"),
        ("src/main.rs", "src/auth/main.rs", "src/main.rs"),
    ] {
        let input = json!({"source": p.abs(from), "destination": p.abs(to)});
        let (d, reason) = decision(&p, &p.pre_mcp("mcp__filesystem__move_file", input));
        assert_eq!(d, "deny", "{reason}");
        assert!(reason.contains(&format!("edit {out}.")), "{reason}");
    }
    let edit = json!({"path": p.abs("src/main.rs"), "edits": [], "dryRun": false});
    assert_eq!(
        decision(&p, &p.pre_mcp("mcp__fs__edit_file", edit)).0,
        "deny"
    );
    for (tool, input) in [
        ("mcp__filesystem__write_file", write("src/auth/c.ts")),
        (
            "mcp__filesystem__read_file",
            json!({"path": p.abs("src/main.rs")}),
        ),
        (
            "mcp__filesystem__edit_file",
            json!({"path": p.abs("src/main.rs"), "dryRun": true}),
        ),
        (
            "mcp__filesystem__create_directory",
            json!({"path": p.abs("src/auth/new")}),
        ),
    ] {
        assert_eq!(decision(&p, &p.pre_mcp(tool, input)).0, "", "{tool}");
    }
}

/// `scope_enforcement: "warn"`, the default, never denies nor asks before a tool runs.
#[test]
fn warn_mode_never_denies_nor_asks_about_bash_or_mcp_writes() {
    let p = Proj::new();
    p.intents(INTENTS);
    for input in [
        p.pre_bash("echo x > other/file"),
        p.pre_bash(r#"echo x > "$OUT""#),
        p.pre_bash("sed -i s/a/b/ README.md"),
        p.pre_mcp(
            "mcp__filesystem__write_file",
            json!({"path": p.abs("other/b.ts"), "content": "x"}),
        ),
    ] {
        assert_eq!(p.hook("PreToolUse", &input), Value::Null, "{input}");
    }
}

// ---- US3: shared brain ----------------------------------------------------------------

const AGENT_MD: &str = "# Agent notes\n\nHand-written rules.\n\n## Lessons Learned\n\n### 2026-01-01: Older lesson\n**Issue**: x\n**Solution**: y\n**Related Intent**: none\n**Category**: governance\n";

fn permission_denied(p: &Proj, reason: &str) -> Value {
    let mut e = p.fixture("PreToolUse.json");
    e["hook_event_name"] = json!("PermissionDenied");
    e["tool_name"] = json!("Bash");
    e["tool_input"] = json!({"command": "rm -rf build"});
    e["reason"] = json!(reason);
    e
}

#[test]
fn us3_a_denial_is_a_governance_lesson_counted_not_repeated() {
    let p = Proj::new();
    p.write("AGENT.md", AGENT_MD);
    let e = permission_denied(
        &p,
        "Permission to use Bash with command rm -rf build has been denied.",
    );
    assert_eq!(p.hook("PermissionDenied", &e), Value::Null);
    let once = p.read("AGENT.md");
    assert!(
        once.starts_with(AGENT_MD),
        "the rest of AGENT.md is untouched"
    );
    let lesson = &once[AGENT_MD.len()..];
    assert!(
        lesson.contains(": Permission denied: Bash rm -rf build\n"),
        "{lesson}"
    );
    assert!(
        lesson
            .contains("**Issue**: Claude Code denied Bash on rm -rf build: Permission to use Bash")
    );
    assert!(lesson.contains("**Solution**: "));
    assert!(lesson.contains("**Related Intent**: none\n**Category**: governance\n"));
    p.hook("PermissionDenied", &e);
    p.hook("PermissionDenied", &e);
    let thrice = p.read("AGENT.md");
    assert_eq!(thrice.matches("Permission denied: Bash").count(), 1);
    let expected = format!(
        "{AGENT_MD}{}",
        lesson.replace(
            "**Category**: governance\n",
            "**Category**: governance\n**Seen**: 3 times\n"
        )
    );
    assert_eq!(thrice, expected);
}

#[test]
fn us3_a_tool_error_carrying_a_deny_is_a_governance_lesson() {
    let p = Proj::new();
    let mut e = p.fixture("PostToolUseFailure-Bash.json");
    e["tool_name"] = json!("Write");
    e["tool_input"] = json!({"file_path": p.abs("secrets/x.env"), "content": "x"});
    e["error"] = json!("Hook PreToolUse:Write denied this tool: protected path");
    p.hook("PostToolUseFailure", &e);
    let agent = p.read("AGENT.md");
    assert!(
        agent.contains("Tool call denied: Write secrets/x.env"),
        "{agent}"
    );
    assert!(agent.contains("**Category**: governance"));
    // A command that merely failed is not a governance matter.
    let q = Proj::new();
    q.hook(
        "PostToolUseFailure",
        &q.bash_failure(
            "cat /root/x",
            "Exit code 1\ncat: /root/x: Permission denied",
        ),
    );
    assert_eq!(q.read("AGENT.md"), "");
}

#[test]
fn us3_a_file_claimed_by_two_intents_is_a_coordination_note() {
    let p = Proj::new();
    p.intents(
        &INTENTS
            .replace("status: PENDING", "status: IN_PROGRESS")
            .replace(
                "owned_scope: [\"docs/**\"]",
                "owned_scope: [\"docs/**\", \"src/auth/README.md\"]",
            ),
    );
    p.hook(
        "PostToolUse",
        &p.write_event("src/auth/README.md", "# auth\n"),
    );
    let agent = p.read("AGENT.md");
    assert!(
        agent.contains("Scope conflict: src/auth/README.md is claimed by INT-001 and INT-002"),
        "{agent}"
    );
    assert!(agent.contains("**Category**: scope-conflict"));
}

#[test]
fn us3_two_sessions_on_one_file_is_a_coordination_note() {
    let p = Proj::new();
    let first = p.write_event("src/shared.rs", "a\n");
    p.hook("PostToolUse", &first);
    assert_eq!(p.read("AGENT.md"), "", "one session is no conflict");
    p.hook("PostToolUse", &first);
    assert_eq!(p.read("AGENT.md"), "");
    let mut second = first.clone();
    second["session_id"] = json!("another-session");
    let out = p.hook("PostToolUse", &second);
    assert!(context(&out).contains("another session"), "{out}");
    let agent = p.read("AGENT.md");
    assert!(
        agent.contains("Scope conflict: src/shared.rs changed by two sessions"),
        "{agent}"
    );
    // Outside the conflict window, no note.
    let q = Proj::new();
    q.write(
        ".orchestration/waymark.json",
        r#"{"conflict_window": "1s"}"#,
    );
    q.write(
        ".orchestration/agent_trace.jsonl",
        &format!(
            "{}\n",
            json!({"version":"0.1","id":"x","timestamp":"2020-01-01T00:00:00Z","files":[{"path":"src/shared.rs","conversations":[]}],"metadata":{"waymark":{"kind":"mutation","event":"PostToolUse","session_id":"old"}}})
        ),
    );
    q.hook("PostToolUse", &q.write_event("src/shared.rs", "a\n"));
    assert_eq!(q.read("AGENT.md"), "");
}

#[test]
fn us3_a_failed_validation_is_one_verification_lesson_not_a_governance_one() {
    let p = Proj::new();
    p.intents(INTENTS);
    let e = p.bash_failure(
        "cargo test --all",
        "Exit code 101\nrunning 2 tests\ntest auth::jwt ... FAILED\ntest result: FAILED. 1 passed; 1 failed",
    );
    p.hook("PostToolUseFailure", &e);
    let agent = p.read("AGENT.md");
    assert_eq!(agent.matches("### ").count(), 1, "{agent}");
    assert!(agent.contains(": Verification failed: cargo test --all\n"));
    assert!(agent.contains("**Issue**: `cargo test --all` exited with code 101."));
    assert!(agent.contains("**Related Intent**: INT-001"));
    assert!(agent.contains("**Category**: verification-failure"));
    assert!(agent.contains("test result: FAILED. 1 passed; 1 failed\n```"));
    p.hook("PostToolUseFailure", &e);
    let again = p.read("AGENT.md");
    assert_eq!(again.matches("### ").count(), 1);
    assert!(again.contains("**Seen**: 2 times"));
    // The failing run is in the trace too, with its exit code.
    let b = p.records_of("bash");
    assert_eq!(b[0]["metadata"]["waymark"]["exit_code"], 101);
    assert_eq!(b[0]["metadata"]["waymark"]["event"], "PostToolUseFailure");
    // A non-validation command failing is no lesson at all.
    let q = Proj::new();
    q.hook(
        "PostToolUseFailure",
        &q.fixture("PostToolUseFailure-Bash.json"),
    );
    assert_eq!(q.read("AGENT.md"), "");
}

// ---- Robustness -----------------------------------------------------------------------

#[test]
fn a_malformed_intents_file_is_logged_and_the_hooks_keep_working() {
    let p = Proj::new();
    p.intents("active_intents: [ {id: INT-1, status: ");
    let out = p.hook("PostToolUse", &p.write_event("src/main.rs", "x\n"));
    assert_eq!(out, Value::Null);
    assert_eq!(p.records_of("mutation").len(), 1);
    let log = p.log();
    assert!(log.contains("active_intents.yaml is not valid"), "{log}");
    assert!(log.contains("intent governance is off until it is fixed"));
    // The file is left as the user wrote it.
    assert_eq!(
        p.read(".orchestration/active_intents.yaml"),
        "active_intents: [ {id: INT-1, status: "
    );
}

#[test]
fn a_missing_intents_file_is_an_error_only_when_an_intent_was_in_use() {
    let p = Proj::new();
    p.hook("PostToolUse", &p.write_event("a.txt", "x\n"));
    assert!(
        !p.log().contains("intents"),
        "no intents, no noise: {}",
        p.log()
    );
    p.write(".orchestration/active_intent", "INT-001\n");
    p.hook("PostToolUse", &p.write_event("a.txt", "x\n"));
    assert!(
        p.log()
            .contains("active_intents.yaml is missing but intent INT-001 is in use"),
        "{}",
        p.log()
    );
    assert_eq!(p.records_of("mutation").len(), 2);
}

#[test]
fn a_panicking_post_hook_leaves_the_others_and_the_event_intact() {
    let p = Proj::new();
    p.intents(INTENTS);
    let panic = [("WAYMARK_TEST_PANIC", "intent_progress")];
    p.hook_env("PostToolUse", &p.write_event("src/main.rs", "x\n"), &panic);
    let out = p.hook_env(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed src/auth/"),
        &panic,
    );
    // IntentProgress panicked: no transition, the intents file untouched...
    assert_eq!(p.read(".orchestration/active_intents.yaml"), INTENTS);
    assert!(p.records_of("transition").is_empty());
    assert!(
        p.log().contains("post-hook intent_progress panicked"),
        "{}",
        p.log()
    );
    assert_eq!(out, Value::Null);
    // ...while the trace record, scope drift and the task bookkeeping all happened.
    assert_eq!(p.records_of("mutation").len(), 1);
    assert_eq!(p.records_of("bash").len(), 1);
    assert!(warnings(&p.records_of("scope_warning"))[0].contains("out of scope"));
    assert!(p.read(".orchestration/hook.json").contains("src/main.rs"));
    // Without the fault, the same evidence completes the intent.
    p.hook(
        "PostToolUse",
        &p.bash_event("cargo test", "test result: ok. 3 passed"),
    );
    assert_eq!(p.records_of("transition").len(), 1);

    // The trace writer itself failing does not stop ScopeDrift.
    let q = Proj::new();
    q.intents(INTENTS);
    let out = q.hook_env(
        "PostToolUse",
        &q.write_event("src/main.rs", "x\n"),
        &[("WAYMARK_TEST_PANIC", "trace,shared_brain")],
    );
    assert!(context(&out).contains("out of scope"));
    assert!(q.records_of("mutation").is_empty());
    assert!(q.log().contains("post-hook trace panicked"));
    assert!(q.log().contains("post-hook shared_brain panicked"));
}

// ---- waymark intent -------------------------------------------------------------------

#[test]
fn intent_list_and_use() {
    let p = Proj::new();
    p.intents(&INTENTS.replace("status: PENDING", "status: IN_PROGRESS"));
    let list = p.cmd().args(["intent", "list"]).output().unwrap();
    assert!(list.status.success());
    let text = String::from_utf8(list.stdout).unwrap();
    assert!(text.contains("INT-001") && text.contains("JWT Authentication Migration"));
    assert!(text.contains("src/auth/**, src/session.ts"));
    assert!(text.contains("2 intents are in progress"), "{text}");
    p.cmd()
        .args(["intent", "use", "INT-002"])
        .assert()
        .success();
    assert_eq!(p.read(".orchestration/active_intent"), "INT-002\n");
    let json: Value = serde_json::from_slice(
        &p.cmd()
            .args(["intent", "list", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["active"], "INT-002");
    assert_eq!(json["intents"][1]["active"], true);
    // The chosen intent now governs: an auth file is out of *its* scope.
    let out = p.hook("PostToolUse", &p.write_event("src/auth/a.ts", "x\n"));
    assert!(context(&out).contains("out of scope for INT-002"), "{out}");
    p.cmd().args(["intent", "use", "INT-404"]).assert().code(2);
}

// ---- Cost does not grow with the ledger -------------------------------------------------

/// The budget of docs/design.md "the same events with a 1,000,000-record trace ≤ 1.05×
/// the cost with 1,000 records", checked here in wall time with a looser 1.25× (the
/// benchmark decides it by instruction counts), for the worst PostToolUse Write: an
/// active intent with criteria, so IntentProgress and SharedBrain read the trace tail.
/// Slow to set up (writes ~500 MB), so run on demand:
/// `cargo test --release --test posthooks -- --ignored --nocapture million`.
#[test]
#[ignore]
fn million_record_trace_does_not_slow_post_tool_use() {
    use std::io::Write;
    use std::time::Instant;
    fn project_with(records: usize) -> Proj {
        let p = Proj::new();
        p.intents(&INTENTS.replace("'re:\\d+ passed'", "'never seen in this trace'"));
        let path = p.path(".orchestration/agent_trace.jsonl");
        let mut f = std::io::BufWriter::new(fs::File::create(path).unwrap());
        for i in 0..records {
            writeln!(
                f,
                r#"{{"version":"0.1","id":"00000000-0000-4000-8000-{i:012}","timestamp":"2026-02-21T10:00:00.000Z","vcs":{{"type":"git","revision":"0123456789abcdef0123456789abcdef01234567"}},"tool":{{"name":"claude-code","version":"unknown"}},"files":[{{"path":"src/auth/f{}.ts","conversations":[{{"contributor":{{"type":"ai"}},"ranges":[{{"start_line":1,"end_line":3,"content_hash":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}]}}]}}],"metadata":{{"waymark":{{"kind":"mutation","event":"PostToolUse","session_id":"s-{}","intent_id":"INT-001","mutation_class":"edit"}}}}}}"#,
                i % 100,
                i % 3
            )
            .unwrap();
        }
        p
    }
    fn median(p: &Proj, runs: usize) -> f64 {
        let input = p
            .write_event("src/auth/login.ts", "export {}\n")
            .to_string();
        let bin = assert_cmd::cargo::cargo_bin("waymark");
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let mut child = StdCommand::new(&bin)
                    .args(["hook", "PostToolUse"])
                    .env("CLAUDE_PROJECT_DIR", p.root())
                    .env("XDG_CONFIG_HOME", p.config.path())
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(input.as_bytes())
                    .unwrap();
                assert!(child.wait().unwrap().success());
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        times[runs / 2]
    }
    let small = project_with(1_000);
    let big = project_with(1_000_000);
    median(&small, 5);
    median(&big, 5);
    let (s, b) = (median(&small, 41), median(&big, 41));
    println!(
        "PostToolUse Write, median of 41: 1,000 records {s:.2} ms; 1,000,000 records {b:.2} ms; ratio {:.2}",
        b / s
    );
    assert!(
        b <= s * 1.25 + 0.5,
        "1M-record trace: {b:.2} ms vs {s:.2} ms"
    );
}

/// Issue 43: the lessons file is a file of the project, judged where it really lands.
/// An `agent_md` naming `.git`'s files, waymark's state or a place outside is refused
/// (from the project's waymark.json and from the environment alike: the lesson goes to
/// AGENT.md); a lessons file that is a link into `.git` or the state directory, or whose
/// directory is one, is refused where the lesson would be written (the project goes on:
/// a repository cannot turn waymark off with a link). Git keeps working and the state
/// keeps parsing throughout.
#[test]
fn lessons_are_never_appended_inside_git_nor_waymarks_state() {
    let refused_values = [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/hooks/x",
        ".GIT/config",
        ".orchestration/hook.json",
        "../outside.md",
        "/etc/x",
    ];
    for (value, from_env) in refused_values
        .iter()
        .flat_map(|v| [(*v, false), (*v, true)])
    {
        let p = deny_mode();
        let config = p.read(".git/config");
        let env: Vec<(&str, &str)> = if from_env {
            vec![("WAYMARK_AGENT_MD", value)]
        } else {
            let text = json!({"scope_enforcement": "deny", "agent_md": value}).to_string();
            p.write(".orchestration/waymark.json", &text);
            vec![]
        };
        let (d, reason) = {
            let out = p.hook_env("PreToolUse", &p.pre_write("src/main.rs"), &env);
            let h = &out["hookSpecificOutput"];
            (
                h["permissionDecision"].clone(),
                h["permissionDecisionReason"].clone(),
            )
        };
        assert_eq!(d, "deny", "{value}: deny mode still holds: {reason}");
        assert!(
            p.read("AGENT.md").contains("Scope violation denied"),
            "{value}: the lesson goes to AGENT.md"
        );
        assert_eq!(p.read(".git/config"), config, "{value}");
        assert!(!p.path(".git/hooks/pre-commit").exists(), "{value}");
        assert!(!p.path(".git/hooks/x").exists(), "{value}");
        assert!(!p.root().parent().unwrap().join("outside.md").exists());
        git(p.root(), &["status", "--short"]);
        if p.path(".orchestration/hook.json").exists() {
            let hook = p.read(".orchestration/hook.json");
            serde_json::from_str::<Value>(&hook).expect("hook.json parses");
        }
        assert!(
            p.log().contains("agent_md"),
            "{value}: the refusal is logged"
        );
    }
}

/// Links: the lessons file itself linked into `.git` or the state, its directory linked
/// into `.git` (at two depths, or dangling there), into the state, or in a loop: no lesson
/// lands there, and deny mode still denies (a planted link does not turn waymark off).
#[test]
fn a_lessons_file_linked_into_git_or_the_state_is_refused_where_it_lands() {
    use std::os::unix::fs::symlink;
    let cases: [(&str, &str, &str); 7] = [
        ("AGENT.md", ".git/config", "AGENT.md"),
        ("AGENT.md", ".orchestration/hook.json", "AGENT.md"),
        ("lessons", ".git", "lessons/config"),
        ("docs/hooks", "../.git/hooks", "docs/hooks/pre-commit"),
        ("notes", ".orchestration", "notes/hook.json"),
        ("loop", "loop", "loop/AGENT.md"),
        ("later", ".git/not/yet", "later/AGENT.md"),
    ];
    for (link, target, agent_md) in cases {
        let p = deny_mode();
        let settings = json!({"scope_enforcement": "deny", "agent_md": agent_md});
        p.write(".orchestration/waymark.json", &settings.to_string());
        fs::create_dir_all(p.path(link).parent().unwrap()).unwrap();
        symlink(target, p.path(link)).unwrap();
        let config = p.read(".git/config");
        let (d, reason) = decision(&p, &p.pre_write("src/main.rs"));
        // The repository loses its lessons, not waymark: deny mode still holds.
        assert_eq!(d, "deny", "{link}: {reason}");
        assert_eq!(p.read(".git/config"), config, "{link}");
        assert!(!p.path(".git/hooks/pre-commit").exists(), "{link}");
        assert!(!p.path(".orchestration/hook.json").exists(), "{link}");
        assert!(
            p.log().contains("lesson not written"),
            "{link}: the refusal is logged: {}",
            p.log()
        );
        git(p.root(), &["status", "--short"]);
    }
}

/// Issue 43: a project reached through a symlink (`CLAUDE_PROJECT_DIR=/link` for `/real`)
/// is one project: a Write named by either spelling of the root is recorded under its
/// root-relative path (the step's files_touched, the trace), and deny mode judges it by its
/// scope, allowing an in-scope file and denying an out-of-scope one by either spelling.
#[test]
fn a_root_reached_through_a_link_is_the_same_project_by_either_spelling() {
    let links = tempfile::tempdir().unwrap();
    for (env_root_is_link, event_by_link) in
        [(true, false), (true, true), (false, true), (false, false)]
    {
        let p = deny_mode();
        let real = p.root().to_str().unwrap().to_string();
        let link = links
            .path()
            .join(format!("p{env_root_is_link}{event_by_link}"));
        std::os::unix::fs::symlink(p.root(), &link).unwrap();
        let link = link.to_str().unwrap().to_string();
        let env_root = if env_root_is_link { &link } else { &real };
        let env = [("CLAUDE_PROJECT_DIR", env_root.as_str())];
        let spelled = |e: Value| -> Value {
            let text = e.to_string();
            let text = if event_by_link {
                text.replace(&real, &link)
            } else {
                text
            };
            serde_json::from_str(&text).unwrap()
        };
        let case = format!("root {env_root}, event by link: {event_by_link}");
        let allowed = p.hook_env("PreToolUse", &spelled(p.pre_write("src/auth/a.ts")), &env);
        assert_eq!(allowed, Value::Null, "{case}: in scope");
        let denied = p.hook_env("PreToolUse", &spelled(p.pre_write("src/main.rs")), &env);
        let reason = denied["hookSpecificOutput"]["permissionDecisionReason"].to_string();
        assert!(
            reason.contains("not authorized to edit src/main.rs"),
            "{case}: {denied}"
        );
        let write = spelled(p.write_event("src/auth/a.ts", "export const a = 1;\n"));
        p.hook_env("PostToolUse", &write, &env);
        let hook: Value = serde_json::from_str(&p.read(".orchestration/hook.json")).unwrap();
        let files = &hook["current_step"]["files_touched"];
        assert_eq!(files, &json!(["src/auth/a.ts"]), "{case}");
        let records = p.records_of("mutation");
        assert_eq!(records.len(), 1, "{case}");
        assert_eq!(records[0]["files"][0]["path"], "src/auth/a.ts", "{case}");
    }
}
