//! `waymark init`, `config`, `doctor`: setting waymark up and checking it.

mod util;

use serde_json::{Value, json};
use util::Project;

#[test]
fn init_adds_every_hook_keeps_everything_else_and_remove_restores() {
    let p = Project::new();
    let original = json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]},
        "model": "opus"
    });
    let text = serde_json::to_string_pretty(&original).unwrap();
    p.write(".claude/settings.json", &text);
    p.waymark().arg("init").assert().success();
    let s: Value = serde_json::from_str(&p.read(".claude/settings.json")).unwrap();
    assert_eq!(s["permissions"], original["permissions"]);
    assert_eq!(s["model"], "opus");
    let post = s["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2);
    assert_eq!(post[0], original["hooks"]["PostToolUse"][0]);
    assert!(
        post[1]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook PostToolUse")
    );
    assert_eq!(
        s["hooks"].as_object().unwrap().len(),
        waymark::claude::event::EVENTS.len()
    );
    // Key order is kept.
    let keys: Vec<_> = s.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["permissions", "hooks", "model"]);
    // Idempotent.
    let before = p.read(".claude/settings.json");
    let again = p.waymark().arg("init").output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("already there"));
    assert_eq!(p.read(".claude/settings.json"), before);
    // The skeleton.
    assert!(
        p.read(".orchestration/active_intents.yaml")
            .contains("active_intents: []")
    );
    // Remove takes out exactly what init added.
    p.waymark().args(["init", "--remove"]).assert().success();
    let back: Value = serde_json::from_str(&p.read(".claude/settings.json")).unwrap();
    assert_eq!(back, original);
}

#[test]
fn init_registered_hooks_actually_run_the_binary() {
    let p = Project::new();
    p.waymark().arg("init").assert().success();
    let s: Value = serde_json::from_str(&p.read(".claude/settings.json")).unwrap();
    let cmd = s["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{cmd} < '{}'",
            util::fixtures().join("UserPromptSubmit.json").display()
        ))
        .env("CLAUDE_PROJECT_DIR", p.root())
        .env("XDG_CONFIG_HOME", p.config.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(p.hook_json()["last_prompt"], "write hello");
}

#[test]
fn init_refuses_a_broken_settings_file_and_leaves_it() {
    let p = Project::new();
    p.write(".claude/settings.json", "{ broken");
    p.waymark()
        .arg("init")
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not valid JSON"));
    assert_eq!(p.read(".claude/settings.json"), "{ broken");
}

#[test]
fn config_show_names_origins_and_set_validates() {
    let p = Project::new();
    p.write(".orchestration/waymark.json", r#"{"max_checkpoints": 20}"#);
    let out = p
        .waymark()
        .env("WAYMARK_TRACE_WINDOW", "50")
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["values"]["max_checkpoints"]["value"], 20);
    assert_eq!(v["values"]["max_checkpoints"]["origin"]["kind"], "project");
    assert_eq!(
        v["values"]["trace_window"]["origin"]["where"],
        "WAYMARK_TRACE_WINDOW"
    );
    assert_eq!(v["values"]["stale_threshold"]["origin"]["kind"], "default");
    p.waymark()
        .args(["config", "set", "checkpoint_threshold_percent", "99"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("out of range 70–95"));
    p.waymark()
        .args(["config", "set", "retention.failed", "48h"])
        .assert()
        .success();
    let file: Value = serde_json::from_str(&p.read(".orchestration/waymark.json")).unwrap();
    assert_eq!(
        file,
        json!({"max_checkpoints": 20, "retention": {"failed": "48h"}})
    );
}

#[test]
fn doctor_passes_on_a_clean_project_and_names_bad_values() {
    let p = Project::new();
    let out = p.waymark().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("configuration valid"));
    p.write(
        ".orchestration/waymark.json",
        r#"{"auto_resume_on_start": "sometimes", "stale_threshold": "5 minutes"}"#,
    );
    let out = p.waymark().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL config: auto_resume_on_start: expected true, false or \"prompt\", got \"sometimes\""), "{text}");
    assert!(text.contains("stale_threshold"), "{text}");
    // A hook with the same bad config falls back to defaults and logs why.
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("auto_resume_on_start")
    );
    let brief =
        util::context_of(&p.hook("SessionStart", &p.fixture("SessionStart-resume.json"))).unwrap();
    assert!(brief.contains("Resume brief"));
}

#[test]
fn doctor_refuses_a_key_others_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let key = p.config.path().join("waymark/keys/master.key");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, [7u8; 32]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = p.waymark().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("is readable by others"));
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let p = Project::new();
    p.waymark().arg("frobnicate").assert().code(2);
}

#[test]
fn intent_list_without_an_intents_file_is_not_an_error() {
    let p = Project::new();
    let path = p.path(".orchestration/active_intents.yaml");
    let out = p.waymark().args(["intent", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "No intents: {} does not exist (see docs/governance.md for its format).\n",
            path.display()
        )
    );
    let v = intent_list(&p);
    assert_eq!(v, json!({"intents": [], "active": null, "chosen": null}));
    // Nothing to choose from: an error, that says why.
    p.waymark()
        .args(["intent", "use", "INT-1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "no intent INT-1: {} does not exist",
            path.display()
        )));
    assert!(!p.path(".orchestration/active_intent").exists());
}

#[test]
fn intent_use_in_a_file_without_intents_says_so() {
    let p = Project::new();
    p.write(
        ".orchestration/active_intents.yaml",
        "# none yet\nactive_intents: []\n",
    );
    let path = p.path(".orchestration/active_intents.yaml");
    let out = p
        .waymark()
        .args(["intent", "use", "INT-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "no intent INT-1: {} has no intents",
            path.display()
        )),
        "{err}"
    );
    assert!(!err.contains("there are"), "{err}");
    p.waymark()
        .args(["intent", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("No intents in"));
}

#[test]
fn intent_list_reads_the_shapes_projects_write() {
    let p = Project::new();
    p.write(
        ".orchestration/active_intents.yaml",
        "- id: 7\n  title: Billing page\n  status: In Progress\n  owned_scope: web/billing/**\n- id: 8\n  title: Dark mode\n  status: done\n",
    );
    let v = intent_list(&p);
    assert_eq!(v["active"], "7");
    assert_eq!(v["intents"][0]["name"], "Billing page");
    assert_eq!(v["intents"][0]["state"], "in_progress");
    assert_eq!(v["intents"][0]["owned_scope"], json!(["web/billing/**"]));
    assert_eq!(v["intents"][1]["state"], "completed");
    let help = p
        .waymark()
        .args(["intent", "list", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Print JSON instead of text"));
}

/// `waymark intent list --json`, asserting it succeeds.
fn intent_list(p: &Project) -> Value {
    let out = p.run(&["intent", "list", "--json"], "");
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A repository is untrusted input: its waymark.json may not choose the key that signs the
/// user's receipts (issue 32, item 2). The project's `key_file` and `key_derivation` are
/// refused with the reason, the key is the user's own, and nothing is created where the
/// project pointed; `config set` refuses them for the project and takes them with --user.
#[test]
fn a_project_cannot_choose_the_signing_key() {
    let p = Project::new();
    let planted = p.config.path().join("planted/evil.key");
    p.write(
        ".orchestration/waymark.json",
        &json!({"key_file": planted, "key_derivation": {"account": 7}, "max_checkpoints": 20})
            .to_string(),
    );
    let out = p
        .waymark()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["values"]["key_file"]["origin"]["kind"], "default", "{v}");
    assert_eq!(v["values"]["key_derivation.account"]["value"], 0, "{v}");
    assert_eq!(
        v["values"]["max_checkpoints"]["value"], 20,
        "narrowing keys still apply"
    );
    let errors = v["errors"].to_string();
    assert!(
        errors.contains("a project's waymark.json may not set it"),
        "{errors}"
    );
    p.waymark()
        .args(["validate", "--", "true"])
        .assert()
        .success();
    assert!(
        !planted.exists(),
        "a key was made where the repository said"
    );
    let receipts = p.log(&format!(
        ".orchestration/tasks/{}/receipts.jsonl",
        p.hook_json()["task_id"].as_str().unwrap()
    ));
    assert_eq!(receipts[0]["key_path"], "m/44'/236'/0'/0");
    p.waymark()
        .args(["config", "set", "key_file", "/tmp/k"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("add --user"));
    p.waymark()
        .args(["config", "set", "--user", "key_derivation.account", "3"])
        .assert()
        .success();
}

/// A project's waymark.json may tighten the repeat guard and scope enforcement, never
/// loosen them (issue 32, item 2): `off` from a repository is refused with the reason; a
/// stricter value applies; the user's own config may loosen them.
#[test]
fn a_project_may_tighten_protections_never_loosen_them() {
    let p = Project::new();
    let show = || -> Value {
        let out = p
            .waymark()
            .args(["config", "show", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    p.write(
        ".orchestration/waymark.json",
        r#"{"repeat_guard": "off", "scope_enforcement": "deny"}"#,
    );
    let v = show();
    assert_eq!(v["values"]["repeat_guard"]["value"], "ask", "{v}");
    assert_eq!(v["values"]["scope_enforcement"]["value"], "deny", "{v}");
    assert!(
        v["errors"]
            .to_string()
            .contains("may make it stricter, never looser"),
        "{v}"
    );
    p.waymark()
        .args(["config", "set", "--user", "repeat_guard", "off"])
        .assert()
        .success();
    assert_eq!(show()["values"]["repeat_guard"]["value"], "off");
}
