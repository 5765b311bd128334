//! The work tree as a git commit: what `waymark diff` and `waymark rewind` compare and
//! restore (docs/rewind.md).
//!
//! A snapshot is built in a temporary index (a copy of the real one, so git re-reads only
//! the files whose stat changed), `git add -A` (tracked and untracked files, ignored ones
//! left out), `write-tree`, `commit-tree`, and a ref under [`REF_PREFIX`]. The index,
//! HEAD, the work tree and the stash are never touched; a tree that did not change is the
//! same object, stored once. waymark's own files (the state directory, the lessons file)
//! are outside every diff and rewind: rewinding the work never rewinds the ledger.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use super::command;
use super::temp_index::TempIndex;
use super::tree_path::TreePath;

mod put_back;
mod withheld;
pub use put_back::Before;
pub use withheld::{LARGE_FILE, Reason, Withheld, holds_secret};

/// Where checkpoint snapshots live: `refs/waymark/checkpoints/<task>/<checkpoint>`.
const REF_PREFIX: &str = "refs/waymark/checkpoints";

/// The identity of snapshot commits: fixed, so no user configuration is needed and the
/// same tree at the same second is the same commit.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "waymark"),
    ("GIT_AUTHOR_EMAIL", "waymark@localhost"),
    ("GIT_COMMITTER_NAME", "waymark"),
    ("GIT_COMMITTER_EMAIL", "waymark@localhost"),
];

/// The ref of a checkpoint's snapshot. Task and checkpoint ids become ref-safe names.
pub fn ref_name(task_id: &str, checkpoint_id: &str) -> String {
    format!("{}/{}", task_refs(task_id), ref_safe(checkpoint_id))
}

/// Where a task's snapshot refs are (a prefix for `for-each-ref`).
fn task_refs(task_id: &str) -> String {
    format!("{REF_PREFIX}/{}", ref_safe(task_id))
}

fn ref_safe(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// The work tree at one moment: its tree object, and the temporary index that holds it
/// (kept: the file goes with it, and a rewind adds to it the ignored files it replaces).
pub struct WorkTree {
    pub tree: String,
    /// The files left out of it.
    pub withheld: Vec<Withheld>,
    index: TempIndex,
}

/// The work tree added to a temporary index, its tree not written yet.
pub struct Staged {
    index: TempIndex,
    /// HEAD's commit when it was staged; `None` before the first commit.
    pub head: Option<String>,
    /// The files left out.
    pub withheld: Vec<Withheld>,
    /// Whether the project's files differed from HEAD (with no commit yet: whether there
    /// were any) when staged, files left out included; ignored files forced in later
    /// are not changes.
    pub dirty: bool,
}

/// The work tree now, as a tree object, staged in the temporary index `index` (a path
/// only one process at a time uses: `capture::Exclusive`). `None` outside git (or when
/// git fails).
pub fn tree(root: &Path, index: &Path, lessons: &str) -> Option<WorkTree> {
    stage(root, index, lessons)?.write_tree(root)
}

/// The work tree now, added to the temporary index `index`, but for the files a snapshot
/// leaves out ([`Withheld`]: large untracked files, files that hold a secret). `None`
/// outside git (or when git fails).
pub fn stage(root: &Path, index: &Path, lessons: &str) -> Option<Staged> {
    let git_dir = super::head::find_git_dir(root)?;
    let index = TempIndex::new(index.to_path_buf());
    // No real index yet (a fresh repository): git starts from an empty one.
    let _ = index.seed(&git_dir.join("index"));
    // `git add -A` walks the tree for untracked files as `ls-files --others` just did:
    // the tracked files are added (`-u`), then the untracked ones by name (issue 52: one
    // walk, a third of a snapshot's time at 100,000 files).
    let (untracked, mut withheld) = withheld::untracked(root, &index, lessons)?;
    // `--ignore-errors` still exits 1 after skipping an unreadable file: the tree is
    // written all the same.
    index
        .git(root, &["add", "-u", "--ignore-errors", "--"])
        .args(super::project_files(lessons))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    let nested = add_untracked(root, &index, &untracked)?;
    let head = super::head_revision(root);
    let changes = withheld::take_out_secrets(root, &index, lessons, head.as_deref())?;
    // A large file left out is a change too (it is untracked).
    let dirty = changes.dirty || !withheld.is_empty();
    withheld.extend(changes.withheld);
    withheld.extend(nested);
    Some(Staged {
        index,
        head,
        withheld,
        dirty,
    })
}

/// Adds the untracked files `names` (root-relative, git's bytes), each by its literal
/// name; returns the untracked repositories among them, whose files git leaves out (its
/// standard error names them, in git's own words: the C locale).
fn add_untracked(root: &Path, index: &TempIndex, names: &[Vec<u8>]) -> Option<Vec<Withheld>> {
    if names.is_empty() {
        return Some(Vec::new());
    }
    let list: Vec<u8> = names
        .iter()
        .flat_map(|n| [&n[..], b"\0"].concat())
        .collect();
    let args = [
        "add",
        "--ignore-errors",
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
    ];
    let mut add = index.git(root, &args);
    add.env("GIT_LITERAL_PATHSPECS", "1").env("LC_ALL", "C");
    let added = super::fed(&mut add, list)?;
    Some(withheld::nested_in(&added.stderr))
}

/// Adds `paths` to the temporary index even though git ignores them (a file git cannot
/// read is skipped, as by `add -A`).
fn force_add<P: AsRef<[u8]>>(root: &Path, index: &TempIndex, paths: &[P]) {
    if paths.is_empty() {
        return;
    }
    let _ = index
        .git(root, &["add", "-f", "--ignore-errors", "--"])
        .args(paths.iter().map(|p| literal(p.as_ref())))
        .stdout(Stdio::null())
        .status();
}

/// A pathspec that matches exactly `path` (and what lies under it), whatever its bytes.
pub fn literal(path: &[u8]) -> OsString {
    let mut spec = OsString::from(":(literal)");
    spec.push(OsStr::from_bytes(path));
    spec
}

impl WorkTree {
    /// The same work tree with `paths` added even though git ignores them, as a new tree.
    pub fn with_forced(self, root: &Path, paths: &[TreePath]) -> Option<WorkTree> {
        force_add(root, &self.index, paths);
        written(root, self.index, self.withheld)
    }
}

impl Staged {
    /// Adds `paths` even though git ignores them (a rewind's undo holds what it replaces).
    pub fn force<P: AsRef<[u8]>>(&self, root: &Path, paths: &[P]) {
        force_add(root, &self.index, paths);
    }

    /// The staged work tree as a tree object.
    pub fn write_tree(self, root: &Path) -> Option<WorkTree> {
        written(root, self.index, self.withheld)
    }
}

/// What `index` holds, written as a tree object.
fn written(root: &Path, index: TempIndex, withheld: Vec<Withheld>) -> Option<WorkTree> {
    Some(WorkTree {
        tree: index.write_tree(root)?,
        withheld,
        index,
    })
}

/// A snapshot commit of `tree` on top of `head`, HEAD's commit (when there is one), under
/// `ref_name`.
pub fn save(
    root: &Path,
    tree: &str,
    head: Option<&str>,
    ref_name: &str,
    message: &str,
) -> Option<String> {
    let mut commit = command(root);
    commit
        .envs(IDENTITY)
        .args(["commit-tree", tree, "-m", message]);
    if let Some(head) = head {
        commit.args(["-p", head]);
    }
    let out = commit.output().ok()?;
    if !out.status.success() {
        return None;
    }
    let id = trimmed(&out.stdout);
    if write_loose_ref(root, ref_name, &id).is_err() {
        super::run(root, ["update-ref", ref_name, &id])?;
    }
    Some(id)
}

/// Writes a new ref as git's files backend keeps it (`<common dir>/<name>`, made under
/// `<name>.lock` and renamed), saving a process; a repository with another ref backend
/// (reftable) is left to `git update-ref`.
fn write_loose_ref(root: &Path, name: &str, id: &str) -> io::Result<()> {
    let git_dir = super::head::find_git_dir(root).ok_or(io::ErrorKind::NotFound)?;
    let common = super::head::common_dir(&git_dir);
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    if config.to_ascii_lowercase().contains("refstorage") {
        return Err(io::ErrorKind::Unsupported.into());
    }
    let path = common.join(name);
    std::fs::create_dir_all(path.parent().expect("a ref has a folder"))?;
    let lock = path.with_extension("lock");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)?;
    let written = file
        .write_all(format!("{id}\n").as_bytes())
        .and_then(|()| std::fs::rename(&lock, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&lock);
    }
    written
}

/// Removes all of task `task_id`'s snapshot refs (the task is gone).
pub fn remove_task(root: &Path, task_id: &str) -> io::Result<()> {
    let prefix = task_refs(task_id);
    let listed = super::run(root, ["for-each-ref", "--format=%(refname)", &prefix]);
    let names: Vec<String> = listed
        .iter()
        .flat_map(|l| l.lines())
        .map(str::to_string)
        .collect();
    delete_refs(root, &names)
}

/// Removes the snapshot refs of task `task_id`'s checkpoints `ids` (their captures went).
/// A loose ref is removed as a file; only one packed by `git gc` needs git.
pub fn drop_checkpoints(root: &Path, task_id: &str, ids: &[String]) -> io::Result<()> {
    let Some(git_dir) = super::head::find_git_dir(root) else {
        return Ok(());
    };
    let common = super::head::common_dir(&git_dir);
    let mut packed = Vec::new();
    for id in ids {
        let name = ref_name(task_id, id);
        match std::fs::remove_file(common.join(&name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => packed.push(name),
            other => other?,
        }
    }
    delete_refs(root, &packed)
}

fn delete_refs(root: &Path, names: &[String]) -> io::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let doomed: String = names.iter().map(|r| format!("delete {r}\n")).collect();
    let mut child = command(root)
        .args(["update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(doomed.as_bytes())?;
    child.wait()?;
    Ok(())
}

/// Every snapshot ref, `(task part, checkpoint part, ref name)`.
fn list(root: &Path) -> Vec<(String, String, String)> {
    super::run(root, ["for-each-ref", "--format=%(refname)", REF_PREFIX])
        .unwrap_or_default()
        .lines()
        .filter_map(|r| {
            let rest = r.strip_prefix(REF_PREFIX)?.strip_prefix('/')?;
            let (task, checkpoint) = rest.split_once('/')?;
            Some((task.to_string(), checkpoint.to_string(), r.to_string()))
        })
        .collect()
}

/// A checkpoint's snapshot, found by its id or a unique start of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The task part and the checkpoint part of its ref, and the ref.
    pub task: String,
    pub checkpoint: String,
    pub name: String,
    /// The tree it holds.
    pub tree: String,
}

/// Finds the snapshot of checkpoint `wanted`; the error says why there is none.
pub fn find(root: &Path, wanted: &str) -> anyhow::Result<Found> {
    let all = list(root);
    let exact: Vec<_> = all
        .iter()
        .filter(|(_, c, _)| *c == ref_safe(wanted))
        .collect();
    let matches = if exact.is_empty() {
        all.iter()
            .filter(|(_, c, _)| c.starts_with(wanted))
            .collect()
    } else {
        exact
    };
    let (task, checkpoint, name) = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(anyhow::anyhow!(
                "no snapshot of checkpoint {wanted}: `waymark checkpoints` lists them; a checkpoint taken outside git, by a waymark before rewind, or past max_checkpoints has none"
            ));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, c, _)| c.as_str()).collect();
            return Err(anyhow::anyhow!(
                "{wanted} names several checkpoints ({}): give more of the id",
                names.join(", ")
            ));
        }
    };
    let tree = super::run(
        root,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{name}^{{tree}}"),
        ],
    )
    .ok_or_else(|| anyhow::anyhow!("cannot read the tree of {name}"))?;
    Ok(Found {
        task: task.clone(),
        checkpoint: checkpoint.clone(),
        name: name.clone(),
        tree,
    })
}

/// Why files cannot be rewound now: a merge, rebase, cherry-pick or revert in progress,
/// or a conflict in the index (its resolution would be lost).
pub fn busy(root: &Path) -> Option<String> {
    let git_dir = super::head::find_git_dir(root)?;
    for (marker, what) in [
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
    ] {
        if git_dir.join(marker).exists() {
            return Some(format!(
                "{what} is in progress: finish or abort it first (rewinding now would mix its files with the checkpoint's)"
            ));
        }
    }
    match super::run(root, ["ls-files", "--unmerged"]) {
        Some(u) if !u.is_empty() => {
            Some("the index has unresolved conflicts: resolve them (or `git reset`) first".into())
        }
        _ => None,
    }
}

/// One file that differs between a snapshot and now, with what it was in the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Change {
    /// Root-relative path, checked safe to write.
    pub path: TreePath,
    /// `A` (new since: a rewind deletes it), `D` (deleted since: recreated), `M` or `T`
    /// (changed content, mode or type: restored).
    pub status: char,
    /// The snapshot's mode (`100644`, `100755`, `120000`) and blob, empty for `A`.
    pub mode: String,
    pub blob: String,
}

/// What differs between tree `from` (a snapshot) and tree `to` (now), limited to `paths`
/// (root-relative; all the project's files when empty). A path a rewind must not write
/// (inside `.git`, outside the project: a forged snapshot) fails the whole comparison,
/// named.
pub fn changes(
    root: &Path,
    from: &str,
    to: &str,
    paths: &[Vec<u8>],
    lessons: &str,
) -> Result<Vec<Change>, String> {
    let mut spec: Vec<OsString> = super::project_files(lessons)
        .into_iter()
        .map(OsString::from)
        .collect();
    if !paths.is_empty() {
        spec.splice(0..1, paths.iter().map(|p| literal(p)));
    }
    let out = command(root)
        .args([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--relative",
            from,
            to,
            "--",
        ])
        .args(&spec)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .ok_or("cannot compare with the snapshot (git diff-tree failed)")?;
    let mut fields = out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut found = Vec::new();
    while let (Some(raw), Some(path)) = (fields.next(), fields.next()) {
        // `:<old mode> <new mode> <old blob> <new blob> <status>`
        let raw = String::from_utf8_lossy(raw);
        let parts: Vec<&str> = raw.trim_start_matches(':').split(' ').collect();
        let [old_mode, _, old_blob, _, status] = parts[..] else {
            continue;
        };
        let status = status.chars().next().unwrap_or('M');
        let gone = status == 'A';
        let path = TreePath::new(path.to_vec())
            .map_err(|why| format!("the snapshot holds {why}: not rewinding to it"))?;
        found.push(Change {
            path,
            status,
            mode: if gone { String::new() } else { old_mode.into() },
            blob: if gone { String::new() } else { old_blob.into() },
        });
    }
    match through_a_link(&found) {
        Some(why) => Err(format!("the snapshot holds {why}: not rewinding to it")),
        None => Ok(found),
    }
}

/// A file the plan writes under a symlink the same plan makes (`evil` → `/etc`, then
/// `evil/passwd`): no tree git makes holds both, a forged one can. `None` when none is.
pub fn through_a_link(changes: &[Change]) -> Option<String> {
    let links: std::collections::HashSet<&[u8]> = changes
        .iter()
        .filter(|c| c.status != 'A' && c.mode == "120000")
        .map(|c| c.path.as_bytes())
        .collect();
    changes.iter().filter(|c| c.status != 'A').find_map(|c| {
        let link = c.path.ancestors().find(|a| links.contains(a))?;
        let link = super::tree_path::Shown(link);
        Some(format!("`{}` under `{link}`, a symbolic link", c.path))
    })
}

/// The contents of `blobs`, by id, read with one `git cat-file --batch`.
pub fn read_blobs(root: &Path, blobs: &[&str]) -> io::Result<HashMap<String, Vec<u8>>> {
    let mut child = command(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let request: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    let mut stdin = child.stdin.take().expect("piped");
    // Written from a thread: the answers can fill the pipe before the questions are out.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut found = HashMap::new();
    let mut header = String::new();
    for _ in blobs {
        header.clear();
        out.read_line(&mut header)?;
        let parts: Vec<&str> = header.split_whitespace().collect();
        let [id, "blob", size] = parts[..] else {
            return Err(io::Error::other(format!(
                "git cat-file: unexpected answer {header:?}"
            )));
        };
        let size: usize = size
            .parse()
            .map_err(|_| io::Error::other("git cat-file: bad size"))?;
        let mut content = vec![0; size + 1];
        out.read_exact(&mut content)?;
        content.pop(); // the newline after each object
        found.insert(id.to_string(), content);
    }
    writer
        .join()
        .map_err(|_| io::Error::other("git cat-file writer"))??;
    child.wait()?;
    Ok(found)
}

/// Removes the temporary indexes older waymarks left in `root`'s git directory
/// (`waymark-index-<pid>`, one per capture killed while it took a snapshot).
pub fn remove_old_indexes(root: &Path) {
    let Some(git_dir) = super::head::find_git_dir(root) else {
        return;
    };
    for entry in std::fs::read_dir(&git_dir).into_iter().flatten().flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with("waymark-index-")
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn trimmed(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_string()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::git::test_git as git;

    /// A temporary index beside the repository.
    fn index(d: &Path) -> PathBuf {
        d.with_extension("index")
    }

    /// Whether a capture finds the work tree of `d` dirty, the way it asks.
    fn dirty(d: &Path) -> bool {
        stage(d, &index(d), "AGENT.md").unwrap().dirty
    }

    /// An untracked directory that is a git repository of its own: `git add` keeps its
    /// commit, not its files; the snapshot says so instead of leaving them out silently
    /// (issue 50, item 6).
    #[test]
    fn an_untracked_nested_repository_is_said_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        let nested = d.join("vendor/lib");
        std::fs::create_dir_all(&nested).unwrap();
        git(&nested, &["init", "-q", "-b", "main"]);
        std::fs::write(nested.join("lib.rs"), "pub fn f() {}\n").unwrap();
        git(&nested, &["add", "lib.rs"]);
        git(
            &nested,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "lib",
            ],
        );
        let staged = stage(d, &index(d), "AGENT.md").unwrap();
        let said: Vec<String> = staged.withheld.iter().map(Withheld::describe).collect();
        assert_eq!(
            said,
            [
                "`vendor/lib/` (a git repository of its own: a snapshot holds its commit, not its files)"
            ]
        );
    }

    #[test]
    fn the_work_tree_is_dirty_when_the_projects_files_differ_from_head() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(tree(d, &index(d), "AGENT.md").is_none(), "not a repository");
        git(d, &["init", "-q", "-b", "main"]);
        assert!(!dirty(d), "nothing at all");
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        assert!(dirty(d), "a new file, no commit");
        git(d, &["add", "a.txt"]);
        git(
            d,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "-qm",
                "one",
            ],
        );
        let clean = tree(d, &index(d), "AGENT.md").unwrap().tree;
        assert!(!dirty(d));
        // waymark's own files do not count.
        std::fs::create_dir_all(d.join(".orchestration")).unwrap();
        std::fs::write(d.join(".orchestration/hook.json"), "{}").unwrap();
        std::fs::write(d.join("AGENT.md"), "lessons\n").unwrap();
        assert_eq!(tree(d, &index(d), "AGENT.md").unwrap().tree, clean);
        assert!(!dirty(d));
        std::fs::write(d.join("b.txt"), "new\n").unwrap();
        assert!(dirty(d), "an untracked file");
        // The index was never touched.
        git(d, &["diff", "--cached", "--quiet"]);
    }

    /// The tree holds what `git add -A` would: the tracked file changed and the one
    /// deleted, the new files (a name git would quote too), a nested repository as its
    /// commit; one with no commit yet is skipped, as `add -A --ignore-errors` skips it,
    /// and the files beside it are kept all the same.
    #[test]
    fn the_tree_holds_what_add_all_would() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let commit = |d: &Path| {
            git(d, &["add", "-A"]);
            let who = ["-c", "user.name=t", "-c", "user.email=t@e"];
            git(d, &[&who[..], &["commit", "-qm", "c"]].concat());
        };
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("kept.txt"), "a\n").unwrap();
        std::fs::write(d.join("gone.txt"), "b\n").unwrap();
        commit(d);
        std::fs::write(d.join("kept.txt"), "a\nchanged\n").unwrap();
        std::fs::remove_file(d.join("gone.txt")).unwrap();
        std::fs::create_dir_all(d.join("src/deep")).unwrap();
        std::fs::write(d.join("src/deep/new.rs"), "fn new() {}\n").unwrap();
        std::fs::write(d.join("we ird\"name"), "x\n").unwrap();
        // An untracked name is added as it is, never read as a pattern: `big?.bin` does
        // not bring in `big1.bin`, left out for its size, nor `[ab].txt` the ignored `a.txt`.
        std::fs::write(d.join(".gitignore"), "a.txt\n").unwrap();
        std::fs::write(d.join("a.txt"), "ignored\n").unwrap();
        std::fs::write(d.join("[ab].txt"), "glob\n").unwrap();
        std::fs::write(d.join("big?.bin"), "small\n").unwrap();
        let big = std::fs::File::create(d.join("big1.bin")).unwrap();
        big.set_len(LARGE_FILE + 1).unwrap();
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        git(&sub, &["init", "-q", "-b", "main"]);
        std::fs::write(sub.join("inner.txt"), "i\n").unwrap();
        commit(&sub);
        let listing = |d: &Path| {
            let tree = tree(d, &index(d), "AGENT.md").unwrap().tree;
            git(
                d,
                &["ls-tree", "-r", "--format=%(objectmode) %(path)", &tree],
            )
        };
        let expected = "100644 .gitignore\n100644 [ab].txt\n100644 big?.bin\n100644 kept.txt\n100644 src/deep/new.rs\n160000 sub\n100644 \"we ird\\\"name\"";
        assert_eq!(listing(d), expected);
        let empty = d.join("empty-repo");
        std::fs::create_dir(&empty).unwrap();
        git(&empty, &["init", "-q"]);
        std::fs::write(d.join("beside.txt"), "y\n").unwrap();
        let with_beside = listing(d);
        assert!(with_beside.contains("100644 beside.txt\n"), "{with_beside}");
        assert!(!with_beside.contains("empty-repo"), "{with_beside}");
        assert!(
            with_beside.contains("100644 src/deep/new.rs\n"),
            "{with_beside}"
        );
        // The index was never touched.
        assert_eq!(git(d, &["diff", "--cached", "--name-only"]), "");
    }

    #[test]
    fn a_sha256_repository_before_its_first_commit_is_judged_like_any_other() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "--object-format=sha256", "-b", "main"]);
        assert!(!dirty(d), "nothing at all");
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        assert!(dirty(d), "a new file, no commit");
        // Before the first commit too, a file holding a secret stays out (every file is
        // new then, whatever the repository's hash).
        std::fs::write(
            d.join(".env"),
            "DB_PASSWORD=hunter2-correct-horse-battery\n",
        )
        .unwrap();
        let staged = stage(d, &index(d), "AGENT.md").unwrap();
        let names: Vec<&str> = staged.withheld.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(names, [".env"]);
        let work = staged.write_tree(d).unwrap();
        let listed = git(d, &["ls-tree", "--name-only", &work.tree]);
        assert_eq!(listed, "a.txt");
    }

    /// Files put back after an edit that came first (`task::capture::preimage`), in a
    /// repository of either hash: one made by the edit goes, one changed by it is as its
    /// copy was.
    #[test]
    fn files_put_back_are_as_they_were_before_the_edit() {
        for format in ["sha1", "sha256"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            git(d, &["init", "-q", &format!("--object-format={format}")]);
            std::fs::write(d.join("a.txt"), "edited\n").unwrap();
            std::fs::write(d.join("new.txt"), "made by the edit\n").unwrap();
            let copy = d.with_extension("copy");
            std::fs::write(&copy, "before\n").unwrap();
            let mut staged = stage(d, &index(d), "AGENT.md").unwrap();
            let files = [
                Before {
                    path: b"a.txt",
                    file: Some(("100644", copy.as_path())),
                },
                Before {
                    path: b"new.txt",
                    file: None,
                },
            ];
            staged.put_back(d, &files, "AGENT.md");
            let tree = staged.write_tree(d).unwrap().tree;
            assert_eq!(
                git(d, &["ls-tree", "--name-only", &tree]),
                "a.txt",
                "{format}"
            );
            let a = git(d, &["show", &format!("{tree}:a.txt")]);
            assert_eq!(a, "before", "{format}");
        }
    }
}
