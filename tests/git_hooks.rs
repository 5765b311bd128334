//! `waymark git-hooks install|uninstall|status` against real git repositories: real
//! commits and pushes fire the installed wrappers, which run the real waymark binary.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as Std, Output};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// A scratch world: a config home and a place for repositories.
struct World {
    dir: TempDir,
}

impl World {
    fn new() -> World {
        let w = World {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(w.xdg()).unwrap();
        w
    }

    fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A fresh repository on `main` with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let r = self.path(name);
        fs::create_dir_all(&r).unwrap();
        self.git_ok(&r, &["init", "-q", "-b", "main"]);
        self.git_ok(&r, &["config", "user.name", "Test User"]);
        self.git_ok(&r, &["config", "user.email", "test@example.com"]);
        self.git_ok(&r, &["config", "commit.gpgsign", "false"]);
        fs::write(r.join("README"), "hello\n").unwrap();
        self.git_ok(&r, &["add", "README"]);
        self.git_ok(&r, &["commit", "-qm", "initial"]);
        r
    }

    /// git as a person runs it in a terminal: no Claude Code environment.
    fn git_cmd(&self, dir: &Path, args: &[&str]) -> Std {
        let mut c = Std::new("git");
        c.current_dir(dir)
            .args(args)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("WAYMARK_GIT_HOOK")
            .env("XDG_CONFIG_HOME", self.xdg())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        c
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Output {
        self.git_cmd(dir, args).output().unwrap()
    }

    fn git_ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git(dir, args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// waymark with its project at `project`.
    fn waymark(&self, project: &Path) -> Command {
        let mut c = Command::cargo_bin("waymark").unwrap();
        c.current_dir(project)
            .env("CLAUDE_PROJECT_DIR", project)
            .env("XDG_CONFIG_HOME", self.xdg())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("WAYMARK_GIT_HOOK");
        c
    }

    fn start_task(&self, project: &Path) {
        self.waymark(project)
            .args(["task", "start", "--step", "a"])
            .assert()
            .success();
        self.waymark(project)
            .args(["step", "start", "a"])
            .assert()
            .success();
    }

    fn install(&self, project: &Path) -> String {
        let out = self
            .waymark(project)
            .args(["git-hooks", "install"])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    }
}

/// The current task's checkpoints, from its log.
fn checkpoints(project: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(project.join(".orchestration/hook.json")) else {
        return Vec::new();
    };
    let hook: Value = serde_json::from_str(&text).unwrap();
    let task = hook["task_id"].as_str().unwrap();
    let log = project.join(format!(".orchestration/tasks/{task}/checkpoints.jsonl"));
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn with_trigger(project: &Path, trigger: &str) -> Vec<Value> {
    checkpoints(project)
        .into_iter()
        .filter(|c| c["trigger"] == trigger)
        .collect()
}

fn write_hook(path: &Path, text: &str, mode: u32) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// `$PATH` without the directories that hold a `waymark`.
fn path_without_waymark() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<_> = std::env::split_paths(&path)
        .filter(|d| !d.join("waymark").exists())
        .collect();
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn commit(w: &World, dir: &Path, file: &str, msg: &str) -> String {
    fs::write(dir.join(file), format!("{msg}\n")).unwrap();
    w.git_ok(dir, &["add", file]);
    w.git_ok(dir, &["commit", "-qm", msg]);
    w.git_ok(dir, &["rev-parse", "HEAD"])
}

#[test]
fn a_terminal_commit_is_checkpointed_in_the_running_task() {
    let w = World::new();
    let r = w.repo("r");
    let out = w.install(&r);
    assert!(out.contains(&format!("{}", r.join(".git/hooks").display())));
    assert!(out.contains("post-commit (git_commit): installed"));
    assert!(out.contains("pre-push (git_push): installed"));

    // No task yet: the hook is a silent no-op and creates nothing.
    commit(&w, &r, "a.txt", "before any task");
    assert!(!r.join(".orchestration/hook.json").exists());

    w.start_task(&r);
    let head = commit(&w, &r, "b.txt", "Add feature b");
    let cps = with_trigger(&r, "git_commit");
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["git_commit"], head.as_str());
    assert_eq!(cps[0]["git_branch"], "main");
    assert_eq!(cps[0]["step_name"], "a");
    assert_eq!(
        cps[0]["description"],
        format!("Commit {}: Add feature b", &head[..7])
    );

    w.waymark(&r)
        .args(["git-hooks", "status"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "post-commit: installed (waymark wrapper)",
        ));
}

#[test]
fn a_foreign_hook_is_chained_and_restored_byte_identical() {
    let w = World::new();
    let r = w.repo("r");
    let hooks = r.join(".git/hooks");
    let log = w.path("foreign.log");
    let (post, pre) = foreign_hooks(&hooks, &log);

    let out = w.install(&r);
    assert!(out.contains("post-commit.waymark-orig"), "{out}");
    assert!(out.contains("pre-push.waymark-orig"), "{out}");
    assert_eq!(
        fs::read_to_string(hooks.join("post-commit.waymark-orig")).unwrap(),
        post
    );

    w.start_task(&r);
    let head = commit(&w, &r, "c.txt", "chained");
    // Both ran: the foreign hook with git's (empty) arguments and stdin, waymark's part.
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        "post-commit args=0: stdin=\n"
    );
    assert_eq!(
        with_trigger(&r, "git_commit")[0]["git_commit"],
        head.as_str()
    );
    a_push_runs_both_pre_push_hooks(&w, &r, &log, &head);
    uninstall_restores_the_foreign_hooks(&w, &r, &post, &pre);
}

/// Writes someone's post-commit and pre-push hooks into `hooks`, each noting its arguments
/// and stdin in `log`, with odd bytes (no final newline) and odd modes, to see both come
/// back exactly; returns their texts.
fn foreign_hooks(hooks: &Path, log: &Path) -> (String, String) {
    let post = format!(
        "#!/bin/sh\n# someone's hook\nprintf 'post-commit args=%s:%s stdin=' \"$#\" \"$*\" >> '{}'\ncat >> '{}'\necho >> '{}'",
        log.display(),
        log.display(),
        log.display()
    );
    let pre = format!(
        "#!/bin/sh\nprintf 'pre-push args=%s|%s\\n' \"$1\" \"$2\" >> '{l}'\ncat >> '{l}'\nexit 0\n",
        l = log.display()
    );
    write_hook(&hooks.join("post-commit"), &post, 0o750);
    write_hook(&hooks.join("pre-push"), &pre, 0o700);
    (post, pre)
}

/// Pushes `r` to a new remote; checks that the foreign pre-push hook got the remote name,
/// URL and git's ref lines on stdin (in `log`), and that waymark checkpointed the push of
/// `head`.
fn a_push_runs_both_pre_push_hooks(w: &World, r: &Path, log: &Path, head: &str) {
    let bare = w.path("remote.git");
    w.git_ok(w.dir.path(), &["init", "-q", "--bare", "remote.git"]);
    w.git_ok(r, &["remote", "add", "origin", bare.to_str().unwrap()]);
    fs::write(log, "").unwrap();
    w.git_ok(r, &["push", "-q", "origin", "main"]);
    assert_eq!(
        fs::read_to_string(log).unwrap(),
        format!(
            "pre-push args=origin|{}\nrefs/heads/main {head} refs/heads/main {}\n",
            bare.display(),
            "0".repeat(40)
        )
    );
    let pushes = with_trigger(r, "git_push");
    assert_eq!(pushes.len(), 1, "{pushes:?}");
    assert_eq!(pushes[0]["git_commit"], head);
    let desc = pushes[0]["description"].as_str().unwrap();
    assert!(
        desc.starts_with("Push to origin (") && desc.ends_with("main -> main"),
        "{desc}"
    );
}

/// Uninstalls; checks that the foreign hooks `post` and `pre` are back byte for byte and
/// mode for mode, the saved copies gone, and status sees only them.
fn uninstall_restores_the_foreign_hooks(w: &World, r: &Path, post: &str, pre: &str) {
    let hooks = r.join(".git/hooks");
    w.waymark(r)
        .args(["git-hooks", "uninstall"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "post-commit: removed; the previous hook is back",
        ));
    assert_eq!(fs::read_to_string(hooks.join("post-commit")).unwrap(), post);
    assert_eq!(mode(&hooks.join("post-commit")), 0o750);
    assert_eq!(fs::read_to_string(hooks.join("pre-push")).unwrap(), pre);
    assert_eq!(mode(&hooks.join("pre-push")), 0o700);
    assert!(!hooks.join("post-commit.waymark-orig").exists());
    assert!(!hooks.join("pre-push.waymark-orig").exists());
    w.waymark(r)
        .args(["git-hooks", "status"])
        .assert()
        .success()
        .stdout(predicates::str::contains("post-commit: foreign hook only"));
}

#[test]
fn install_is_idempotent_and_uninstall_leaves_no_trace() {
    let w = World::new();
    let r = w.repo("r");
    let hooks = r.join(".git/hooks");
    let before: Vec<_> = fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    w.install(&r);
    let first = fs::read(hooks.join("post-commit")).unwrap();
    let out = w.install(&r);
    assert_eq!(
        out.matches("already installed").count(),
        3,
        "second install: {out}"
    );
    // The wrapper was not mistaken for a foreign hook and moved aside.
    assert!(!hooks.join("post-commit.waymark-orig").exists());
    assert_eq!(fs::read(hooks.join("post-commit")).unwrap(), first);

    w.start_task(&r);
    commit(&w, &r, "x.txt", "once");
    assert_eq!(with_trigger(&r, "git_commit").len(), 1);

    w.waymark(&r)
        .args(["git-hooks", "uninstall"])
        .assert()
        .success();
    let mut after: Vec<_> = fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut before = before;
    before.sort();
    after.sort();
    assert_eq!(before, after, "only git's own sample hooks remain");
    let out = w
        .waymark(&r)
        .args(["git-hooks", "status", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["hooks"][0]["state"], "absent");
    assert_eq!(v["hooks"][1]["state"], "absent");
}

#[test]
fn core_hooks_path_is_where_the_hooks_go() {
    let w = World::new();
    let r = w.repo("r");
    w.git_ok(&r, &["config", "core.hooksPath", ".githooks"]);
    let out = w.install(&r);
    assert!(
        out.contains(&format!(
            "Hooks directory: {}",
            r.join(".githooks").display()
        )),
        "{out}"
    );
    assert!(r.join(".githooks/post-commit").exists());
    assert!(!r.join(".git/hooks/post-commit").exists());
    w.start_task(&r);
    let head = commit(&w, &r, "y.txt", "through hooksPath");
    assert_eq!(
        with_trigger(&r, "git_commit")[0]["git_commit"],
        head.as_str()
    );
}

#[test]
fn a_worktree_commit_lands_in_that_worktrees_project() {
    let w = World::new();
    let r = w.repo("r");
    let wt = w.path("wt");
    w.git_ok(
        &r,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    w.start_task(&r);
    w.start_task(&wt);

    // Installing from the worktree finds the repository's shared hooks directory.
    let out = w.install(&wt);
    assert!(
        out.contains(&format!(
            "Hooks directory: {}",
            r.join(".git/hooks").display()
        )),
        "{out}"
    );

    let head = commit(&w, &wt, "w.txt", "in the worktree");
    let cps = with_trigger(&wt, "git_commit");
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["git_commit"], head.as_str());
    assert_eq!(cps[0]["git_branch"], "feature");
    assert!(with_trigger(&r, "git_commit").is_empty());

    // A commit in the main checkout, made from a shell whose CLAUDE_PROJECT_DIR names the
    // worktree (not inside this work tree), still lands in the main checkout's project.
    fs::write(r.join("m.txt"), "m\n").unwrap();
    w.git_ok(&r, &["add", "m.txt"]);
    let ok = w
        .git_cmd(&r, &["commit", "-qm", "in main"])
        .env("CLAUDE_PROJECT_DIR", &wt)
        .status()
        .unwrap();
    assert!(ok.success());
    let main_head = w.git_ok(&r, &["rev-parse", "HEAD"]);
    let cps = with_trigger(&r, "git_commit");
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["git_commit"], main_head.as_str());
    assert_eq!(with_trigger(&wt, "git_commit").len(), 1);
}

#[test]
fn a_project_in_a_subdirectory_gets_the_checkpoint() {
    let w = World::new();
    let r = w.repo("r");
    let sub = r.join("app");
    fs::create_dir_all(&sub).unwrap();
    w.install(&r);
    w.start_task(&sub);
    fs::write(sub.join("s.txt"), "s\n").unwrap();
    w.git_ok(&r, &["add", "app/s.txt"]);
    let ok = w
        .git_cmd(&sub, &["commit", "-qm", "in the app"])
        .env("CLAUDE_PROJECT_DIR", &sub)
        .status()
        .unwrap();
    assert!(ok.success());
    let head = w.git_ok(&r, &["rev-parse", "HEAD"]);
    let cps = with_trigger(&sub, "git_commit");
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["git_commit"], head.as_str());
    // Nothing landed at the repository's top.
    assert!(!r.join(".orchestration").exists());
}

#[test]
fn the_recursion_guard_stops_waymarks_part_but_not_the_chain() {
    let w = World::new();
    let r = w.repo("r");
    let hooks = r.join(".git/hooks");
    let log = w.path("foreign.log");
    write_hook(
        &hooks.join("post-commit"),
        &format!("#!/bin/sh\necho ran >> '{}'\n", log.display()),
        0o755,
    );
    w.install(&r);
    w.start_task(&r);
    fs::write(r.join("g.txt"), "g\n").unwrap();
    w.git_ok(&r, &["add", "g.txt"]);
    let ok = w
        .git_cmd(&r, &["commit", "-qm", "guarded"])
        .env("WAYMARK_GIT_HOOK", "1")
        .status()
        .unwrap();
    assert!(ok.success());
    assert!(with_trigger(&r, "git_commit").is_empty());
    assert_eq!(fs::read_to_string(&log).unwrap(), "ran\n");
}

#[test]
fn waymark_committing_from_inside_the_hook_does_not_loop() {
    // A stand-in for the waymark binary whose "checkpoint" makes a commit itself: without
    // the guard the nested post-commit would call it again, and again. It stops itself
    // after 5 calls so a broken guard fails the test instead of hanging it.
    let w = World::new();
    let r = w.repo("r");
    let calls = w.path("calls");
    let fake = w.path("fake-waymark");
    write_hook(
        &fake,
        &format!(
            "#!/bin/sh\necho \"$WAYMARK_GIT_HOOK $*\" >> '{c}'\n[ \"$(wc -l < '{c}')\" -gt 5 ] && exit 0\ngit commit -q --allow-empty -m nested\n",
            c = calls.display()
        ),
        0o755,
    );
    let hook = r.join(".git/hooks/post-commit");
    write_hook(
        &hook,
        &waymark::git::hooks::wrapper_script(waymark::git::hooks::GitHook::PostCommit, Some(&fake)),
        0o755,
    );
    w.git_ok(&r, &["commit", "-q", "--allow-empty", "-m", "outer"]);
    let text = fs::read_to_string(&calls).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("1 --root "), "{text}");
    assert!(text.contains("checkpoint --auto --trigger git_commit Commit "));
    // The outer commit and the one the stand-in made.
    assert_eq!(w.git_ok(&r, &["rev-list", "--count", "HEAD"]), "3");
}

#[test]
fn a_foreign_pre_push_decides_and_waymark_never_blocks() {
    let w = World::new();
    let r = w.repo("r");
    w.git_ok(w.dir.path(), &["init", "-q", "--bare", "remote.git"]);
    let bare = w.path("remote.git");
    w.git_ok(&r, &["remote", "add", "origin", bare.to_str().unwrap()]);
    let hooks = r.join(".git/hooks");
    write_hook(
        &hooks.join("pre-push"),
        "#!/bin/sh\ncat >/dev/null\necho 'pushing is closed today' >&2\nexit 1\n",
        0o755,
    );
    w.install(&r);
    w.start_task(&r);
    let out = w.git(&r, &["push", "-q", "origin", "main"]);
    assert!(!out.status.success(), "the foreign hook refused the push");
    assert!(String::from_utf8_lossy(&out.stderr).contains("pushing is closed today"));
    assert!(
        w.git(&bare, &["rev-parse", "--verify", "main"])
            .status
            .code()
            != Some(0)
    );
    assert!(
        with_trigger(&r, "git_push").is_empty(),
        "no push, no checkpoint"
    );

    // waymark's own part failing (a binary that errors loudly) never blocks the push.
    let broken = w.path("broken-waymark");
    write_hook(&broken, "#!/bin/sh\necho boom >&2\nexit 3\n", 0o755);
    fs::remove_file(hooks.join("pre-push.waymark-orig")).unwrap();
    write_hook(
        &hooks.join("pre-push"),
        &waymark::git::hooks::wrapper_script(waymark::git::hooks::GitHook::PrePush, Some(&broken)),
        0o755,
    );
    let out = w.git(&r, &["push", "-q", "origin", "main"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("boom"));

    // Nor does a binary that is gone, with no waymark on PATH.
    let gone = w.path("no-such-waymark");
    write_hook(
        &hooks.join("pre-push"),
        &waymark::git::hooks::wrapper_script(waymark::git::hooks::GitHook::PrePush, Some(&gone)),
        0o755,
    );
    commit(&w, &r, "z.txt", "more");
    let out = w
        .git_cmd(&r, &["push", "-q", "origin", "main"])
        .env("PATH", path_without_waymark())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_commit_seen_by_both_the_hook_and_the_bash_handler_is_one_checkpoint() {
    let w = World::new();
    let r = w.repo("r");
    w.git_ok(w.dir.path(), &["init", "-q", "--bare", "remote.git"]);
    let bare = w.path("remote.git");
    w.git_ok(&r, &["remote", "add", "origin", bare.to_str().unwrap()]);
    w.install(&r);
    w.start_task(&r);
    // The agent runs `git commit && git push` through Bash: the post-commit and pre-push
    // hooks fire inside git...
    let head = commit(&w, &r, "d.txt", "Add d");
    w.git_ok(&r, &["push", "-q", "origin", "main"]);
    assert_eq!(with_trigger(&r, "git_commit").len(), 1);
    assert_eq!(with_trigger(&r, "git_push").len(), 1);
    // ...then Claude Code reports the Bash call to waymark.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code-2.1.197/PostToolUse-Bash.json");
    let mut event: Value = serde_json::from_str(&fs::read_to_string(fixture).unwrap()).unwrap();
    event["cwd"] = Value::from(r.to_str().unwrap());
    event["tool_input"]["command"] = Value::from(
        "git add d.txt && git commit -qm \"Add d\" && git push -q origin main && git log -1 --format=%H",
    );
    event["tool_response"]["stdout"] = Value::from(head.as_str());
    w.waymark(&r)
        .args(["hook", "PostToolUse"])
        .write_stdin(event.to_string())
        .assert()
        .success();
    let cps = with_trigger(&r, "git_commit");
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["git_commit"], head.as_str());
    assert_eq!(with_trigger(&r, "git_push").len(), 1);

    // A manual repeat says so instead of adding a copy; a new commit is a new checkpoint.
    w.waymark(&r)
        .args(["checkpoint", "--trigger", "git_commit", "again"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Already checkpointed"));
    assert_eq!(with_trigger(&r, "git_commit").len(), 1);
    commit(&w, &r, "e.txt", "Add e");
    assert_eq!(with_trigger(&r, "git_commit").len(), 2);
}

#[test]
fn outside_a_repository_is_a_usage_error() {
    let w = World::new();
    let plain = w.path("plain");
    fs::create_dir_all(&plain).unwrap();
    for sub in ["install", "uninstall", "status"] {
        w.waymark(&plain)
            .args(["git-hooks", sub])
            .env("GIT_CEILING_DIRECTORIES", w.dir.path())
            .assert()
            .code(2)
            .stderr(predicates::str::contains("not inside a git repository"));
    }
}
