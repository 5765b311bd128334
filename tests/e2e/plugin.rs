//! Scenario 6: the plugin as Claude Code sees it. The manifests pass
//! `claude plugin validate --strict` (and a broken copy does not), and a session whose
//! waymark binary is missing or broken still finishes normally: waymark never costs the
//! user a session.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Cli, Sandbox, Version, cli, copy_dir, git, repo_root, wait_for};

fn validate(sb: &Sandbox, target: &Path) -> Output {
    cli(sb.version)
        .unwrap()
        .command()
        .args(["plugin", "validate", "--strict"])
        .arg(target)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .expect("run claude plugin validate")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

on_each_version!(
    plugin_manifests_pass_strict_validation,
    session_finishes_without_a_waymark_binary,
    session_finishes_with_a_failing_waymark_binary,
    session_finishes_with_a_non_executable_waymark_binary,
    marketplace_install_copies_a_small_plugin_whose_hooks_fire,
    installed_from_github_with_no_binary_it_fetches_that_repositorys_release,
    registered_twice_each_event_is_handled_once,
);

fn plugin_manifests_pass_strict_validation(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("validate", Binary::Built, version);
    let repo = repo_root();

    // The checkout as `/plugin marketplace add` sees it: the marketplace manifest (and the
    // plugin.json it points at).
    let out = validate(&sb, &repo);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("marketplace.json"), "{}", text(&out));

    // The plugin itself, hooks/hooks.json included (the marketplace check does not open
    // it; naming plugin.json does, and only speaks of it when it is wrong).
    let out = validate(&sb, &repo.join("plugin/.claude-plugin/plugin.json"));
    assert!(out.status.success(), "{}", text(&out));

    // The same check does fail on a broken copy, so the passes above mean something.
    let copy = &sb.plugin;
    let hooks = copy.join("hooks/hooks.json");
    let good_hooks = fs::read_to_string(&hooks).unwrap();
    fs::write(&hooks, good_hooks.replace("\"command\",", "\"kommand\",")).unwrap();
    let out = validate(&sb, &copy.join(".claude-plugin/plugin.json"));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("hooks.SessionStart"), "{}", text(&out));
    fs::write(&hooks, good_hooks).unwrap();

    let manifest = copy.join(".claude-plugin/plugin.json");
    let mut m: Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
    m["colour"] = json!("blue");
    fs::write(&manifest, m.to_string()).unwrap();
    let out = validate(&sb, copy);
    assert!(
        !out.status.success(),
        "--strict let an unknown field pass: {}",
        text(&out)
    );
    assert!(text(&out).contains("colour"), "{}", text(&out));
}

/// A session with a Write, a Bash call and a final text, under a broken waymark.
fn session_survives(binary: Binary, version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("broken", binary, version);
    let tag = format!("{binary:?}");
    let mut script = sb.plan(&["Do it"]);
    script.extend([
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("out.txt"), "content": format!("E2E-S6 {tag}\n")}),
        ),
        Turn::tool(
            "Bash",
            json!({"command": "echo E2E-S6-BASH-$((40+2))", "description": "echo"}),
        ),
        Turn::text("E2E-S6-FINAL"),
    ]);
    let api = FakeApi::start(script);
    let run = sb.run_ok(&api, &["-p", "E2E-S6 work without waymark"], "E2E-S6-FINAL");
    let why = sb.diagnose(&api);
    assert_eq!(sb.read("out.txt"), format!("E2E-S6 {tag}\n"));
    let main = api.main_requests();
    let bash = api
        .tool_result_text(main.last().unwrap())
        .unwrap_or_default();
    assert!(bash.contains("E2E-S6-BASH-42"), "{bash}\n{why}");
    // The hooks were registered and ran (the launcher, then nothing or a failing binary)…
    let debug = fs::read_to_string(&run.debug_file).unwrap_or_default();
    // 2.1.332 counts its built-in plugins too: "Registered 13 hooks from 4 plugins".
    let registered = format!("Registered {} hooks from ", registered_events());
    assert!(debug.contains(&registered), "{registered}\n{why}");
    assert!(
        debug.contains("Hook PostToolUse:Write (PostToolUse)"),
        "{why}"
    );
    // …and wrote nothing.
    assert!(
        !sb.project.join(".orchestration/hook.json").exists(),
        "{why}"
    );
}

/// How many events the plugin's hooks.json registers.
fn registered_events() -> usize {
    let hooks: Value = serde_json::from_str(
        &fs::read_to_string(repo_root().join("plugin/hooks/hooks.json")).unwrap(),
    )
    .unwrap();
    hooks["hooks"].as_object().unwrap().len()
}

fn session_finishes_without_a_waymark_binary(version: Version) {
    session_survives(Binary::Missing, version);
}

fn session_finishes_with_a_failing_waymark_binary(version: Version) {
    session_survives(Binary::Failing, version);
}

fn session_finishes_with_a_non_executable_waymark_binary(version: Version) {
    session_survives(Binary::NotExecutable, version);
}

/// Every file under `dir`, with its size.
fn tree_size(dir: &Path) -> (u64, Vec<String>) {
    let mut total = 0;
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let m = fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.len();
                names.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    names.sort();
    (total, names)
}

/// `claude <args>` with the scratch HOME, asserting success; its stdout and stderr.
fn claude(cli: &Cli, sb: &Sandbox, args: &[&str]) -> String {
    let out = cli
        .command()
        .args(args)
        .current_dir(&sb.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run claude");
    assert!(out.status.success(), "claude {args:?}: {}", text(&out));
    text(&out)
}

/// A shell script at `path` that appends `note` (shell words) to `ran` on each run and
/// then runs the waymark cargo built with its arguments.
fn noting_wrapper(path: &Path, ran: &Path, note: &str) {
    fs::write(
        path,
        format!(
            "#!/bin/sh\necho {note} >> '{}'\nexec '{}' \"$@\"\n",
            ran.display(),
            env!("CARGO_BIN_EXE_waymark")
        ),
    )
    .unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// `dir` before the PATH of this process.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The install the README describes, with the real CLI: the checkout as a marketplace,
/// `plugin install` (which copies only `plugin/`, not the checkout), a session whose hooks
/// run the `waymark` that `cargo install` put on PATH (not the checkout's old build), then
/// `plugin uninstall`.
fn marketplace_install_copies_a_small_plugin_whose_hooks_fire(version: Version) {
    let Some(cli) = cli(version) else {
        return;
    };
    let sb = Sandbox::new("marketplace", Binary::Missing, version);
    install_from_a_fresh_clone(cli, &sb);

    // The binary as `cargo install` leaves it: `waymark` on PATH. A wrapper notes each run,
    // so the test proves the hooks ran this one and not a build they found elsewhere.
    let installed = sb.root.join("cargo-bin");
    fs::create_dir_all(&installed).unwrap();
    let ran = sb.root.join("path-waymark-ran");
    noting_wrapper(&installed.join("waymark"), &ran, "\"$@\"");
    let path = path_with(&installed);
    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("installed.txt"), "content": "hi\n"}),
        ),
        Turn::text("E2E-MKT done"),
    ]);
    let (mut c, _) = sb.command_with(cli, &api, &["-p", "E2E-MKT go"], None);
    let status = c
        .env("PATH", &path)
        .env_remove("WAYMARK_NO_PATH")
        .status()
        .expect("run claude");
    assert!(status.success(), "{}", sb.diagnose(&api));
    let runs = fs::read_to_string(&ran).unwrap_or_default();
    assert!(
        runs.contains("hook SessionStart") && runs.contains("hook PostToolUse"),
        "the hooks did not run the waymark on PATH: {runs:?}\n{}",
        sb.diagnose(&api)
    );
    assert!(
        !sb.root.join("checkout-build-ran").exists(),
        "the checkout's old build ran instead of the installed waymark"
    );
    let hook = sb.hook_json();
    assert_eq!(
        hook["current_step"]["files_touched"],
        json!(["installed.txt"]),
        "{}",
        sb.diagnose(&api)
    );
    uninstalled_its_hooks_fire_no_more(cli, &sb, &path);
}

/// A user without Rust: `claude plugin marketplace add <owner>/<repo>` (GitHub, served
/// offline: git's `insteadOf` sends the clone to a local bare repository), `plugin
/// install`, a session with no waymark anywhere. The session finishes, and its first event
/// started the download of that repository's release for this plugin's version (the
/// manifest names no repository): the launcher found where the plugin came from in the
/// layout Claude Code installs into. The download itself fails here (no network; every
/// request goes to a closed port) and is proven against a real server in
/// tests/install/fetch.rs.
fn installed_from_github_with_no_binary_it_fetches_that_repositorys_release(version: Version) {
    let Some(cli) = cli(version) else {
        return;
    };
    let sb = Sandbox::new("github", Binary::Missing, version);
    on_github(&sb, "someone/waymark");
    claude(
        cli,
        &sb,
        &["plugin", "marketplace", "add", "someone/waymark"],
    );
    let said = claude(cli, &sb, &["plugin", "install", "waymark@waymark"]);
    assert!(said.contains("waymark@waymark"), "{said}");

    let api = FakeApi::start(vec![Turn::text("E2E-GH done")]);
    let (mut c, _) = sb.command_with(cli, &api, &["-p", "E2E-GH go"], None);
    let status = c
        .env("https_proxy", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .status()
        .expect("run claude");
    assert!(status.success(), "{}", sb.diagnose(&api));
    let manifest = repo_root().join("plugin/.claude-plugin/plugin.json");
    let manifest: Value = serde_json::from_str(&fs::read_to_string(manifest).unwrap()).unwrap();
    let wanted = format!(
        "fetching https://github.com/someone/waymark/releases/download/v{}/waymark-",
        manifest["version"].as_str().unwrap()
    );
    let log = fetch_log(&sb, "could not download");
    assert!(log.contains(&wanted), "{wanted}: {log}");
}

/// GitHub as `git clone https://github.com/<repo>.git` sees it in the sandbox, offline: a
/// bare repository holding the checkout's marketplace and plugin, where the sandbox
/// HOME's git config (`insteadOf`) sends every github.com URL.
fn on_github(sb: &Sandbox, repo: &str) {
    let checkout = repo_root();
    let stage = sb.root.join("stage");
    copy_dir(
        &checkout.join(".claude-plugin"),
        &stage.join(".claude-plugin"),
    );
    copy_dir(&checkout.join("plugin"), &stage.join("plugin"));
    fs::copy(checkout.join("Cargo.toml"), stage.join("Cargo.toml")).unwrap();
    let github = sb.root.join("github");
    let bare = github.join(format!("{repo}.git"));
    git(&stage, &["init", "-q", "-b", "main"]);
    git(&stage, &["add", "-A"]);
    let who = ["-c", "user.name=t", "-c", "user.email=t@e.invalid"];
    git(&stage, &[&who[..], &["commit", "-qm", "v"]].concat());
    git(
        &stage,
        &["clone", "-q", "--bare", ".", bare.to_str().unwrap()],
    );
    let rewrite = format!(
        "[url \"file://{}/\"]\n\tinsteadOf = https://github.com/\n",
        github.display()
    );
    fs::write(sb.home.join(".gitconfig"), rewrite).unwrap();
}

/// The plugin's fetch log once it holds `line` (30 s at most).
fn fetch_log(sb: &Sandbox, line: &str) -> String {
    let data = sb.home.join(".claude/plugins/data");
    let log = || {
        let dirs = fs::read_dir(&data).into_iter().flatten().flatten();
        dirs.map(|d| fs::read_to_string(d.path().join("waymark-fetch.log")).unwrap_or_default())
            .collect::<String>()
    };
    let found = wait_for(std::time::Duration::from_secs(30), || log().contains(line));
    assert!(found, "no {line:?}: {}", log());
    log()
}

/// Adds the checkout as a marketplace, as a user's fresh clone holds it, and installs the
/// plugin; checks that the install copied a small plugin, hooks included, no build.
fn install_from_a_fresh_clone(cli: &Cli, sb: &Sandbox) {
    // The checkout as a user's clone holds it, with an old release build in it. Both
    // pinned CLIs run a local marketplace's plugin from its source directory, the
    // checkout: the launcher must still run the waymark the user installed, not this.
    let repo = repo_root();
    let clone = sb.root.join("clone");
    copy_dir(&repo.join(".claude-plugin"), &clone.join(".claude-plugin"));
    copy_dir(&repo.join("plugin"), &clone.join("plugin"));
    fs::copy(repo.join("Cargo.toml"), clone.join("Cargo.toml")).unwrap();
    let build = clone.join("target/x86_64-unknown-linux-gnu/release");
    fs::create_dir_all(&build).unwrap();
    noting_wrapper(
        &build.join("waymark"),
        &sb.root.join("checkout-build-ran"),
        "\"$@\"",
    );
    claude(
        cli,
        sb,
        &["plugin", "marketplace", "add", clone.to_str().unwrap()],
    );
    let said = claude(cli, sb, &["plugin", "install", "waymark@waymark"]);
    assert!(said.contains("waymark@waymark"), "{said}");

    let cache = sb.home.join(".claude/plugins/cache");
    let (bytes, files) = tree_size(&cache);
    assert!(
        bytes < 1024 * 1024,
        "plugin install copied {bytes} bytes: {files:?}"
    );
    assert!(
        files.iter().any(|f| f.ends_with("hooks/waymark-hook"))
            && !files
                .iter()
                .any(|f| f.contains("target/") || f.contains(".e2e") || f.contains("src/")),
        "{files:?}"
    );
}

/// Uninstalls the plugin; checks that a session after it (with `path`) gets no hook
/// context and leaves the trace as it was.
fn uninstalled_its_hooks_fire_no_more(cli: &Cli, sb: &Sandbox, path: &str) {
    claude(cli, sb, &["plugin", "uninstall", "waymark@waymark"]);
    let before = sb.read(".orchestration/agent_trace.jsonl");
    let api = FakeApi::start(vec![Turn::text("E2E-MKT after")]);
    let (mut c, _) = sb.command_with(cli, &api, &["-p", "E2E-MKT again"], None);
    assert!(
        c.env("PATH", path)
            .env_remove("WAYMARK_NO_PATH")
            .status()
            .unwrap()
            .success()
    );
    assert!(
        api.main_requests()[0]
            .find_text("SessionStart hook additional context")
            .is_none(),
        "hooks still fire after uninstall"
    );
    assert_eq!(sb.read(".orchestration/agent_trace.jsonl"), before);
}

/// `waymark init` and the plugin at once: Claude Code runs both registrations for every
/// event, and waymark handles each event once (one trace record for one Write).
fn registered_twice_each_event_is_handled_once(version: Version) {
    let Some(cli) = cli(version) else {
        return;
    };
    let sb = Sandbox::new("twice", Binary::Built, version);
    let (ran, path) = one_wrapper_for_both_registrations(&sb);
    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("twice.txt"), "content": "once\n"}),
        ),
        Turn::text("E2E-TWICE done"),
    ]);
    let (mut c, _) = sb.command(cli, &api, &["-p", "E2E-TWICE go"]);
    let status = c.env("PATH", &path).status().unwrap();
    let why = sb.diagnose(&api);
    assert!(status.success(), "{why}");
    let runs = fs::read_to_string(&ran).unwrap_or_default();
    assert!(
        runs.contains("hook PostToolUse plugin=yes\n")
            && runs.contains("hook PostToolUse plugin=\n"),
        "both registrations ran: {runs}\n{why}"
    );
    let writes: Vec<Value> = sb
        .trace()
        .into_iter()
        .filter(|r| r["metadata"]["waymark"]["tool_name"] == "Write")
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}\n{why}");
    assert_eq!(
        sb.hook_json()["current_step"]["files_touched"],
        json!(["twice.txt"]),
        "{why}"
    );
}

/// Registers waymark twice through one wrapper that notes each run and whether the plugin
/// ran it: as the plugin's binary, and with `waymark init` (checked to succeed). Returns
/// the wrapper's notes file and the PATH that finds it.
pub(crate) fn one_wrapper_for_both_registrations(sb: &Sandbox) -> (PathBuf, String) {
    let bin = sb.root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let ran = sb.root.join("runs");
    let wrapper = bin.join("waymark");
    noting_wrapper(&wrapper, &ran, "\"$* plugin=${CLAUDE_PLUGIN_ROOT:+yes}\"");
    let plugin_bin = sb.plugin.join("bin/waymark.bin");
    fs::remove_file(&plugin_bin).unwrap();
    std::os::unix::fs::symlink(&wrapper, &plugin_bin).unwrap();
    // `init` registers `waymark hook …` (the waymark on PATH) when it runs as that
    // waymark: first as a link to the binary, then the wrapper takes its place.
    let linked = bin.join("waymark-linked");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_waymark"), &linked).unwrap();
    let path = path_with(&bin);
    fs::rename(&wrapper, bin.join("waymark.wrapper")).unwrap();
    fs::rename(&linked, &wrapper).unwrap();
    let init = std::process::Command::new(&wrapper)
        .arg("init")
        .current_dir(&sb.project)
        .env("PATH", &path)
        .env("HOME", &sb.home)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", text(&init));
    fs::rename(bin.join("waymark.wrapper"), &wrapper).unwrap();
    (ran, path)
}
