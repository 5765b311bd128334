//! Installing waymark as a tool: the command `init` registers survives a rebuild, `doctor`
//! runs what is registered and writes nothing, commands outside a project say so, and
//! what of `.orchestration/` belongs in git merges across branches (docs/git.md).

#[path = "install/fetch.rs"]
mod fetch;
#[path = "install/first_steps.rs"]
mod first_steps;
#[path = "install/launcher.rs"]
mod launcher;
#[path = "install/release.rs"]
mod release;
#[path = "install/trust.rs"]
mod trust;
mod util;

use std::path::Path;

use serde_json::{Value, json};
use util::{Project, git};

/// A directory on a PATH holding `waymark`: a link to the binary under test.
fn path_with_waymark() -> (tempfile::TempDir, String) {
    let bin = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("waymark");
    std::os::unix::fs::symlink(&exe, bin.path().join("waymark")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (bin, path)
}

/// A project where `waymark init` ran with waymark on PATH (kept, with that PATH, for the
/// test's later commands).
fn initialized() -> (Project, tempfile::TempDir, String) {
    let p = Project::new();
    let (bin, path) = init(&p);
    (p, bin, path)
}

/// `waymark init` run in `p` with waymark on PATH, asserting it succeeds; that PATH.
fn init(p: &Project) -> (tempfile::TempDir, String) {
    let (bin, path) = path_with_waymark();
    p.waymark()
        .env("PATH", &path)
        .arg("init")
        .assert()
        .success();
    (bin, path)
}

fn settings(p: &Project) -> Value {
    serde_json::from_str(&p.read(".claude/settings.json")).unwrap()
}

fn stop_command(p: &Project) -> String {
    settings(p)["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn init_registers_the_waymark_on_path_and_repoints_a_stale_entry() {
    let p = Project::new();
    let (_bin, path) = path_with_waymark();
    let out = p.waymark().env("PATH", &path).arg("init").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stop_command(&p), "waymark hook Stop");
    assert!(
        out.stderr.is_empty(),
        "no warning when waymark is on PATH: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A build since removed: the entry is pointed at what runs now, not added beside it.
    let stale = p
        .read(".claude/settings.json")
        .replace("\"waymark hook", "\"'/gone/target/debug/waymark' hook");
    p.write(".claude/settings.json", &stale);
    let run_doctor = || {
        p.waymark()
            .env("PATH", &path)
            .arg("doctor")
            .output()
            .unwrap()
    };
    let doctor = run_doctor();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{report}");
    assert!(
        report.contains("FAIL hooks in")
            && report.contains("'/gone/target/debug/waymark' hook")
            && report.contains("run `waymark init` again"),
        "{report}"
    );
    let out = p.waymark().env("PATH", &path).arg("init").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("Pointed "), "{said}");
    assert_eq!(stop_command(&p), "waymark hook Stop");
    assert_eq!(settings(&p)["hooks"]["Stop"].as_array().unwrap().len(), 1);
    let doctor = run_doctor();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{report}");
    assert!(
        report.contains("ok   hooks registered in") && report.contains("waymark on PATH"),
        "{report}"
    );
}

#[test]
fn init_without_waymark_on_path_writes_this_binary_and_says_why_that_is_fragile() {
    let p = Project::new();
    let out = p
        .waymark()
        .env("PATH", "/usr/bin:/bin")
        .arg("init")
        .output()
        .unwrap();
    assert!(out.status.success());
    let exe = assert_cmd::cargo::cargo_bin("waymark")
        .canonicalize()
        .unwrap();
    assert_eq!(stop_command(&p), format!("'{}' hook Stop", exe.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("waymark is not on PATH") && err.contains("cargo install --path ."),
        "{err}"
    );
    // The hooks it wrote do run.
    let doctor = p
        .waymark()
        .env("PATH", "/usr/bin:/bin")
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("ok   hooks registered in"), "{report}");
    assert!(report.contains("warn waymark is not on PATH"), "{report}");
}

#[test]
fn remove_keeps_the_users_formatting_and_leaves_no_empty_file() {
    let p = Project::new();
    let mine = "{\n\t\"model\": \"opus\",\n\t\"env\": {\n\t\t\"A\": \"1\"\n\t}\n}\n";
    p.write(".claude/settings.json", mine);
    let (_bin, path) = init(&p);
    assert!(p.read(".claude/settings.json").contains("\n\t\"hooks\": {"));
    p.waymark()
        .env("PATH", &path)
        .args(["init", "--remove"])
        .assert()
        .success();
    assert_eq!(p.read(".claude/settings.json"), mine);

    // --user into a HOME with no settings: removing leaves no `{}` behind.
    let user = p.config.path().join(".claude/settings.json");
    p.waymark()
        .env("PATH", &path)
        .args(["init", "--user"])
        .assert()
        .success();
    assert!(user.exists());
    p.waymark()
        .env("PATH", &path)
        .args(["init", "--user", "--remove"])
        .assert()
        .success();
    assert!(!user.exists(), "the file init made is gone with its hooks");
}

/// `waymark` run from `dir` with no project marked anywhere above it.
fn outside(dir: &Path, home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("waymark").unwrap();
    c.current_dir(dir)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home);
    c
}

#[test]
fn outside_a_project_commands_say_so_and_read_only_ones_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["status"][..],
        &["task", "start", "--id", "x"],
        &["receipts"],
        &["trace"],
    ] {
        let out = outside(dir.path(), home.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not in a project"), "{args:?}: {err}");
    }
    let out = outside(dir.path(), home.path())
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("warn not in a project"), "{report}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing was created"
    );

    // In a git repository that has no .orchestration yet, read-only commands make none.
    let p = Project::new();
    for args in [&["doctor"][..], &["status"], &["trace"], &["receipts"]] {
        p.waymark().args(args).output().unwrap();
        assert!(
            !p.path(".orchestration").exists(),
            "{args:?} made .orchestration"
        );
    }
    let report = p.waymark().arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&report.stdout);
    assert!(report.contains("will be made on first use"), "{report}");
}

/// A validation that failed: one lesson in AGENT.md.
fn failed_validation(p: &Project, command: &str) -> String {
    let mut e: Value = serde_json::from_str(&p.fixture("PostToolUseFailure-Bash.json")).unwrap();
    e["tool_input"]["command"] = json!(command);
    e["error"] = json!("Exit code 101\ntest result: FAILED. 0 passed; 1 failed");
    e.to_string()
}

#[test]
fn git_takes_what_a_team_shares_and_two_branches_merge_without_conflict() {
    let p = Project::new();
    p.waymark().arg("init").assert().success();
    p.write("README.md", "# demo\n");
    p.hook("SessionStart", &p.fixture("SessionStart-startup.json"));
    p.hook("PostToolUse", &p.write_event("a.txt", "base\n"));
    git(p.root(), &["add", "-A"]);
    let staged = git(p.root(), &["diff", "--cached", "--name-only"]);
    for kept in [
        ".orchestration/agent_trace.jsonl",
        ".orchestration/.gitignore",
        ".orchestration/.gitattributes",
        ".orchestration/active_intents.yaml",
        ".gitattributes",
        "a.txt",
    ] {
        assert!(staged.lines().any(|l| l == kept), "{kept} in git: {staged}");
    }
    for line in staged.lines() {
        assert!(
            !(line.ends_with(".lock")
                || line.contains("waymark.log")
                || line.contains("hook.json")
                || line.ends_with("HOOK.md")
                || line.contains("/tasks/")),
            "{line} is this machine's, not the team's: {staged}"
        );
    }
    git(p.root(), &["commit", "-qm", "base"]);

    // Two branches, each with its own records and its own lesson.
    let work_on = |branch: &str, file: &str| {
        p.hook("PostToolUse", &p.write_event(file, &format!("{branch}\n")));
        let lesson = failed_validation(&p, &format!("cargo test {branch}"));
        p.hook("PostToolUseFailure", &lesson);
        git(p.root(), &["add", "-A"]);
        git(p.root(), &["commit", "-qm", branch]);
    };
    git(p.root(), &["checkout", "-qb", "other"]);
    work_on("other", "b.txt");
    git(p.root(), &["checkout", "-q", "main"]);
    work_on("main", "c.txt");
    let lines_before = p.read(".orchestration/agent_trace.jsonl").lines().count();

    git(p.root(), &["merge", "-q", "--no-edit", "other"]);
    let agent = p.read("AGENT.md");
    assert!(
        agent.contains("cargo test other") && agent.contains("cargo test main"),
        "both lessons kept: {agent}"
    );
    assert!(!agent.contains("<<<<<<<"), "{agent}");
    let trace = p.read(".orchestration/agent_trace.jsonl");
    assert!(
        trace.lines().count() > lines_before,
        "both branches' records"
    );
    assert!(!trace.contains("<<<<<<<"));
    let out = p.waymark().args(["trace", "--verify"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("chain intact"), "{said}");
    assert!(said.contains("joins another branch's records"), "{said}");
    // The next record chains onto the merged ledger.
    p.hook("PostToolUse", &p.write_event("d.txt", "after\n"));
    p.waymark().args(["trace", "--verify"]).assert().success();
}

#[test]
fn small_things_say_what_they_mean() {
    let p = Project::new();
    // The default validation commands are a list, shown as one.
    let out = p.run(&["config", "show", "--json"], "");
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let commands = &shown["values"]["validation_commands"]["value"];
    assert!(
        commands.as_array().is_some_and(|a| a.len() > 3),
        "{commands}"
    );
    // A duration without a unit is refused, naming the units.
    let out = p.run(&["config", "set", "stale_threshold", "30"], "");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has no unit") && err.contains("\"30m\""),
        "{err}"
    );
    // Counts agree with their nouns.
    let line = p
        .fixture("SessionStart-startup.json")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let out = p.run(&["replay", "-"], format!("{line}\nnot json\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("replayed 1 event into") && err.contains("1 bad line skipped"),
        "{err}"
    );
    // `recover` with no crash says so before the brief.
    p.run(&["task", "start", "--id", "T"], "");
    let out = p.run(&["recover"], "");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("No crash detected"), "{said}");
    // Every flag says what it does.
    for args in [
        &["init", "--help"][..],
        &["status", "--help"],
        &["config", "show", "--help"],
    ] {
        let out = p.run(args, "");
        let help = String::from_utf8_lossy(&out.stdout);
        for flag in ["--remove", "--json", "--user"] {
            if let Some(line) = help.lines().find(|l| l.contains(flag)) {
                assert!(
                    line.trim().len() > flag.len() + 10,
                    "{args:?}: {flag} has no help: {line:?}"
                );
            }
        }
    }
}

/// The plugin registers exactly the events waymark handles, as `waymark init` does, each
/// through the launcher (docs/events.md says why the others are not).
#[test]
fn the_plugin_and_init_register_the_same_events() {
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/hooks/hooks.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut registered: Vec<&str> = hooks["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    registered.sort();
    let mut handled = waymark::claude::event::EVENTS.to_vec();
    handled.sort();
    assert_eq!(registered, handled);
    for event in handled {
        let command = hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(
            command,
            format!(
                "set -- {event}; command . \"${{CLAUDE_PLUGIN_ROOT}}/hooks/waymark-hook\" || exit 0"
            )
        );
    }
    for event in ["WorktreeCreate", "WorktreeRemove"] {
        assert!(
            hooks["hooks"].get(event).is_none(),
            "{event} replaces git's own"
        );
    }
}

/// The plugin installed and `waymark init` run too: doctor names both registrations and
/// says which to remove (each event is handled once anyway, docs/events.md).
#[test]
fn doctor_names_a_second_registration_and_which_to_remove() {
    let (p, _bin, path) = initialized();
    // What `/plugin install waymark@waymark` writes in the user's settings.
    p.write(
        "home/.claude/settings.json",
        r#"{"enabledPlugins": {"waymark@waymark": true}}"#,
    );
    let out = p
        .waymark()
        .env("PATH", &path)
        .env("HOME", p.path("home"))
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("ok   the plugin waymark@waymark is enabled in")
            && report.contains("warn waymark is registered 2 times: the plugin (enabled in")
            && report.contains("`waymark init` in ")
            && report.contains("keep the plugin and run `waymark init --remove` (for "),
        "{report}"
    );
    // Both registrations run the session's start: the second copy is met, and from then
    // on every event records itself. Once the user removes one, doctor says how to stop
    // that.
    for _ in 0..2 {
        p.hook("SessionStart", &p.fixture("SessionStart-startup.json"));
    }
    p.waymark().arg("init").arg("--remove").assert().success();
    let out = p
        .waymark()
        .env("PATH", &path)
        .env("HOME", p.path("home"))
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!report.contains("registered 2 times"), "{report}");
    assert!(
        report.contains("warn waymark once saw each event run twice (settings)")
            && report.contains("delete .orchestration/registrations.seen"),
        "{report}"
    );
    std::fs::remove_file(p.path(".orchestration/registrations.seen")).unwrap();
    let out = p
        .waymark()
        .env("HOME", p.path("home"))
        .arg("doctor")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("run twice"));
}

/// A session started with `claude --plugin-dir <checkout>` plus `waymark init`: no
/// settings file names the plugin, yet doctor run by the agent (through the plugin's
/// `bin/waymark`, which sets `CLAUDE_PLUGIN_ROOT`) names both registrations.
#[test]
fn doctor_names_a_plugin_loaded_with_plugin_dir_beside_waymark_init() {
    let (p, _bin, path) = initialized();
    let plugin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin");
    let doctor = |root: Option<&std::path::Path>| {
        let mut c = p.waymark();
        c.env("PATH", &path)
            .env("HOME", p.path("home"))
            .arg("doctor");
        match root {
            Some(r) => c.env("CLAUDE_PLUGIN_ROOT", r),
            None => c.env_remove("CLAUDE_PLUGIN_ROOT"),
        };
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    };
    let report = doctor(Some(&plugin));
    assert!(
        report.contains(&format!(
            "warn waymark is registered 2 times: the plugin (loaded from {})",
            plugin.display()
        )) && report.contains("keep the plugin and run `waymark init --remove` (for "),
        "{report}"
    );
    assert!(!doctor(None).contains("registered 2 times"));
}

/// Issue 43: `init`'s own files are judged where they land. A committed `.claude` linked
/// into `.git` (or into `.orchestration`), or a `.gitattributes` linked to `.git/config`:
/// init refuses, naming it, and writes nothing there.
#[test]
fn init_writes_nothing_through_a_link_into_git_or_the_state() {
    for (link, target, named) in [
        (".claude", ".git", ".claude/settings.json"),
        (".claude", ".git/hooks", ".claude/settings.json"),
        (".claude", ".orchestration", ".claude/settings.json"),
        (".gitattributes", ".git/config", ".gitattributes"),
        (
            ".gitattributes",
            ".orchestration/hook.json",
            ".gitattributes",
        ),
    ] {
        let p = Project::new();
        std::fs::create_dir_all(p.path(".orchestration")).unwrap();
        std::os::unix::fs::symlink(target, p.path(link)).unwrap();
        let config = p.read(".git/config");
        let out = p.waymark().arg("init").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{link} → {target}: {err}");
        assert!(err.contains(named), "{link} → {target}: {err}");
        assert_eq!(p.read(".git/config"), config, "{link} → {target}");
        assert!(!p.path(".git/settings.json").exists());
        assert!(!p.path(".git/hooks/settings.json").exists());
        assert!(!p.path(".orchestration/settings.json").exists());
        assert!(!p.path(".orchestration/hook.json").exists());
        p.git(&["status", "--short"]);
    }
}

/// A repository may carry `.orchestration/active_intents.yaml` as a link to where no file
/// is yet (`.git/hooks/pre-commit`): `waymark init` writes nothing through it.
#[test]
fn init_writes_no_intents_file_through_a_planted_link() {
    let p = Project::new();
    std::fs::create_dir_all(p.path(".orchestration")).unwrap();
    std::fs::create_dir_all(p.path(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(
        "../.git/hooks/pre-commit",
        p.path(".orchestration/active_intents.yaml"),
    )
    .unwrap();
    let _on_path = init(&p);
    assert!(!p.path(".git/hooks/pre-commit").exists());
    let link = std::fs::symlink_metadata(p.path(".orchestration/active_intents.yaml")).unwrap();
    assert!(link.file_type().is_symlink());
}
