//! Rewind safety (docs/rewind.md, "What a rewind will not do"): a rewind never destroys
//! what its undo cannot bring back, checks its whole plan before it touches a file, never
//! writes inside `.git` nor outside the project whatever a snapshot or a journal says, and
//! rewinds file names that are not UTF-8.

mod util;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::Stdio;

use util::Project;

/// A project with a commit, an untracked file and a task.
fn project() -> Project {
    let p = Project::new();
    p.write("src/lib.rs", "pub fn one() {}\n");
    p.write(".gitignore", "target/\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "base"]);
    p.write("notes.txt", "the work\n");
    p.run(&["task", "start", "--id", "T-1"], "");
    p
}

/// `waymark checkpoint <desc>`: its id.
fn checkpoint(p: &Project, description: &str) -> String {
    let out = p.run(&["checkpoint", description], "");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}");
    said.split_whitespace().nth(2).unwrap().to_string()
}

/// `waymark rewind <args…>`: whether it succeeded, stdout, stderr.
fn rewind(p: &Project, args: &[&str]) -> (bool, String, String) {
    let out = p.run(&[&["rewind"], args].concat(), "");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// The undo checkpoint a successful rewind printed.
fn undo_of(said: &str) -> String {
    said.lines()
        .find_map(|l| l.strip_prefix("Undo with `waymark rewind "))
        .and_then(|l| l.strip_suffix("`."))
        .unwrap_or_else(|| panic!("{said}"))
        .to_string()
}

fn journal(p: &Project) -> PathBuf {
    p.path(".orchestration/rewind.json")
}

#[test]
fn a_file_ignored_since_the_checkpoint_is_brought_back_by_the_undo() {
    // Ignored by the project's .gitignore (which the rewind puts back too), or by
    // .git/info/exclude (which it does not: the file stays ignored throughout).
    for ignores in [".gitignore", ".git/info/exclude"] {
        let p = project();
        p.write("config.local", "as at the checkpoint\n");
        p.write("out/report.txt", "a report\n");
        let id = checkpoint(&p, "base");
        // Since then: it became ignored and was rewritten.
        let before = std::fs::read_to_string(p.path(ignores)).unwrap_or_default();
        let mut after = format!("{before}config.local\n");
        p.write("config.local", "work done since, ignored\n");
        // And a directory became an ignored file: a rewind puts the directory back.
        // (Where `out` stays ignored, the undo would find `out/report.txt` ignored in the
        // directory it must make a file again, and refuse, naming it.)
        if ignores == ".gitignore" {
            after.push_str("out\n");
            std::fs::remove_dir_all(p.path("out")).unwrap();
            p.write("out", "an ignored file where a directory was\n");
        }
        p.write(ignores, &after);

        let (ok, said, err) = rewind(&p, &[&id]);
        assert!(ok, "{ignores}: {said}{err}");
        assert!(
            said.contains("restore  config.local  (ignored: the undo keeps it)"),
            "{said}"
        );
        assert_eq!(p.read("config.local"), "as at the checkpoint\n");
        assert_eq!(p.read("out/report.txt"), "a report\n");

        let (ok, said, err) = rewind(&p, &[&undo_of(&said)]);
        assert!(ok, "{ignores}: {said}{err}");
        let config = p.read("config.local");
        assert_eq!(config, "work done since, ignored\n", "{ignores}");
        assert_eq!(p.read(ignores), after);
        if ignores == ".gitignore" {
            assert_eq!(p.read("out"), "an ignored file where a directory was\n");
        }
    }
}

#[test]
fn what_a_rewind_cannot_remove_is_refused_before_any_file_is_touched() {
    let p = project();
    p.write("data", "a file at the checkpoint\n");
    let id = checkpoint(&p, "base");
    p.write("notes.txt", "changed since\n");
    // A file became a directory holding an ignored file, and a repository was made.
    std::fs::remove_file(p.path("data")).unwrap();
    p.write("data/cache.bin", "ignored\n");
    p.write(".git/info/exclude", "*.bin\n");
    p.write("vendor/tool/main.c", "int main;\n");
    let tool = p.path("vendor/tool");
    util::git(&tool, &["init", "-q"]);
    util::git(&tool, &["add", "main.c"]);
    let identity = ["-c", "user.name=t", "-c", "user.email=t@e"];
    util::git(&tool, &[&identity[..], &["commit", "-qm", "tool"]].concat());

    for args in [vec![id.as_str()], vec![id.as_str(), "--dry-run"]] {
        let (ok, said, err) = rewind(&p, &args);
        assert!(!ok, "{said}");
        for named in ["data/cache.bin", "move", "rewind again"] {
            assert!(err.contains(named), "{named} in {err}");
        }

        assert_eq!(
            p.read("notes.txt"),
            "changed since\n",
            "nothing was touched"
        );
        assert!(!journal(&p).exists());
    }
    assert!(p.path("vendor/tool/.git").is_dir());
    // Once they are moved, it rewinds.
    std::fs::remove_dir_all(p.path("data")).unwrap();
    let (ok, said, err) = rewind(&p, &[&id]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("data"), "a file at the checkpoint\n");
    assert_eq!(p.read("notes.txt"), "the work\n");
    // A repository of its own is in no snapshot (issue 50): it is left as it is, and
    // said so, never removed.
    assert!(
        p.path("vendor/tool/.git").is_dir(),
        "the repository is left"
    );
    assert!(
        said.contains("left as it is: vendor/tool (a git repository of its own"),
        "{said}"
    );
}

#[test]
fn a_rewind_cut_short_whose_plan_became_impossible_can_be_given_up() {
    let p = project();
    p.write("a.txt", "a at the checkpoint\n");
    p.write("z.txt", "z at the checkpoint\n");
    let id = checkpoint(&p, "base");
    p.write("a.txt", "a since\n");
    std::fs::remove_file(p.path("z.txt")).unwrap();
    // Killed after a.txt, before z.txt.
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "rewind.file@2:kill")
        .args(["rewind", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed by the fault");
    // Meanwhile something that a rewind must not remove came where z.txt goes.
    p.write("z.txt/keep.bin", "ignored\n");
    p.write(".git/info/exclude", "*.bin\n");

    let (ok, _, err) = rewind(&p, &["--continue"]);
    assert!(!ok);
    for named in ["z.txt/keep.bin", "waymark rewind --abort"] {
        assert!(err.contains(named), "{named} in {err}");
    }
    assert_eq!(p.read("z.txt/keep.bin"), "ignored\n");
    let (ok, abort_said, err) = rewind(&p, &["--abort"]);
    assert!(ok, "{err}");
    assert!(!journal(&p).exists());
    let (ok, said, _) = rewind(&p, &["--continue"]);
    assert!(ok && said.contains("No rewind to finish"), "{said}");
    // Rewinding works again: the undo puts the files back as they were before.
    let (ok, said, err) = rewind(&p, &[&undo_of(&abort_said)]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("a.txt"), "a since\n");
}

/// Makes a commit whose tree holds `entries` (raw tree entries: `mode name`, a blob
/// holding `content`), and a snapshot ref for it: a forged checkpoint `ckpt-<name>`.
fn forge(p: &Project, name: &str, entries: &[(&str, &[u8])], content: &str) -> String {
    let blob = git_with_input(p, &["hash-object", "-w", "--stdin"], content.as_bytes());
    let blob = hex_bytes(blob.trim());
    let mut tree = Vec::new();
    for (mode, path) in entries {
        tree.extend_from_slice(format!("{mode} ").as_bytes());
        tree.extend_from_slice(path);
        tree.push(0);
        tree.extend_from_slice(&blob);
    }
    let args = ["hash-object", "--literally", "-t", "tree", "-w", "--stdin"];
    let tree = git_with_input(p, &args, &tree);
    let commit = p.git(&["commit-tree", tree.trim(), "-m", "forged"]);
    let id = format!("ckpt-{name}");
    let name = format!("refs/waymark/checkpoints/T-1/{id}");
    p.git(&["update-ref", &name, commit.trim()]);
    id
}

/// A tree whose only entry is the directory `dir` holding `inner`: a path with a
/// component git would never check out.
fn nested(p: &Project, dir: &[u8], inner: &[u8], content: &str) -> Vec<u8> {
    let blob = git_with_input(p, &["hash-object", "-w", "--stdin"], content.as_bytes());
    let mut tree = b"100755 ".to_vec();
    tree.extend_from_slice(inner);
    tree.push(0);
    tree.extend_from_slice(&hex_bytes(blob.trim()));
    let args = ["hash-object", "--literally", "-t", "tree", "-w", "--stdin"];
    let sub = git_with_input(p, &args, &tree);
    let mut top = b"40000 ".to_vec();
    top.extend_from_slice(dir);
    top.push(0);
    top.extend_from_slice(&hex_bytes(sub.trim()));
    let top = git_with_input(p, &args, &top);
    top.trim().as_bytes().to_vec()
}

/// A tree holding `evil`, a symlink to `target`, and beside it a directory `evil` holding
/// `escaped.txt`: a file to be written through the link (no tree git makes holds both).
fn through_link(p: &Project, target: &std::path::Path) -> Vec<u8> {
    let hash = |bytes: &[u8]| {
        let id = git_with_input(p, &["hash-object", "-w", "--stdin"], bytes);
        hex_bytes(id.trim())
    };
    let args = ["hash-object", "--literally", "-t", "tree", "-w", "--stdin"];
    let inner = [&b"100644 escaped.txt\0"[..], &hash(b"out\n")].concat();
    let sub = git_with_input(p, &args, &inner);
    let link = hash(target.as_os_str().as_bytes());
    let top = [
        &b"120000 evil\0"[..],
        &link,
        b"40000 evil\0",
        &hex_bytes(sub.trim()),
    ]
    .concat();
    git_with_input(p, &args, &top).trim().as_bytes().to_vec()
}

fn forge_tree(p: &Project, name: &str, tree: &[u8]) -> String {
    let tree = String::from_utf8(tree.to_vec()).unwrap();
    let commit = p.git(&["commit-tree", &tree, "-m", "forged"]);
    let id = format!("ckpt-{name}");
    let name = format!("refs/waymark/checkpoints/T-1/{id}");
    p.git(&["update-ref", &name, commit.trim()]);
    id
}

fn git_with_input(p: &Project, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(p.root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_forged_snapshot_or_journal_never_writes_inside_git_nor_outside_the_project() {
    let p = project();
    checkpoint(&p, "base");
    let head = p.read(".git/HEAD");
    let outside = tempfile::tempdir().unwrap();
    let forged = [
        (
            forge_tree(&p, "link", &through_link(&p, outside.path())),
            "`evil/escaped.txt` under `evil`",
        ),
        (
            forge_tree(
                &p,
                "git",
                &nested(&p, b".git", b"HEAD", "ref: refs/heads/evil\n"),
            ),
            ".git/HEAD",
        ),
        (
            forge_tree(&p, "case", &nested(&p, b".GIT", b"config", "[core]\n")),
            ".GIT/config",
        ),
        (
            forge_tree(&p, "up", &nested(&p, b"..", b"escaped.txt", "out\n")),
            "../escaped.txt",
        ),
        (
            forge(&p, "abs", &[("100644", b"/tmp/waymark-abs.txt")], "abs\n"),
            "/tmp/waymark-abs.txt",
        ),
    ];
    for (id, bad) in &forged {
        let (ok, said, err) = rewind(&p, &[id]);
        assert!(!ok, "{id}: {said}");
        assert!(err.contains(bad), "{bad} named in {err}");
        assert_eq!(p.read(".git/HEAD"), head);
        assert!(!journal(&p).exists());
    }
    assert!(!p.root().parent().unwrap().join("escaped.txt").exists());
    assert!(!outside.path().join("escaped.txt").exists());
    assert!(
        p.path("evil").symlink_metadata().is_err(),
        "no link was made"
    );
    assert!(!std::path::Path::new("/tmp/waymark-abs.txt").exists());

    // A journal written by hand is checked as it is read back.
    let blob = git_with_input(&p, &["hash-object", "-w", "--stdin"], b"#!/bin/sh\nevil\n");
    let journal_text = serde_json::json!({
        "task_id": "T-1", "checkpoint_id": "ckpt-x", "snapshot": "refs/x", "undo": null,
        "started_at": "2026-01-01T00:00:00Z",
        "changes": [{"path": ".git/hooks/post-commit", "status": "D", "mode": "100755",
                     "blob": blob.trim()}]
    });
    std::fs::write(journal(&p), journal_text.to_string()).unwrap();
    let (ok, _, err) = rewind(&p, &["--continue"]);
    assert!(!ok);
    assert!(err.contains(".git/hooks/post-commit"), "{err}");
    assert!(!p.path(".git/hooks/post-commit").exists());
}

#[test]
fn a_file_name_that_is_not_utf8_is_rewound_byte_for_byte() {
    let p = project();
    let name = OsStr::from_bytes(b"caf\xe9.txt");
    let made = OsStr::from_bytes(b"new\xff.txt");
    std::fs::write(p.root().join(name), "at the checkpoint\n").unwrap();
    let id = checkpoint(&p, "base");
    std::fs::write(p.root().join(name), "since\n").unwrap();
    std::fs::write(p.root().join(made), "made since\n").unwrap();
    p.write("notes.txt", "changed\n");

    // Cut short after the first file: the journal carries the names as they are.
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "rewind.file@1:kill")
        .args(["rewind", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed by the fault");
    let kept = std::fs::read_to_string(journal(&p)).unwrap();
    assert!(kept.contains(r#""hex": "636166e92e747874""#), "{kept}");
    let (ok, said, err) = rewind(&p, &["--continue"]);
    assert!(ok, "{said}{err}");

    let read = |n: &OsStr| std::fs::read_to_string(p.root().join(n)).ok();
    assert_eq!(read(name).as_deref(), Some("at the checkpoint\n"));
    assert_eq!(read(made), None, "the file made since is deleted");
    assert_eq!(p.read("notes.txt"), "the work\n");
    let names: Vec<Vec<u8>> = std::fs::read_dir(p.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.windows(3).any(|w| w == "\u{FFFD}".as_bytes())),
        "no stray file: {names:?}"
    );

    // `--files` takes the name as its bytes, and rewinds only it.
    std::fs::write(p.root().join(name), "again\n").unwrap();
    p.write("notes.txt", "changed again\n");
    let out = p
        .waymark()
        .args(["rewind", &id, "--files"])
        .arg(name)
        .output();
    assert!(out.unwrap().status.success());
    assert_eq!(read(name).as_deref(), Some("at the checkpoint\n"));
    assert_eq!(p.read("notes.txt"), "changed again\n");
}

/// Writes a journal of one change (`path`, `status`, mode 100755, a blob holding a hook
/// script) as a rewind cut short would have left it: what a repository can plant.
fn plant_journal(p: &Project, path: &str, status: &str) {
    let blob = git_with_input(
        p,
        &["hash-object", "-w", "--stdin"],
        b"#!/bin/sh\necho pwned\n",
    );
    let text = serde_json::json!({
        "task_id": "T-1", "checkpoint_id": "ckpt-x", "snapshot": "refs/x", "undo": null,
        "started_at": "2026-01-01T00:00:00Z",
        "changes": [{"path": path, "status": status, "mode": "100755", "blob": blob.trim()}]
    });
    std::fs::write(journal(p), text.to_string()).unwrap();
}

/// Every file under `dir` (recursively) with its bytes and whether it is executable: what
/// must not change.
fn listing(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let meta = e.path().symlink_metadata().unwrap();
        if meta.is_dir() {
            out.extend(listing(&e.path()));
        } else if meta.is_file() {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            out.push((e.path(), bytes, meta.permissions().mode()));
        }
    }
    out.sort();
    out
}

/// Issue 43: a journal's path is judged where it really lands, not by its text. A
/// committed link (`hk` → `.git/hooks`, at any depth, into `.git`, into `.orchestration`,
/// out of the project, dangling into `.git` or out, in a loop) never carries a restored or deleted file there,
/// and `waymark rewind --continue` refuses, naming where it would have landed; the text
/// forms (`..`, absolute, `.git` in any case) are refused as the journal is read.
#[test]
fn a_planted_journal_never_writes_through_a_committed_link_into_git_or_the_state() {
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(p.path("a/b")).unwrap();
    let links: [(&str, PathBuf); 8] = [
        ("hk", PathBuf::from(".git/hooks")),
        ("a/hk", PathBuf::from("../.git/hooks")),
        ("a/b/g", PathBuf::from("../../.git")),
        ("o", PathBuf::from(".orchestration")),
        ("a/b/out", outside.path().to_path_buf()),
        ("gone", PathBuf::from(".git/not/yet")),
        ("gone_out", outside.path().join("not/yet")),
        ("loop", PathBuf::from("loop")),
    ];
    for (link, target) in &links {
        std::os::unix::fs::symlink(target, p.path(link)).unwrap();
    }
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "links"]);
    // What git runs and reads (objects are written by the test's `hash-object`).
    let git_state = || {
        let mut files = listing(&p.path(".git/hooks"));
        files.extend(listing(&p.path(".git/info")));
        (files, p.read(".git/config"), p.read(".git/HEAD"))
    };
    let (git_before, state_before) = (git_state(), p.read(".orchestration/hook.json"));
    let outside_before = listing(outside.path());
    let mut planted: Vec<(String, &str)> = Vec::new();
    for (link, _) in &links {
        for file in ["post-checkout", "hooks/pre-commit", "config", "hook.json"] {
            for status in ["D", "M", "A"] {
                planted.push((format!("{link}/{file}"), status));
            }
        }
    }
    for (path, status) in &planted {
        plant_journal(&p, path, status);
        let (ok, said, err) = rewind(&p, &["--continue"]);
        assert!(!ok, "{path} ({status}) was rewound: {said}");
        assert!(err.contains(path.as_str()), "{path} named in {err}");
        assert!(
            journal(&p).exists(),
            "{path}: the journal stays for --abort"
        );
    }
    assert_eq!(git_state(), git_before, "nothing git runs or reads changed");
    assert!(!p.path(".git/hooks/post-checkout").exists());
    assert_eq!(p.read(".orchestration/hook.json"), state_before);
    assert_eq!(listing(outside.path()), outside_before);
    // The next `git checkout` runs no hook of the journal's; the journal is given up.
    let (ok, _, err) = rewind(&p, &["--abort"]);
    assert!(ok, "{err}");
    p.git(&["checkout", "-q", "-b", "after"]);
}

/// The text forms of the same family are refused as the journal is read back, naming the
/// entry: `..`, an absolute path, `.git` in any case at any depth, the state directory.
#[test]
fn a_planted_journal_naming_git_or_the_state_by_its_text_is_refused_as_it_is_read() {
    let p = project();
    let config = p.read(".git/config");
    for (path, why) in [
        ("hk/../.git/hooks/post-checkout", "`..`"),
        ("/tmp/waymark-planted/post-checkout", "absolute"),
        (".GIT/hooks/post-checkout", "`.git`"),
        (".Git/config", "`.git`"),
        ("a/.gIt/hooks/x", "`.git`"),
        (".orchestration/hook.json", "state directory"),
    ] {
        plant_journal(&p, path, "D");
        let (ok, said, err) = rewind(&p, &["--continue"]);
        assert!(!ok, "{path}: {said}");
        assert!(err.contains(path) && err.contains(why), "{path}: {err}");
    }
    assert_eq!(p.read(".git/config"), config);
    assert!(!p.path(".git/hooks/post-checkout").exists());
    assert!(!std::path::Path::new("/tmp/waymark-planted").exists());
}

/// A link to a directory of the project is followed as it always was: the file is
/// restored where the link leads.
#[test]
fn a_journal_path_through_a_link_inside_the_project_is_restored_where_it_leads() {
    let p = project();
    std::os::unix::fs::symlink("src", p.path("s")).unwrap();
    plant_journal(&p, "s/tool.sh", "D");
    let (ok, said, err) = rewind(&p, &["--continue"]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("src/tool.sh"), "#!/bin/sh\necho pwned\n");
}

/// Issue 50: a file asked for under a directory replaced since by a link out of the
/// project is restored inside it (the link removed, the directory put back), with nothing
/// touched where the link led; the undo puts the link back. A file standing where the
/// directory was goes the same way.
#[test]
fn a_file_under_a_directory_replaced_by_a_link_is_restored_inside_the_project() {
    let p = project();
    p.write("src/deep/b.rs", "pub fn b() {}\n");
    p.write("src/a.rs", "pub fn a() {}\n");
    let id = checkpoint(&p, "base");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("b.rs"), "not the project's\n").unwrap();
    std::fs::remove_dir_all(p.path("src/deep")).unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path("src/deep")).unwrap();
    p.write("src/a.rs", "changed since\n");

    let (ok, said, err) = rewind(&p, &[&id, "--files", "src/deep/b.rs"]);
    assert!(ok, "{said}{err}");
    assert!(said.contains("delete   src/deep\n"), "{said}");
    assert!(
        !said.contains("ignored"),
        "the link is no ignored file: {said}"
    );
    let deep = p.path("src/deep").symlink_metadata().unwrap();
    assert!(deep.is_dir(), "the directory is back, the link gone");
    assert_eq!(p.read("src/deep/b.rs"), "pub fn b() {}\n");
    assert_eq!(p.read("src/a.rs"), "changed since\n", "only what was asked");
    let there = std::fs::read_to_string(outside.path().join("b.rs")).unwrap();
    assert_eq!(there, "not the project's\n", "nothing outside is touched");

    let (ok, said, err) = rewind(&p, &[&undo_of(&said)]);
    assert!(ok, "{said}{err}");
    assert_eq!(
        std::fs::read_link(p.path("src/deep")).unwrap(),
        outside.path()
    );

    // A file where the directory was.
    std::fs::remove_file(p.path("src/deep")).unwrap();
    p.write("src/deep", "a file now\n");
    let (ok, said, err) = rewind(&p, &[&id, "--files", "src/deep/b.rs"]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("src/deep/b.rs"), "pub fn b() {}\n");
    let (ok, said, err) = rewind(&p, &[&undo_of(&said)]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("src/deep"), "a file now\n");

    // The whole project, through a link whose target holds a file of the same name.
    std::fs::remove_file(p.path("src/deep")).unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path("src/deep")).unwrap();
    let (ok, said, err) = rewind(&p, &[&id]);
    assert!(ok, "{said}{err}");
    assert_eq!(p.read("src/deep/b.rs"), "pub fn b() {}\n");
    assert_eq!(p.read("src/a.rs"), "pub fn a() {}\n");
    let there = std::fs::read_to_string(outside.path().join("b.rs")).unwrap();
    assert_eq!(there, "not the project's\n", "nothing outside is touched");
}
