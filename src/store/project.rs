//! The project root and the paths inside it.
//!
//! Rule 3 of docs/design.md ("stay in the project") is enforced here: every path that
//! comes from an event is turned into a root-relative path, or rejected as outside the
//! root, before any other module sees it.

use std::env;
use std::path::{Component, Path, PathBuf};

/// The directory waymark keeps its files in, under the root.
pub const STATE_DIR: &str = waymark_core::rewind::STATE_DIR;
/// The registrations waymark saw running one event twice (written by `handlers::once`
/// when it finds a duplicate, read by `waymark doctor`).
pub const REGISTRATIONS_SEEN: &str = "registrations.seen";

/// Where the agents keep their hooks and settings in a project (and, for the user's own,
/// under the home directory), as `waymark init` writes them and doctor reads them.
pub const CLAUDE_SETTINGS: &str = ".claude/settings.json";
/// Claude Code's settings kept out of git (its grants).
pub const CLAUDE_LOCAL_SETTINGS: &str = ".claude/settings.local.json";
/// Codex CLI's hooks.
pub const CODEX_HOOKS: &str = ".codex/hooks.json";
/// Where `waymark init` marks the lessons file as merged by union.
pub const GIT_ATTRIBUTES: &str = ".gitattributes";

/// What waymark writes into a state directory it makes, so that `git add -A` takes what a
/// team shares (intents, the intent map, the trace, the configuration) and leaves what one
/// machine's sessions keep (locks, the log, hook.json and its copies, the task folders):
/// docs/git.md. The trace is append-only, so two branches' records merge by union.
pub const GIT_FILES: [(&str, &str); 2] = [
    (
        ".gitignore",
        "# Written by waymark (docs/git.md): what stays on this machine.\n\
         # Shared in git: active_intents.yaml, intent_map.md, agent_trace.jsonl, waymark.json.\n\
         *.lock\n*.tmp\n.*.swap\n*.corrupt-*\n\
         waymark.log\nwaymark.log.1\n\
         hook.json\nhook.json.bak\nplan.json\nplan.json.bak\nHOOK.md\npending.jsonl\npending.cursor\ncodex-bash.jsonl\nrewind.json\n\
         active_intent\nevents.seen\nregistrations.seen\ncapture.index\ncapture.held\ncapture.pre/\ntrace.head\n\
         tasks/\n",
    ),
    (
        ".gitattributes",
        "# Written by waymark (docs/git.md): the ledger is append-only; merge both sides' lines.\n\
         agent_trace.jsonl merge=union\n",
    ),
];

/// Writes [`GIT_FILES`] into `state_dir`, each unless it is there (the user's edits are
/// theirs). Best effort: a project works without them.
pub fn write_git_files(state_dir: &Path) {
    for (name, text) in GIT_FILES {
        let path = state_dir.join(name);
        if !path.exists() {
            let _ = crate::store::write_verbatim(&path, text.as_bytes());
        }
    }
}

/// Makes the state directory (with [`GIT_FILES`]), or adds those files to one made by an
/// older waymark.
pub fn ensure_state_dir(project: &Project) -> std::io::Result<()> {
    let dir = project.state_dir();
    crate::store::make_dir(&dir)?;
    write_git_files(&dir);
    Ok(())
}

/// A resolved project.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    /// Where the recorded session's project lived, when replaying a recording made
    /// elsewhere: paths under it are mapped onto `root`.
    pub recorded_root: Option<PathBuf>,
    /// False when nothing marked the root: no `CLAUDE_PROJECT_DIR`, no `.git` or
    /// `.orchestration` in the directory or above it (the root is then the directory
    /// itself, where a command should say it is not in a project rather than start one).
    pub found: bool,
    /// The root with its links resolved, read the first time it is needed.
    real_root: std::sync::OnceLock<PathBuf>,
    /// Whether the state directory is a symbolic link, read once per process (an event
    /// is a process): every event's checks ask it (three `lstat`s of one path, before).
    state_link: std::sync::OnceLock<bool>,
}

pub use waymark_core::governance::scope::Located;

impl Project {
    /// Resolves the root: `$CLAUDE_PROJECT_DIR`, else the nearest ancestor of `cwd` holding
    /// `.git` or `.orchestration`, else `cwd` itself.
    pub fn resolve(cwd: Option<&Path>) -> Project {
        if let Some(dir) = env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
            return Project::at(PathBuf::from(dir));
        }
        let cwd = cwd
            .map(Path::to_path_buf)
            .filter(|p| p.is_absolute() && p.is_dir())
            .or_else(|| env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let marked = |dir: &&Path| dir.join(".git").exists() || dir.join(STATE_DIR).is_dir();
        match cwd.ancestors().find(marked) {
            Some(root) => Project::at(root.to_path_buf()),
            None => Project {
                found: false,
                ..Project::at(cwd)
            },
        }
    }

    /// The project a command names: `--root` (made absolute), else the one around `cwd`
    /// (the event's working directory; the process's when `None`), as [`resolve`] finds it.
    ///
    /// [`resolve`]: Project::resolve
    pub fn from_arg(root: Option<PathBuf>, cwd: Option<&Path>) -> Project {
        match root {
            Some(r) => Project::at(std::path::absolute(&r).unwrap_or(r)),
            None => Project::resolve(cwd),
        }
    }

    pub fn at(root: PathBuf) -> Project {
        let root = normalize(&root);
        Project {
            root,
            recorded_root: None,
            found: true,
            real_root: std::sync::OnceLock::new(),
            state_link: std::sync::OnceLock::new(),
        }
    }

    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    pub fn state_file(&self, name: &str) -> PathBuf {
        self.state_dir().join(name)
    }

    /// Locates a path from an event. Relative paths are taken against `cwd` (the event's
    /// working directory, else the root). `..` is resolved lexically; a path that leaves the
    /// root, or that reaches outside through a symlink, is `Outside`.
    pub fn locate(&self, path: &str, cwd: Option<&str>) -> Located {
        let raw = Path::new(path);
        let base = cwd
            .map(|c| self.map_recorded(Path::new(c)))
            .unwrap_or_else(|| self.root.clone());
        let abs = if raw.is_absolute() {
            self.map_recorded(raw)
        } else {
            base.join(raw)
        };
        let abs = normalize(&abs);
        match self.relative(&abs) {
            Some(rel) if !self.escapes_through_symlink(&rel) => Located::Inside(slash(&rel)),
            _ => Located::Outside(abs.to_string_lossy().into_owned()),
        }
    }

    /// Whether `.orchestration` is a symbolic link (read the first time it is asked).
    pub fn state_linked(&self) -> bool {
        *self.state_link.get_or_init(|| {
            self.state_dir()
                .symlink_metadata()
                .is_ok_and(|m| m.is_symlink())
        })
    }

    /// The root with every link on its way resolved (as given when it cannot be), read
    /// once: `CLAUDE_PROJECT_DIR=/link` for `/real` gives `/real`.
    pub fn real_root(&self) -> &Path {
        self.real_root.get_or_init(|| {
            self.root
                .canonicalize()
                .unwrap_or_else(|_| self.root.clone())
        })
    }

    /// An absolute, normalized path as a path under the root, whichever spelling of the
    /// root it starts with: the root as given, or where it really is (a project reached
    /// through a symlink is one project, whether an event names `/link/a.rs` or
    /// `/real/a.rs`). The directories of a path not under the root as given are resolved
    /// to tell; the file's own name is kept (a link there is judged by the caller).
    pub fn relative(&self, abs: &Path) -> Option<PathBuf> {
        if let Ok(rel) = abs.strip_prefix(&self.root) {
            return Some(rel.to_path_buf());
        }
        // The directories resolved, the file's own name kept.
        let real = real_path(abs.parent()?).ok()?.join(abs.file_name()?);
        if let Ok(rel) = real.strip_prefix(self.real_root()) {
            return Some(rel.to_path_buf());
        }
        // The root itself, by a link of another name.
        let linked = abs.symlink_metadata().is_ok_and(|m| m.is_symlink());
        (linked && abs.canonicalize().ok()? == self.real_root()).then(PathBuf::new)
    }

    pub fn absolute(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn map_recorded(&self, path: &Path) -> PathBuf {
        match self.recorded_root.as_ref().map(|r| path.strip_prefix(r)) {
            Some(Ok(rest)) => self.root.join(rest),
            _ => path.to_path_buf(),
        }
    }

    /// Where a write to `loc` really lands when a symlink inside the project stands on its
    /// way (a linked directory, or the file itself): the real root-relative path. `None`
    /// when it lands where it says (a link out of the project is already `Outside`).
    pub fn real(&self, loc: &Located) -> Option<Located> {
        let Located::Inside(rel) = loc else {
            return None;
        };
        let root = self.real_root();
        let real = real_path(&self.root.join(rel)).ok()?;
        let real = Located::Inside(slash(real.strip_prefix(root).ok()?));
        (real != *loc).then_some(real)
    }

    /// How many names the file at `loc` has, when it has more than one (hard links): a
    /// write to it changes the file under every name.
    pub fn names(&self, loc: &Located) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        let Located::Inside(rel) = loc else {
            return None;
        };
        let meta = self.root.join(rel).symlink_metadata().ok()?;
        (meta.is_file() && meta.nlink() > 1).then(|| meta.nlink())
    }

    /// True when an existing prefix of `rel` is a symlink whose target lies outside the root.
    fn escapes_through_symlink(&self, rel: &Path) -> bool {
        self.first_link(rel)
            .is_some_and(|link| match link.canonicalize() {
                Ok(target) => !target.starts_with(self.real_root()),
                // A dangling link: we cannot tell where it points; do not follow.
                Err(_) => true,
            })
    }

    /// The first component of root-relative `rel`, up to the first that does not exist,
    /// that is a symbolic link, as an absolute path.
    pub(super) fn first_link(&self, rel: &Path) -> Option<PathBuf> {
        let mut cur = self.root.clone();
        for comp in rel.components() {
            cur.push(comp);
            match cur.symlink_metadata() {
                Ok(m) if m.is_symlink() => return Some(cur),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }
}

#[cfg(test)]
pub use tests::temp_project;

/// Lexical normalization: removes `.`, resolves `..` against the path so far, never
/// rising above the filesystem root (`/../etc/passwd` is `/etc/passwd`, as the kernel
/// reads it). A relative path keeps the `..` it cannot resolve. Does not touch the
/// filesystem.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `abs` with every link followed, also a link to what does not exist yet; `Err`: why it
/// cannot be (a link that leads nowhere or in a loop). The one resolver of where a path
/// really is: where a write lands (`store::landing`) and what a tool call names.
pub fn real_path(abs: &Path) -> Result<PathBuf, String> {
    real_path_from(abs, 0)
}

/// How many links are followed before a path is said to loop (the kernel's own limit).
const MAX_HOPS: u32 = 40;

/// `abs` with every link followed, also a link to what does not exist yet (`AGENT.md` →
/// `docs/AGENT.md` before the first lesson): the longest part that exists is resolved,
/// the rest kept as it is.
fn real_path_from(abs: &Path, hops: u32) -> Result<PathBuf, String> {
    let mut existing = abs;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    while existing.symlink_metadata().is_err() {
        let Some(name) = existing.file_name() else {
            break;
        };
        rest.push(name);
        existing = existing.parent().unwrap_or(Path::new("/"));
    }
    let mut real = match existing.canonicalize() {
        Ok(real) => real,
        // Every directory above `existing` was gone through: it is the link that fails,
        // one that leads to what is not there (followed by hand) or in a loop.
        Err(e) => {
            let target = std::fs::read_link(existing).map_err(|_| nowhere(&e))?;
            let parent = existing.parent().unwrap_or(Path::new("/"));
            if hops >= MAX_HOPS {
                return Err(nowhere(&e));
            }
            let next = normalize(&real_path_from(parent, hops + 1)?.join(target));
            real_path_from(&next, hops + 1)?
        }
    };
    real.extend(rest.iter().rev());
    Ok(real)
}

fn nowhere(e: &std::io::Error) -> String {
    format!("goes through a link that leads nowhere or in a loop ({e})")
}

fn slash(rel: &Path) -> String {
    let parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    parts.collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project in a fresh temporary directory, for unit tests.
    pub fn temp_project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        (dir, p)
    }

    fn project(root: &Path) -> Project {
        Project::at(root.to_path_buf())
    }

    #[test]
    fn a_missing_root_the_file_system_root_and_home_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/project");
        let err = project(&missing).check().unwrap_err().to_string();
        assert!(err.contains("does not create it"), "{err}");
        assert!(!missing.exists());
        let err = project(Path::new("/")).check().unwrap_err().to_string();
        assert!(err.contains("file system's root"), "{err}");
        if let Some(home) = env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
            let err = project(Path::new(&home)).check().unwrap_err().to_string();
            assert!(err.contains("home directory"), "{err}");
        }
        assert!(project(dir.path()).check().is_ok());
    }

    #[test]
    fn normalizing_never_rises_above_the_root_nor_loses_a_leading_parent() {
        for (raw, want) in [
            ("/../etc/passwd", "/etc/passwd"),
            ("/a/../../etc", "/etc"),
            ("/a/./b/../c", "/a/c"),
            ("../../x", "../../x"),
            ("a/../../x", "../x"),
            ("a/..", ""),
        ] {
            assert_eq!(normalize(Path::new(raw)), PathBuf::from(want), "{raw}");
        }
    }

    #[test]
    fn inside_and_outside() {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        let root = dir.path().to_str().unwrap();
        assert_eq!(
            p.locate(&format!("{root}/src/a.rs"), None),
            Located::Inside("src/a.rs".into())
        );
        assert_eq!(
            p.locate("src/./b.rs", Some(root)),
            Located::Inside("src/b.rs".into())
        );
        assert!(matches!(
            p.locate("../../etc/passwd", Some(root)),
            Located::Outside(_)
        ));
        assert!(matches!(p.locate("/etc/passwd", None), Located::Outside(_)));
        assert!(matches!(
            p.locate(&format!("{root}/src/../../x"), None),
            Located::Outside(_)
        ));
    }

    #[test]
    fn symlink_leading_out_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let p = project(dir.path());
        assert!(matches!(
            p.locate("link/x.rs", Some(dir.path().to_str().unwrap())),
            Located::Outside(_)
        ));
    }

    /// A link to a file not made yet is judged where the write would land, as any link is
    /// (deny mode's scope, the step's files): `src/notes.md -> ../docs/notes.md`.
    #[test]
    fn a_link_to_what_does_not_exist_yet_is_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::os::unix::fs::symlink("../docs/notes.md", dir.path().join("src/notes.md")).unwrap();
        let p = project(dir.path());
        let named = Located::Inside("src/notes.md".into());
        assert_eq!(
            p.real(&named),
            Some(Located::Inside("docs/notes.md".into()))
        );
        // A link in a loop cannot be followed: the path is judged by its text.
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        assert_eq!(p.real(&Located::Inside("loop".into())), None);
    }

    #[test]
    fn state_dir_symlinked_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        assert!(p.check().is_ok());
        std::os::unix::fs::symlink(outside.path(), dir.path().join(STATE_DIR)).unwrap();
        // The next event (a process of its own, which reads the state directory anew).
        let p = project(dir.path());
        assert!(p.check().unwrap_err().to_string().contains("leads outside"));
    }

    /// Issue 43: `CLAUDE_PROJECT_DIR=/link` for `/real` is one project, whichever spelling
    /// of the root a path starts with (and the other way round); a link into the project
    /// from elsewhere lands in it; a path beside the root is still outside.
    #[test]
    fn both_spellings_of_a_root_reached_through_a_link_are_the_project() {
        let real = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(real.path().join("src")).unwrap();
        let links = tempfile::tempdir().unwrap();
        let link = links.path().join("link");
        std::os::unix::fs::symlink(real.path(), &link).unwrap();
        for root in [real.path(), link.as_path()] {
            let p = project(root);
            for base in [real.path(), link.as_path()] {
                let at = |rel: &str| base.join(rel).to_str().unwrap().to_string();
                for rel in ["src/a.rs", "new/dir/b.rs", "c.rs"] {
                    assert_eq!(p.locate(&at(rel), None), Located::Inside(rel.into()));
                    let cwd = base.join("src");
                    assert_eq!(
                        p.locate("../src/x.rs", cwd.to_str()),
                        Located::Inside("src/x.rs".into())
                    );
                }
                assert!(matches!(
                    p.locate(&at("../beside"), None),
                    Located::Outside(_)
                ));
            }
            assert_eq!(p.relative(&link), Some(PathBuf::new()));
            assert_eq!(p.real_root(), real.path().canonicalize().unwrap());
        }
    }

    #[test]
    fn recorded_root_maps_onto_root() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = project(dir.path());
        p.recorded_root = Some(PathBuf::from("/home/dev/project"));
        assert_eq!(
            p.locate("/home/dev/project/src/main.rs", Some("/home/dev/project")),
            Located::Inside("src/main.rs".into())
        );
    }

    #[test]
    fn root_found_by_marker() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        // CLAUDE_PROJECT_DIR may be set in the environment running the tests.
        if env::var_os("CLAUDE_PROJECT_DIR").is_none() {
            let p = Project::resolve(Some(&dir.path().join("a/b")));
            assert_eq!(p.root, dir.path());
        }
    }
}
