//! `waymark verify` and `waymark key export`, through the real binary in real git
//! repositories: commits proven by a passing receipt of their exact tree, or not; a
//! tampered receipt; and a CI-like clone that has only the exported public keys.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    /// XDG_CONFIG_HOME: where the master key is.
    config: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("project");
        let config = tmp.path().join("config");
        fs::create_dir_all(&dir).unwrap();
        let repo = Repo {
            _tmp: tmp,
            dir,
            config,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.dir, args)
    }

    fn waymark(&self) -> Command {
        waymark(&self.dir, &self.config)
    }

    fn write(&self, name: &str, text: &str) {
        fs::write(self.dir.join(name), text).unwrap();
    }

    /// `waymark validate -- sh -c 'exit CODE'`.
    fn validate(&self, code: i32) {
        let script = format!("exit {code}");
        self.waymark()
            .args(["validate", "--", "sh", "-c", &script])
            .assert()
            .code(code);
    }

    /// Commits everything git takes (`add -A`); the commit's id.
    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// The receipt log of the one task, as JSON values.
    fn receipts_log(dir: &Path) -> PathBuf {
        let tasks = dir.join(".orchestration/tasks");
        let task = fs::read_dir(&tasks).unwrap().flatten().next().unwrap();
        task.path().join("receipts.jsonl")
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Std::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn waymark(dir: &Path, config: &Path) -> Command {
    let mut c = Command::cargo_bin("waymark").unwrap();
    c.current_dir(dir)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("WAYMARK_KEY_FILE");
    c
}

fn short(commit: &str) -> &str {
    &commit[..12]
}

/// A commit whose exact tree passed a validation is proven; one edited after its passing
/// validation, and one whose validation failed, are not, and fail the range; the receipt
/// records the tree git gives the commit (waymark's own files left out).
#[test]
fn each_commit_needs_a_passing_receipt_of_its_exact_tree() {
    let repo = Repo::new();
    repo.write("a.txt", "one\n");
    let base = repo.commit("base");

    repo.write("a.txt", "two\n");
    repo.validate(0);
    let proven = repo.commit("proven");

    repo.write("a.txt", "three\n");
    repo.validate(0);
    repo.write("a.txt", "three, edited after the validation\n");
    let edited = repo.commit("edited after its validation");

    repo.write("a.txt", "four\n");
    repo.validate(1);
    let failed = repo.commit("validation failed");

    let log = fs::read_to_string(Repo::receipts_log(&repo.dir)).unwrap();
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["sig_version"], 4);
    // The tree of the files it ran on, waymark's own left out: here a.txt as committed.
    let listing = repo.git(&["ls-tree", first["tree"].as_str().unwrap()]);
    let blob = repo.git(&["rev-parse", &format!("{proven}:a.txt")]);
    assert_eq!(listing, format!("100644 blob {blob}\ta.txt"));

    let range = format!("{base}..HEAD");
    repo.waymark()
        .args(["verify", "--range", &range])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{} proven: proven by rcpt-",
            short(&proven)
        )))
        .stdout(predicate::str::contains(format!(
            "{} edited after its validation: NOT PROVEN",
            short(&edited)
        )))
        .stdout(predicate::str::contains(format!(
            "{} validation failed: NOT PROVEN",
            short(&failed)
        )))
        .stderr(predicate::str::contains("verify: FAILED"));
    repo.waymark()
        .args(["verify", "--range", &format!("{base}..{proven}")])
        .assert()
        .success()
        .stdout(predicate::str::contains("verify: OK"));
}

/// The workflow docs/receipts.md describes ("Sharing the receipts"), over several commits:
/// the receipt log committed with the work and growing at each commit, the lessons file
/// changed by a later commit. Every honest commit is proven, the older ones too once the
/// log has grown past them (a tree read through an index refused them: the log differed
/// from both the file and HEAD).
#[test]
fn the_documented_sharing_workflow_proves_every_honest_commit() {
    let (repo, base, _) = shared_proof();
    for (i, lesson) in ["", "### a lesson\n", ""].iter().enumerate() {
        repo.write("a.txt", &format!("version {i}\n"));
        if !lesson.is_empty() {
            repo.write("AGENT.md", lesson);
        }
        repo.validate(0);
        repo.commit(&format!("step {i}, with its receipt"));
    }
    // A lessons file written after the last validation, committed alone.
    repo.write("AGENT.md", "### a lesson\n### another\n");
    repo.commit("the lessons");
    repo.waymark()
        .args(["verify", "--range", &format!("{base}..HEAD")])
        .assert()
        .success()
        .stdout(predicate::str::contains("NOT PROVEN").not())
        .stdout(predicate::str::contains("verify: OK"));
}

/// No setting the repository controls takes a file out of the proof: a `waymark.json`
/// naming `src/lib.rs` its lessons file does not make an edit of it after the
/// validation proven.
#[test]
fn a_repository_cannot_name_its_code_the_lessons_file() {
    let repo = Repo::new();
    fs::create_dir_all(repo.dir.join("src")).unwrap();
    repo.write("src/lib.rs", "fn one() {}\n");
    let base = repo.commit("base");
    fs::create_dir_all(repo.dir.join(".orchestration")).unwrap();
    repo.write(
        ".orchestration/waymark.json",
        r#"{"agent_md": "src/lib.rs"}"#,
    );
    repo.write("src/lib.rs", "fn two() {}\n");
    repo.validate(0);
    repo.write("src/lib.rs", "fn two() { unsafe_code() }\n");
    let edited = repo.commit("edited after its validation");
    repo.waymark()
        .args(["verify", "--range", &format!("{base}..HEAD")])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{} edited after its validation: NOT PROVEN",
            short(&edited)
        )));
}

/// A repository whose second commit passed its validation and carries its receipt log
/// (shared as docs/receipts.md, "Proof in CI", says) and the exported public keys: the
/// repository, the base commit and the proven one.
fn shared_proof() -> (Repo, String, String) {
    let repo = Repo::new();
    repo.write("a.txt", "one\n");
    let base = repo.commit("base");
    repo.write("a.txt", "two\n");
    repo.validate(0);
    // Share the receipt logs (docs/receipts.md, "Proof in CI").
    let ignore = repo.dir.join(".orchestration/.gitignore");
    let text = fs::read_to_string(&ignore).unwrap();
    fs::write(
        &ignore,
        text.replace("tasks/\n", "tasks/*/*\n!tasks/*/receipts.jsonl\n"),
    )
    .unwrap();
    repo.waymark()
        .args(["key", "export"])
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote 1 public key to"));
    let keys: Value = serde_json::from_str(
        &fs::read_to_string(repo.dir.join(".orchestration/keys.pub.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(keys.as_object().unwrap().len(), 1);
    let proven = repo.commit("proven, with its receipt and the public keys");

    (repo, base, proven)
}

/// What CI does: the receipt logs and the exported public keys are committed, the clone
/// has no master key, and `verify --public-keys` proves the commits with the keys alone;
/// a receipt edited in the clone (its command, its tree) fails, as do keys of another
/// master.
#[test]
fn a_clone_without_the_master_key_verifies_with_the_exported_public_keys() {
    let (repo, base, proven) = shared_proof();
    let ci = repo._tmp.path().join("ci");
    git(
        repo._tmp.path(),
        &["clone", "-q", repo.dir.to_str().unwrap(), "ci"],
    );
    let no_key = repo._tmp.path().join("ci-config");
    let verify = |keys: &str| {
        let mut c = waymark(&ci, &no_key);
        c.args([
            "verify",
            "--range",
            &format!("{base}..HEAD"),
            "--public-keys",
            keys,
        ]);
        c
    };
    verify(".orchestration/keys.pub.json")
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "{} proven",
            short(&proven)
        )))
        .stdout(predicate::str::contains("1 receipt, 1 valid"));
    assert!(!no_key.exists(), "verifying made no key");
    // Without the keys file, nothing can be checked in CI.
    waymark(&ci, &no_key)
        .args(["verify", "--range", &format!("{base}..HEAD")])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("no key: not checked"));

    let log = Repo::receipts_log(&ci);
    let original = fs::read_to_string(&log).unwrap();
    for (field, value) in [
        ("command", "cargo test".to_string()),
        ("tree", "0".repeat(40)),
    ] {
        let mut r: Value = serde_json::from_str(original.trim()).unwrap();
        r[field] = Value::from(value);
        fs::write(&log, format!("{r}\n")).unwrap();
        verify(".orchestration/keys.pub.json")
            .assert()
            .code(1)
            .stdout(predicate::str::contains(
                "INVALID: signature does not match",
            ));
    }
    fs::write(&log, &original).unwrap();
    let other = Repo::new();
    other.validate(0);
    other.waymark().args(["key", "export"]).assert().success();
    let theirs = other.dir.join(".orchestration/keys.pub.json");
    verify(theirs.to_str().unwrap())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("NOT PROVEN"));
}
