//! Rewind (docs/rewind.md): every checkpoint saves the work tree as a git commit, and
//! `waymark rewind` puts the files back as they were, byte for byte and mode for mode,
//! undoably, across a crash in the middle.

mod util;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;
use util::{Project, context_of};

/// Every file of the project but git's and waymark's own: contents, mode bits, link
/// targets.
fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == ".git" || rel == ".orchestration" {
            continue;
        }
        let meta = path.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            out.insert(rel, format!("link -> {}", target.display()));
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            let mode = meta.permissions().mode() & 0o777;
            out.insert(rel, format!("{mode:o} {}", String::from_utf8_lossy(&bytes)));
        }
    }
}

/// `waymark checkpoint <desc>`: its id.
fn checkpoint(p: &Project, description: &str) -> String {
    let out = p.run(&["checkpoint", description], "");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}");
    said.split_whitespace().nth(2).unwrap().to_string()
}

/// A project with a commit, a task, and files of every kind.
fn project() -> Project {
    let p = Project::new();
    p.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    p.write("run.sh", "#!/bin/sh\necho run\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    p.write("docs/gone.md", "to be deleted\n");
    std::os::unix::fs::symlink("src/lib.rs", p.path("lib-link")).unwrap();
    p.write(".gitignore", "target/\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "base"]);
    p.write("notes.txt", "untracked, but part of the work\n");
    p.run(&["task", "start", "--id", "T-1"], "");
    p
}

/// Changes of every kind: a Write over a file, an Edit, a `sed -i` from Bash, a new file,
/// a new directory, a deleted file, a mode change, a symlink pointed elsewhere, and an
/// ignored file (which a rewind leaves alone).
fn change_everything(p: &Project) {
    let content = "pub fn one() -> u32 {\n    2\n}\npub fn two() {}\n";
    p.hook("PostToolUse", &p.write_event("src/lib.rs", content));
    let status = std::process::Command::new("sed")
        .args(["-i", "s/untracked/edited by sed/", "notes.txt"])
        .current_dir(p.root())
        .status()
        .unwrap();
    assert!(status.success());
    p.write("src/new/mod.rs", "pub mod fresh;\n");
    std::fs::remove_file(p.path("docs/gone.md")).unwrap();
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(p.path("lib-link")).unwrap();
    std::os::unix::fs::symlink("run.sh", p.path("lib-link")).unwrap();
    p.write("target/build.o", "ignored\n");
}

#[test]
fn a_checkpoint_snapshot_touches_nothing_of_git_but_a_ref() {
    let p = project();
    let index = std::fs::read(p.path(".git/index")).unwrap();
    let status = p.git(&["status", "--porcelain"]);
    let head = p.git(&["rev-parse", "HEAD"]);
    let id = checkpoint(&p, "base");
    assert_eq!(std::fs::read(p.path(".git/index")).unwrap(), index);
    assert_eq!(p.git(&["status", "--porcelain"]), status);
    assert_eq!(p.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(p.git(&["stash", "list"]), "");
    let refs = p.git(&["for-each-ref", "--format=%(refname)", "refs/waymark/"]);
    assert_eq!(refs.trim(), format!("refs/waymark/checkpoints/T-1/{id}"));
    // The snapshot holds the untracked file, not the ignored one nor waymark's own.
    p.write("target/x.o", "ignored\n");
    let tree = p.git(&["ls-tree", "-r", "--name-only", refs.trim()]);
    assert!(tree.lines().any(|l| l == "notes.txt"), "{tree}");
    assert!(
        !tree.contains("target/") && !tree.contains(".orchestration"),
        "{tree}"
    );
    // The capture names it; an unchanged tree is the same tree.
    let listed = p.run(&["checkpoints"], "");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("[snapshot "));
    let again = checkpoint(&p, "same");
    let tree_of = |id: &str| {
        p.git(&[
            "rev-parse",
            &format!("refs/waymark/checkpoints/T-1/{id}^{{tree}}"),
        ])
    };
    assert_eq!(tree_of(&id), tree_of(&again));
}

#[test]
fn rewind_restores_every_file_exactly_and_is_undone_by_rewinding_again() {
    let p = project();
    let id = checkpoint(&p, "base");
    let before = files(p.root());
    change_everything(&p);
    p.write("AGENT.md", "# lessons stay\n");
    let after = files(p.root());
    assert_ne!(before, after);
    the_diff_names_the_changes_and_a_dry_run_changes_nothing(&p, &id, &after);

    let out = p.run(&["rewind", &id], "");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}");
    let mut expected = before.clone();
    // What waymark never rewinds: the lessons, and ignored files.
    expected.insert("AGENT.md".into(), after["AGENT.md"].clone());
    expected.insert("target/build.o".into(), after["target/build.o"].clone());
    assert_eq!(files(p.root()), expected);
    assert!(
        !p.path("src/new").exists(),
        "the directory it left empty went too"
    );

    // The undo is a checkpoint of its own: rewinding to it puts the work back.
    let undo = said
        .lines()
        .find_map(|l| l.strip_prefix("Undo with `waymark rewind "))
        .and_then(|l| l.strip_suffix("`."))
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();
    let out = p.run(&["rewind", &undo], "");
    assert!(out.status.success());
    assert_eq!(files(p.root()), after);
    the_rewinds_are_recorded(&p, &id, &undo);
}

/// Checks that `waymark diff <id>` names what changed since checkpoint `id` (not AGENT.md
/// nor ignored files), and that a dry run says what it would do and leaves `after` as is.
fn the_diff_names_the_changes_and_a_dry_run_changes_nothing(
    p: &Project,
    id: &str,
    after: &BTreeMap<String, String>,
) {
    let diff = p.run(&["diff", id, "--stat"], "");
    let stat = String::from_utf8_lossy(&diff.stdout);
    for f in [
        "src/lib.rs",
        "notes.txt",
        "src/new/mod.rs",
        "docs/gone.md",
        "lib-link",
    ] {
        assert!(stat.contains(f), "{f} in {stat}");
    }
    assert!(
        !stat.contains("AGENT.md") && !stat.contains("target/"),
        "{stat}"
    );
    let dry = p.run(&["rewind", id, "--dry-run"], "");
    assert!(dry.status.success());
    assert!(String::from_utf8_lossy(&dry.stdout).contains("delete   src/new/mod.rs"));
    assert_eq!(&files(p.root()), after);
}

/// Checks that the rewind to `id` and its undo (to `undo`) are recorded: the history, the
/// pre-rewind checkpoints, the trace, HOOK.md, and the next brief.
fn the_rewinds_are_recorded(p: &Project, id: &str, undo: &str) {
    let hook = p.hook_json();
    assert!(
        hook["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["trigger"] == "rewind")
    );
    let triggers: Vec<&str> = hook["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trigger"].as_str().unwrap())
        .collect();
    assert_eq!(triggers, ["manual", "pre_rewind", "pre_rewind"]);
    let rewinds: Vec<Value> = p
        .log(".orchestration/agent_trace.jsonl")
        .into_iter()
        .filter(|r| r["metadata"]["waymark"]["kind"] == "rewind")
        .collect();
    assert_eq!(rewinds.len(), 2);
    assert_eq!(
        rewinds[0]["metadata"]["waymark"]["rewind"]["checkpoint_id"],
        id
    );
    assert!(p.read(".orchestration/HOOK.md").contains(&format!(
        "to checkpoint {undo}: the work after it is undone"
    )));
    let brief = p.hook("SessionStart", &p.fixture("SessionStart-startup.json"));
    let brief = context_of(&brief).unwrap();
    assert!(
        brief.contains("FILES REWOUND") && brief.contains(undo),
        "{brief}"
    );
}

#[test]
fn rewind_of_some_files_leaves_the_others() {
    let p = project();
    let id = checkpoint(&p, "base");
    let before = files(p.root());
    change_everything(&p);
    let after = files(p.root());
    let out = p.run(
        &["rewind", &id, "--files", "src/lib.rs", "docs/gone.md"],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let now = files(p.root());
    assert_eq!(now["src/lib.rs"], before["src/lib.rs"]);
    assert_eq!(now["docs/gone.md"], before["docs/gone.md"]);
    assert_eq!(now["notes.txt"], after["notes.txt"]);
    assert_eq!(now["src/new/mod.rs"], after["src/new/mod.rs"]);
}

#[test]
fn a_rewind_killed_midway_leaves_each_file_old_or_new_and_continue_finishes_it() {
    let p = project();
    let id = checkpoint(&p, "base");
    let before = files(p.root());
    change_everything(&p);
    let after = files(p.root());
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "rewind.file@3:kill")
        .args(["rewind", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed by the fault");
    let torn = files(p.root());
    let mut moved = 0;
    for (path, now) in &torn {
        let old = after.get(path);
        let new = before.get(path);
        assert!(
            Some(now) == old || Some(now) == new || path.starts_with("target/"),
            "{path} is neither as it was nor as the checkpoint had it: {now}"
        );
        moved += usize::from(Some(now) != old);
    }
    assert!(moved > 0 && torn != before, "it was stopped midway");
    assert!(p.path(".orchestration/rewind.json").exists());

    // Anything else is refused until the rewind is finished.
    let out = p.run(&["rewind", &id], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("waymark rewind --continue"));
    let out = p.run(&["rewind", "--continue"], "");
    assert!(out.status.success(), "{out:?}");
    let mut expected = before.clone();
    expected.insert("target/build.o".into(), after["target/build.o"].clone());
    assert_eq!(files(p.root()), expected);
    assert!(!p.path(".orchestration/rewind.json").exists());
    let out = p.run(&["rewind", "--continue"], "");
    assert!(String::from_utf8_lossy(&out.stdout).contains("No rewind to finish"));
}

#[test]
fn rewind_refuses_mid_merge_and_outside_git_and_unknown_checkpoints() {
    let p = project();
    let id = checkpoint(&p, "base");
    p.write("src/lib.rs", "changed\n");
    p.write(".git/MERGE_HEAD", &p.git(&["rev-parse", "HEAD"]));
    let out = p.run(&["rewind", &id], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a merge is in progress"));
    assert_eq!(p.read("src/lib.rs"), "changed\n");
    std::fs::remove_file(p.path(".git/MERGE_HEAD")).unwrap();

    let out = p.run(&["rewind", "ckpt-nope"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no checkpoint ckpt-nope"));

    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir(plain.path().join(".orchestration")).unwrap();
    let out = p
        .waymark()
        .env("CLAUDE_PROJECT_DIR", plain.path())
        .args(["rewind", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a git repository"));
}

#[test]
fn snapshots_are_pruned_with_their_checkpoints() {
    let p = project();
    p.run(&["config", "set", "max_checkpoints", "2"], "");
    for n in 0..4 {
        p.write("notes.txt", &format!("version {n}\n"));
        checkpoint(&p, &format!("c{n}"));
    }
    let refs = p.git(&["for-each-ref", "--format=%(refname)", "refs/waymark/"]);
    assert_eq!(refs.lines().count(), 2, "{refs}");
    // A hook's checkpoint takes its snapshot in the background, like its capture.
    let compact = p.fixture("PreCompact-manual.json");
    p.hook("PreCompact", &compact);
    let hook = p.hook_json();
    let last = hook["checkpoints"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["trigger"], "pre_compact");
    let capture = p.capture(&last);
    let snapshot = capture["snapshot"].as_str().unwrap();
    let refs = p.git(&["for-each-ref", "--format=%(objectname)", "refs/waymark/"]);
    assert!(refs.lines().any(|l| l == snapshot), "{refs}");
}

/// The size of `.git`'s objects, in bytes.
fn objects_size(root: &Path) -> u64 {
    fn walk(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| match e.file_type().unwrap().is_dir() {
                true => walk(&e.path()),
                false => e.metadata().unwrap().len(),
            })
            .sum()
    }
    walk(&root.join(".git/objects"))
}

/// A large untracked file (a growing log) is recorded by its hash only: `.git` does not
/// grow by it at each checkpoint, and a rewind leaves it as it is (issue 32, item 8).
#[test]
fn a_large_untracked_file_is_recorded_by_hash_only() {
    let p = project();
    // Bytes that do not compress, as a log's would not into a handful of bytes.
    let big = |seed: u8| {
        let mut x = u64::from(seed) | 1;
        (0..17 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect::<Vec<u8>>()
    };
    std::fs::write(p.path("app.log"), big(b'a')).unwrap();
    let before = objects_size(p.root());
    let first = checkpoint(&p, "with a large log");
    std::fs::write(p.path("app.log"), big(b'b')).unwrap();
    checkpoint(&p, "the log grew");
    let grown = objects_size(p.root()) - before;
    assert!(grown < 1 << 20, ".git grew by {grown} bytes");
    let capture: Value = serde_json::from_str(&p.read(&format!(
        ".orchestration/tasks/T-1/checkpoints/{first}.json"
    )))
    .unwrap();
    let w = &capture["withheld"][0];
    assert_eq!(
        (w["path"].as_str(), w["reason"].as_str()),
        (Some("app.log"), Some("large"))
    );
    assert_eq!(w["size"], 17 << 20);
    assert_eq!(w["sha256"].as_str().unwrap().len(), 64);
    // The rest of the work is in the snapshot, and a rewind leaves the log alone.
    p.write("notes.txt", "changed\n");
    let out = p.run(&["rewind", &first], "");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("left as it is: app.log (untracked and too large"),
        "{said}"
    );
    assert_eq!(p.read("notes.txt"), "untracked, but part of the work\n");
    assert_eq!(std::fs::read(p.path("app.log")).unwrap(), big(b'b'));
}
