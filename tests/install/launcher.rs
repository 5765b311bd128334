//! Which binary the plugin runs, with real files: a checkout holding the plugin and a
//! stale release build, and the waymark the user installed on PATH. Claude Code runs a
//! local marketplace's plugin from the checkout itself and tells `--plugin-dir`
//! development by the plugin's data directory (`waymark-inline`); both releases were
//! checked to do so.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::Project;

/// A checkout as a user's clone holds it after `cargo build --release` long ago: the
/// plugin, Cargo.toml, and a build that notes each run and says it is an old version.
pub(crate) struct Checkout {
    pub(crate) dir: tempfile::TempDir,
    /// An installed waymark (a wrapper noting each run, then the binary under test).
    pub(crate) installed: PathBuf,
    /// What each fake program ran: one line each.
    notes: PathBuf,
}

impl Checkout {
    pub(crate) fn new() -> Checkout {
        let dir = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for rel in [
            "plugin/hooks",
            "plugin/bin",
            "plugin/.claude-plugin",
            ".claude-plugin",
        ] {
            fs::create_dir_all(dir.path().join(rel)).unwrap();
            for f in fs::read_dir(repo.join(rel)).unwrap().flatten() {
                fs::copy(f.path(), dir.path().join(rel).join(f.file_name())).unwrap();
            }
        }
        fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"waymark\"\n",
        )
        .unwrap();
        let notes = dir.path().join("notes");
        let stale = dir
            .path()
            .join("target/x86_64-unknown-linux-gnu/release/waymark");
        script(
            &stale,
            &format!(
                "[ \"$1\" = --version ] && {{ echo 'waymark 0.0.1'; exit 0; }}\necho \"checkout build $*\" >> '{}'",
                notes.display()
            ),
        );
        let installed = dir.path().join("cargo-bin/waymark");
        script(
            &installed,
            &format!(
                "echo \"installed $*\" >> '{}'\nexec '{}' \"$@\"",
                notes.display(),
                assert_cmd::cargo::cargo_bin("waymark").display()
            ),
        );
        Checkout {
            dir,
            installed,
            notes,
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A PATH with the installed waymark (or without: `installed` false).
    pub(crate) fn search_path(&self, installed: bool) -> String {
        let mut dirs = vec![self.path("plugin/bin").display().to_string()];
        if installed {
            dirs.push(self.path("cargo-bin").display().to_string());
        }
        dirs.push("/usr/bin:/bin".into());
        dirs.join(":")
    }

    /// The plugin's launcher as Claude Code runs it, for an install from the marketplace
    /// `waymark` (`data` = `waymark-waymark`) or `--plugin-dir` (`waymark-inline`).
    pub(crate) fn launcher(&self, p: &Project, data: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.path("plugin/hooks/waymark-hook"));
        c.args(args);
        self.as_plugin(c, p, data)
    }

    /// The event's command as hooks.json registers it, run the way Claude Code runs a
    /// hook: `sh -c "<command>"`.
    pub(crate) fn registered(&self, p: &Project, data: &str, event: &str) -> Command {
        let hooks: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(self.path("plugin/hooks/hooks.json")).unwrap(),
        )
        .unwrap();
        let command = hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        let mut c = Command::new("sh");
        c.args(["-c", command]);
        self.as_plugin(c, p, data)
    }

    /// `c` with the environment Claude Code gives a plugin's hook.
    pub(crate) fn as_plugin(&self, mut c: Command, p: &Project, data: &str) -> Command {
        c.current_dir(p.root())
            .env("CLAUDE_PROJECT_DIR", p.root())
            .env("HOME", p.config.path())
            .env("XDG_CONFIG_HOME", p.config.path())
            .env("CLAUDE_PLUGIN_ROOT", self.path("plugin"))
            .env("CLAUDE_PLUGIN_DATA", p.config.path().join(data))
            .env_remove("WAYMARK_DEV")
            .env_remove("WAYMARK_NO_PATH")
            .env_remove("WAYMARK_NO_BUILD")
            .env_remove("WAYMARK_NO_FETCH")
            .env_remove("WAYMARK_FETCH_RETRY")
            .env_remove("WAYMARK_RELEASE_URL");
        c
    }

    pub(crate) fn notes(&self) -> String {
        fs::read_to_string(&self.notes).unwrap_or_default()
    }
}

/// An executable shell script at `path`.
pub(crate) fn script(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

pub(crate) fn which(c: &mut Command) -> (String, String) {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8(out.stdout).unwrap();
    let mut lines = said.lines().map(str::to_string);
    (lines.next().unwrap(), lines.next().unwrap())
}

#[test]
fn an_installed_plugin_runs_the_installed_waymark_not_the_checkouts_old_build() {
    let p = Project::new();
    let co = Checkout::new();
    let path = co.search_path(true);
    let event = p.write_event("a.txt", "a\n");

    let out = co
        .registered(&p, "waymark-waymark", "PostToolUse")
        .env("PATH", &path)
        .output_with(&event);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(co.notes(), "installed hook PostToolUse\n");
    assert!(p.path(".orchestration/hook.json").exists(), "the hook ran");
    let (bin, how) = which(
        co.launcher(&p, "waymark-waymark", &["--which"])
            .env("PATH", &path),
    );
    assert_eq!(Path::new(&bin), co.installed.canonicalize().unwrap());
    assert_eq!(how, "waymark on PATH");

    // The agent's `waymark` (the plugin's bin/, first on its PATH) runs the same one.
    let shim = p
        .command(co.path("plugin/bin/waymark"))
        .env("PATH", &path)
        .env_remove("CLAUDE_PLUGIN_DATA")
        .env_remove("WAYMARK_DEV")
        .env_remove("WAYMARK_NO_PATH")
        .arg("status")
        .output()
        .unwrap();
    assert!(shim.status.success(), "{shim:?}");
    assert!(co.notes().ends_with("installed status\n"), "{}", co.notes());

    // Developing with `--plugin-dir`, the checkout's build is what is being tried out.
    let (bin, how) = which(
        co.launcher(&p, "waymark-inline", &["--which"])
            .env("PATH", &path),
    );
    assert!(
        bin.ends_with("target/x86_64-unknown-linux-gnu/release/waymark"),
        "{bin}"
    );
    assert!(how.contains("development"), "{how}");
    let (_, how) = which(
        co.launcher(&p, "waymark-waymark", &["--which"])
            .env("PATH", &path)
            .env("WAYMARK_DEV", "1"),
    );
    assert!(how.contains("development"), "{how}");
    let (_, how) = which(
        co.launcher(&p, "waymark-inline", &["--which"])
            .env("PATH", &path)
            .env("WAYMARK_DEV", "0"),
    );
    assert_eq!(how, "waymark on PATH");
}

#[test]
fn with_nothing_installed_an_install_runs_the_build_and_never_starts_one() {
    let p = Project::new();
    let co = Checkout::new();
    let path = co.search_path(false);
    // With no waymark installed, the checkout's build still serves, and says so.
    let (bin, how) = which(
        co.launcher(&p, "waymark-waymark", &["--which"])
            .env("PATH", &path),
    );
    assert!(bin.ends_with("release/waymark"), "{bin}");
    assert!(how.contains("no waymark installed"), "{how}");

    // `cargo clean`: the next event skips, says how to install, and builds nothing.
    fs::remove_dir_all(co.path("target")).unwrap();
    let cargo = co.path("fake-cargo/cargo");
    script(
        &cargo,
        &format!("echo \"cargo $*\" >> '{}'", co.notes.display()),
    );
    let path = format!("{}:{path}", co.path("fake-cargo").display());
    let out = co
        .registered(&p, "waymark-waymark", "Stop")
        .env("PATH", &path)
        .output_with("{}");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not installed") && err.contains("cargo install"),
        "{err}"
    );
    let out = co
        .launcher(&p, "waymark-waymark", &["--which"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!co.path("target").exists(), "no build started");

    // While developing, it does build (once, in the background).
    let out = co
        .registered(&p, "waymark-inline", "Stop")
        .env("PATH", &path)
        .output_with("{}");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("building the binary once"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !co.notes().contains("cargo build --release") {
        assert!(std::time::Instant::now() < deadline, "{}", co.notes());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Claude Code runs each hook as `sh -c "<command>"`; the plugin's command reads the
/// launcher into that shell (no second one; `an_installed_plugin_runs_…` runs it so), and
/// a plugin missing its launcher still lets the tool call pass: exit 0, not the 2 that
/// would block it.
#[test]
fn a_registered_command_missing_its_launcher_never_blocks() {
    let p = Project::new();
    let co = Checkout::new();
    let path = co.search_path(true);
    fs::remove_file(co.path("plugin/hooks/waymark-hook")).unwrap();
    for event in ["PreToolUse", "SessionStart"] {
        let out = co
            .registered(&p, "waymark-waymark", event)
            .env("PATH", &path)
            .output_with("{}");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("waymark-hook"));
    }
}

/// Runs a command with `input` on stdin to completion.
pub(crate) trait OutputWith {
    fn output_with(&mut self, input: &str) -> std::process::Output;
}

impl OutputWith for Command {
    fn output_with(&mut self, input: &str) -> std::process::Output {
        use std::io::Write;
        let mut child = self
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A program that does not read its input is no failure here.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        child.wait_with_output().unwrap()
    }
}

/// What `claude plugin marketplace add <checkout>` and `claude plugin install
/// waymark@waymark` leave in Claude Code's configuration (the files as 2.1.332 writes
/// them), in `home`.
fn installed_from(home: &Path, checkout: &Path) {
    let write = |rel: &str, v: serde_json::Value| {
        let f = home.join(rel);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(f, v.to_string()).unwrap();
    };
    write(
        ".claude/settings.json",
        serde_json::json!({"enabledPlugins": {"waymark@waymark": true}}),
    );
    write(
        ".claude/plugins/known_marketplaces.json",
        serde_json::json!({"waymark": {
            "source": {"source": "directory", "path": checkout},
            "installLocation": checkout}}),
    );
}

#[test]
fn doctor_prints_the_binary_the_plugins_hooks_run_and_its_version() {
    let p = Project::new();
    let co = Checkout::new();
    installed_from(p.config.path(), co.dir.path());
    // doctor run by the user: outside any plugin's hook.
    let doctor = |path: &str| {
        p.waymark()
            .env("PATH", path)
            .env_remove("CLAUDE_PLUGIN_ROOT")
            .env_remove("CLAUDE_PLUGIN_DATA")
            .env_remove("WAYMARK_DEV")
            .env_remove("WAYMARK_NO_PATH")
            .env_remove("CLAUDE_CONFIG_DIR")
            .arg("doctor")
            .output()
            .unwrap()
    };
    let stdout = |out: std::process::Output| String::from_utf8(out.stdout).unwrap();
    let report = stdout(doctor(&co.search_path(true)));
    let expected = format!(
        "ok   the plugin's hooks run {} (waymark {}; waymark on PATH)",
        co.installed.canonicalize().unwrap().display(),
        env!("CARGO_PKG_VERSION")
    );
    assert!(report.contains(&expected), "{expected}\n{report}");

    // Nothing installed: the old build runs, and doctor says it is not this version.
    let report = stdout(doctor(&co.search_path(false)));
    assert!(
        report.contains("warn the plugin's hooks run ")
            && report.contains("release/waymark (waymark 0.0.1; the checkout's release build")
            && report.contains(&format!("not this waymark {}", env!("CARGO_PKG_VERSION"))),
        "{report}"
    );

    // No binary at all: every event would be skipped, which is a failure.
    fs::remove_dir_all(co.path("target")).unwrap();
    let out = doctor(&co.search_path(false));
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("FAIL the plugin's hooks find no waymark binary"),
        "{report}"
    );
}

/// The agent's `waymark doctor`, through the plugin's bin/ on its PATH (no settings say
/// where the plugin is): the launcher it asks is the one it came through.
#[test]
fn doctor_run_by_the_agent_asks_the_plugin_it_runs_under() {
    let p = Project::new();
    let co = Checkout::new();
    let out = p
        .command(co.path("plugin/bin/waymark"))
        .env("PATH", co.search_path(true))
        .env_remove("CLAUDE_PLUGIN_ROOT")
        .env_remove("CLAUDE_PLUGIN_DATA")
        .env_remove("WAYMARK_DEV")
        .env_remove("WAYMARK_NO_PATH")
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!(
            "ok   the plugin's hooks run {} (waymark {}; waymark on PATH)",
            co.installed.canonicalize().unwrap().display(),
            env!("CARGO_PKG_VERSION")
        )),
        "{report}"
    );
}
