//! Git hooks that checkpoint commits and pushes made outside Claude Code (docs/design.md,
//! Git hooks).
//!
//! `waymark git-hooks install` puts a small POSIX wrapper at `post-commit` (trigger
//! `git_commit`), `pre-push` (trigger `git_push`) and `prepare-commit-msg` (waymark's
//! trailers, with `commit_trailers` on: `git::trailers`) in the hooks directory git really
//! uses (`git rev-parse --git-path hooks`: honours `core.hooksPath`, and worktrees share
//! the main repository's hooks). The rules the wrapper keeps:
//!
//! - **Non-destructive.** A hook that was already there (a "foreign" hook) is renamed to
//!   `<name>.waymark-orig`, byte for byte and mode for mode, and the wrapper runs it first
//!   with the same arguments and the same stdin. `uninstall` renames it back, so what was
//!   there is restored exactly; where nothing was there, the wrapper is simply removed.
//! - **Marked.** The wrapper's second line is [`MARKER`], so install is idempotent and
//!   uninstall never removes a hook that is not waymark's.
//! - **Fail open.** The foreign hook's exit code is the wrapper's exit code (a foreign
//!   pre-push that refuses a push still refuses it); waymark's own part ignores every error,
//!   discards its output and never changes the exit code. A missing waymark binary skips it.
//! - **No recursion.** waymark's part runs with [`GUARD_ENV`]`=1`; a wrapper that finds it
//!   set skips waymark's part (but still chains), so waymark → git → hook → waymark cannot
//!   loop. Users can set it to silence the hooks for one command.
//!
//! This module builds the wrapper text (pure), classifies what is in the hooks directory,
//! and does the renames. The command line is in `cmd/git_hooks.rs`.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The line that marks a hook file as waymark's wrapper.
pub const MARKER: &str = "# waymark-git-hook";
/// Suffix of the foreign hook moved aside while the wrapper is installed.
pub const ORIG_SUFFIX: &str = ".waymark-orig";
/// Set (to `1`) for waymark's part of a wrapper; a wrapper that sees it skips that part.
pub const GUARD_ENV: &str = "WAYMARK_GIT_HOOK";

/// The git hooks waymark installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GitHook {
    #[serde(rename = "post-commit")]
    PostCommit,
    #[serde(rename = "pre-push")]
    PrePush,
    /// Adds waymark's trailers to the message (with `commit_trailers` on).
    #[serde(rename = "prepare-commit-msg")]
    PrepareCommitMsg,
}

impl GitHook {
    pub const ALL: [GitHook; 3] = [
        GitHook::PostCommit,
        GitHook::PrePush,
        GitHook::PrepareCommitMsg,
    ];

    /// The file name git looks for.
    pub fn name(self) -> &'static str {
        match self {
            GitHook::PostCommit => "post-commit",
            GitHook::PrePush => "pre-push",
            GitHook::PrepareCommitMsg => "prepare-commit-msg",
        }
    }

    /// What the wrapper does: the checkpoint trigger it records, or `commit_trailers`.
    pub fn trigger(self) -> &'static str {
        match self {
            GitHook::PostCommit => "git_commit",
            GitHook::PrePush => "git_push",
            GitHook::PrepareCommitMsg => "commit_trailers",
        }
    }

    /// The wrapper's first comment, after "Installed by `waymark git-hooks install`: ".
    fn purpose(self) -> String {
        match self {
            GitHook::PrepareCommitMsg => "adds waymark's trailers to the\n\
                # message (with `commit_trailers` on; a no-op otherwise)"
                .into(),
            _ => format!(
                "records a {} checkpoint in waymark's\n\
                 # current task (a no-op when there is none)",
                self.trigger()
            ),
        }
    }

    /// Where the foreign hook waits while the wrapper is installed.
    pub fn orig_name(self) -> String {
        format!("{}{ORIG_SUFFIX}", self.name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GitHookError {
    #[error("{0} is not inside a git repository")]
    NotARepo(PathBuf),
    #[error(
        "{hook}: both a hook that is not waymark's and {orig} exist in {dir}; move one of them aside and run again"
    )]
    Conflict {
        hook: &'static str,
        orig: String,
        dir: PathBuf,
    },
    #[error("{hook}: {path} is not a file; left as it is")]
    NotAFile { hook: &'static str, path: PathBuf },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The hooks directory git uses for the repository at `root` (absolute). Respects
/// `core.hooksPath` (relative values are relative to the work tree's top) and worktrees
/// (whose hooks are the main repository's).
pub fn hooks_dir(root: &Path) -> Result<PathBuf, GitHookError> {
    let not_a_repo = || GitHookError::NotARepo(root.to_path_buf());
    // `--path-format` needs git 2.31; older gits fail on it and answer relative to `root`.
    let absolute = ["rev-parse", "--path-format=absolute", "--git-path", "hooks"];
    if let Some(p) = crate::git::run(root, absolute) {
        return Ok(PathBuf::from(p));
    }
    let rel = crate::git::run(root, ["rev-parse", "--git-path", "hooks"]).ok_or_else(not_a_repo)?;
    Ok(crate::store::project::normalize(&root.join(rel)))
}

/// The wrapper for `hook`. `bin` is the absolute path of the waymark binary to call
/// (normally the one installing); when it is gone, the wrapper uses `waymark` on `PATH`,
/// and when that is missing too, it skips waymark's part silently.
pub fn wrapper_script(hook: GitHook, bin: Option<&Path>) -> String {
    let bin = bin
        .and_then(Path::to_str)
        .map(waymark_core::shell::quote)
        .unwrap_or_else(|| "''".into());
    let name = hook.name();
    let orig = hook.orig_name();
    let body = match hook {
        GitHook::PostCommit => POST_COMMIT_BODY,
        GitHook::PrePush => PRE_PUSH_BODY,
        GitHook::PrepareCommitMsg => PREPARE_COMMIT_MSG_BODY,
    };
    format!(
        "#!/bin/sh\n\
         {MARKER} {name} v1\n\
         # Installed by `waymark git-hooks install`: {purpose}. The hook that was here before waits beside\n\
         # this file as {orig}; it runs first, with the same arguments and stdin, and its\n\
         # exit code is this hook's. waymark's part never blocks git: its errors are ignored.\n\
         # `waymark git-hooks uninstall` puts back exactly what was here. {GUARD_ENV}=1 skips\n\
         # waymark's part (it is set while waymark runs, so waymark can never loop through git).\n\
         waymark_bin={bin}\n\
         orig=\"$(dirname \"$0\")/{orig}\"\n\
         {COMMON}{body}",
        purpose = hook.purpose(),
    )
}

/// Shell shared by the wrappers: `waymark_run ARGS…` (waymark's part: guarded, quiet,
/// never failing), `waymark_checkpoint TRIGGER DESCRIPTION`, and `waymark_foreign ARGS…`
/// (the hook moved aside, when there is one: its exit status, else 0).
///
/// The project is the work tree's top (git runs hooks there), or `$CLAUDE_PROJECT_DIR`
/// when that lies inside it (a project in a subdirectory of the repository). git exports
/// `GIT_DIR`/`GIT_INDEX_FILE` to hooks, sometimes relative; they are made absolute so that
/// waymark's `git -C <root>` reads the same repository.
const COMMON: &str = r#"
waymark_run() {
    [ -z "${WAYMARK_GIT_HOOK:-}" ] || return 0
    (
        bin=$waymark_bin
        if [ -z "$bin" ] || [ ! -x "$bin" ]; then
            bin=$(command -v waymark 2>/dev/null) || exit 0
        fi
        top=$(pwd -P) || exit 0
        root=$top
        if [ -n "${CLAUDE_PROJECT_DIR:-}" ]; then
            cpd=$(cd "$CLAUDE_PROJECT_DIR" 2>/dev/null && pwd -P)
            case "$cpd" in "$top" | "$top"/*) root=$cpd ;; esac
        fi
        if [ -n "${GIT_DIR:-}" ]; then
            case "$GIT_DIR" in /*) ;; *) GIT_DIR=$top/$GIT_DIR ;; esac
            GIT_WORK_TREE=${GIT_WORK_TREE:-$top}
            export GIT_DIR GIT_WORK_TREE
        fi
        case "${GIT_INDEX_FILE:-/}" in /*) ;; *) GIT_INDEX_FILE=$top/$GIT_INDEX_FILE; export GIT_INDEX_FILE ;; esac
        WAYMARK_GIT_HOOK=1
        export WAYMARK_GIT_HOOK
        "$bin" --root "$root" "$@" </dev/null >/dev/null 2>&1
    ) || true
    return 0
}
waymark_checkpoint() {
    waymark_run checkpoint --auto --trigger "$1" "$2"
}
waymark_foreign() {
    [ -x "$orig" ] || return 0
    "$orig" "$@"
}
"#;

/// prepare-commit-msg: the foreign hook first (its exit code decides the commit), then
/// waymark's trailers into the message file (`$1`, made absolute: waymark runs at the
/// project's root).
const PREPARE_COMMIT_MSG_BODY: &str = r#"
waymark_foreign "$@"
status=$?
if [ "$status" -eq 0 ] && [ -n "${1:-}" ]; then
    case "$1" in /*) msg=$1 ;; *) msg=$(pwd -P)/$1 ;; esac
    waymark_run git-hooks trailers "$msg"
fi
exit $status
"#;

/// post-commit: git ignores its exit code, but the foreign hook's is kept anyway. The
/// foreign hook runs first so a hook that amends is checkpointed at its final commit.
const POST_COMMIT_BODY: &str = r#"
waymark_foreign "$@"
status=$?
waymark_checkpoint git_commit "Commit $(git log -1 --format='%h: %s' 2>/dev/null)"
exit $status
"#;

/// pre-push: stdin (one `<local ref> <local sha> <remote ref> <remote sha>` line per ref)
/// is read once and fed to the foreign hook; its exit code decides the push. The
/// checkpoint is made only when the push goes ahead. Credentials in the URL are dropped.
const PRE_PUSH_BODY: &str = r#"
input=$(cat)
feed() { [ -z "$input" ] || printf '%s\n' "$input"; }
status=0
# Not piped into a missing hook: nothing would read the input.
if [ -x "$orig" ]; then
    feed | waymark_foreign "$@"
    status=$?
fi
if [ "$status" -eq 0 ]; then
    refs=$(feed | {
        n=0
        while read -r lref lsha rref rsha; do
            [ -n "$rref" ] || continue
            n=$((n + 1))
            if [ "$n" -gt 5 ]; then continue; fi
            case "$lref" in
                "(delete)") printf ' delete %s' "${rref#refs/heads/}" ;;
                *) printf ' %s -> %s' "${lref#refs/heads/}" "${rref#refs/heads/}" ;;
            esac
        done
        [ "$n" -le 5 ] || printf ' (+%s more)' $((n - 5))
    })
    url=$(printf '%s' "${2:-}" | sed 's#//[^/@]*@#//#')
    if [ -z "$url" ] || [ "$url" = "${1:-}" ]; then
        where=${1:-?}
    else
        where="${1:-?} ($url)"
    fi
    waymark_checkpoint git_push "Push to $where:$refs"
fi
exit $status
"#;

/// True when the file's head carries [`MARKER`] on a line of its own.
pub fn is_wrapper(head: &[u8]) -> bool {
    String::from_utf8_lossy(head)
        .lines()
        .take(5)
        .any(|l| l.starts_with(MARKER))
}

/// What occupies a hook's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Occupant {
    Absent,
    /// waymark's wrapper.
    Wrapper,
    /// Someone else's hook (file or symlink).
    Foreign,
    /// A directory or other non-file: never touched.
    Other,
}

/// The state of one hook: what is at its name and whether a moved-aside original waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HookStatus {
    pub hook: GitHook,
    pub occupant: Occupant,
    pub original: bool,
}

impl HookStatus {
    /// One word for scripts (`--json`'s `state`).
    pub fn state(&self) -> &'static str {
        match (self.occupant, self.original) {
            (Occupant::Wrapper, false) => "installed",
            (Occupant::Wrapper, true) => "chained",
            (Occupant::Foreign, false) => "foreign",
            (Occupant::Absent, false) => "absent",
            (Occupant::Absent, true) => "orphaned_original",
            (Occupant::Foreign, true) | (Occupant::Other, _) => "conflict",
        }
    }

    /// A sentence for people.
    pub fn describe(&self) -> String {
        let orig = self.hook.orig_name();
        match (self.occupant, self.original) {
            (Occupant::Wrapper, false) => "installed (waymark wrapper)".into(),
            (Occupant::Wrapper, true) => {
                format!("installed (waymark wrapper), chained to the previous hook {orig}")
            }
            (Occupant::Foreign, false) => "foreign hook only (waymark not installed)".into(),
            (Occupant::Absent, false) => "absent".into(),
            (Occupant::Absent, true) => format!(
                "absent, but {orig} is left over (`waymark git-hooks uninstall` restores it)"
            ),
            (Occupant::Foreign, true) => {
                format!("foreign hook, and a leftover {orig}: resolve by hand")
            }
            (Occupant::Other, _) => "not a file: left alone".into(),
        }
    }
}

/// Reads what is installed for `hook` in `dir`. Symlinks are not followed to decide.
pub fn status(dir: &Path, hook: GitHook) -> io::Result<HookStatus> {
    let path = dir.join(hook.name());
    let occupant = occupant(&path)?;
    let original = dir.join(hook.orig_name()).symlink_metadata().is_ok();
    Ok(HookStatus {
        hook,
        occupant,
        original,
    })
}

fn occupant(path: &Path) -> io::Result<Occupant> {
    let Some(meta) = crate::store::found(path.symlink_metadata())? else {
        return Ok(Occupant::Absent);
    };
    if meta.file_type().is_symlink() {
        return Ok(Occupant::Foreign);
    }
    if !meta.is_file() {
        return Ok(Occupant::Other);
    }
    let mut head = Vec::with_capacity(512);
    fs::File::open(path)?.take(4096).read_to_end(&mut head)?;
    Ok(if is_wrapper(&head) {
        Occupant::Wrapper
    } else {
        Occupant::Foreign
    })
}

/// What `install` did to one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Installed {
    /// No hook was there: the wrapper was written.
    Fresh,
    /// A foreign hook was moved to `<name>.waymark-orig` and is chained.
    ChainedForeign,
    /// The wrapper was already there, unchanged.
    AlreadyInstalled,
    /// The wrapper was there and was rewritten (e.g. the waymark binary moved).
    Updated,
}

/// Installs the wrapper for `hook` in `dir` (created if missing). Idempotent.
pub fn install(dir: &Path, hook: GitHook, bin: Option<&Path>) -> Result<Installed, GitHookError> {
    fs::create_dir_all(dir)?;
    let path = dir.join(hook.name());
    let orig = dir.join(hook.orig_name());
    let script = wrapper_script(hook, bin);
    let st = status(dir, hook)?;
    match (st.occupant, st.original) {
        (Occupant::Wrapper, _) => {
            if fs::read(&path)? == script.as_bytes() {
                return Ok(Installed::AlreadyInstalled);
            }
            write_executable(&path, script.as_bytes())?;
            Ok(Installed::Updated)
        }
        (Occupant::Absent, _) => {
            write_executable(&path, script.as_bytes())?;
            Ok(Installed::Fresh)
        }
        (Occupant::Foreign, false) => {
            // Rename keeps the bytes, the mode and a symlink as a symlink.
            fs::rename(&path, &orig)?;
            if let Err(e) = write_executable(&path, script.as_bytes()) {
                let _ = fs::rename(&orig, &path);
                return Err(e.into());
            }
            Ok(Installed::ChainedForeign)
        }
        (Occupant::Foreign, true) => Err(GitHookError::Conflict {
            hook: hook.name(),
            orig: hook.orig_name(),
            dir: dir.to_path_buf(),
        }),
        (Occupant::Other, _) => Err(GitHookError::NotAFile {
            hook: hook.name(),
            path,
        }),
    }
}

/// What `uninstall` did to one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Uninstalled {
    /// The wrapper was removed; nothing had been there before it.
    Removed,
    /// The previous hook is back in place.
    Restored,
    /// Nothing of waymark's was there.
    NotInstalled,
    /// A hook that is not waymark's is there: left as it is (and any leftover original).
    LeftForeign,
}

/// Removes the wrapper for `hook` and puts back what it replaced.
pub fn uninstall(dir: &Path, hook: GitHook) -> Result<Uninstalled, GitHookError> {
    let path = dir.join(hook.name());
    let orig = dir.join(hook.orig_name());
    let Some(st) = crate::store::found(status(dir, hook))? else {
        return Ok(Uninstalled::NotInstalled);
    };
    match (st.occupant, st.original) {
        // Renaming over the wrapper restores the original atomically.
        (Occupant::Wrapper | Occupant::Absent, true) => {
            fs::rename(&orig, &path)?;
            Ok(Uninstalled::Restored)
        }
        (Occupant::Wrapper, false) => {
            fs::remove_file(&path)?;
            Ok(Uninstalled::Removed)
        }
        (Occupant::Absent, false) => Ok(Uninstalled::NotInstalled),
        (Occupant::Foreign | Occupant::Other, _) => Ok(Uninstalled::LeftForeign),
    }
}

/// Writes an executable (0755) file through a temp file and a rename, so git never runs
/// a half-written hook.
fn write_executable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.waymark.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(0o755))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_is_marked_and_quotes_the_binary() {
        let s = wrapper_script(GitHook::PostCommit, Some(Path::new("/opt/it's/waymark")));
        assert!(s.starts_with("#!/bin/sh\n# waymark-git-hook post-commit"));
        assert!(is_wrapper(s.as_bytes()));
        assert!(s.contains(r"waymark_bin='/opt/it'\''s/waymark'"));
        assert!(s.contains("post-commit.waymark-orig"));
        assert!(s.contains("--trigger \"$1\""));
        let p = wrapper_script(GitHook::PrePush, None);
        assert!(p.contains("waymark_bin=''") && p.contains("git_push"));
        assert!(!is_wrapper(b"#!/bin/sh\necho # waymark-git-hook\n"));
    }

    #[test]
    fn install_chains_and_uninstall_restores_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let foreign = d.join("pre-push");
        fs::write(&foreign, b"#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&foreign, fs::Permissions::from_mode(0o750)).unwrap();
        assert_eq!(status(d, GitHook::PrePush).unwrap().state(), "foreign");
        let bin = Path::new("/usr/bin/waymark");
        assert_eq!(
            install(d, GitHook::PrePush, Some(bin)).unwrap(),
            Installed::ChainedForeign
        );
        assert_eq!(status(d, GitHook::PrePush).unwrap().state(), "chained");
        assert_eq!(
            install(d, GitHook::PrePush, Some(bin)).unwrap(),
            Installed::AlreadyInstalled
        );
        assert_eq!(
            install(d, GitHook::PrePush, None).unwrap(),
            Installed::Updated
        );
        assert_eq!(
            uninstall(d, GitHook::PrePush).unwrap(),
            Uninstalled::Restored
        );
        assert_eq!(fs::read(&foreign).unwrap(), b"#!/bin/sh\nexit 0\n");
        let mode = fs::metadata(&foreign).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        assert!(!d.join("pre-push.waymark-orig").exists());
        assert_eq!(
            uninstall(d, GitHook::PrePush).unwrap(),
            Uninstalled::LeftForeign
        );
    }

    #[test]
    fn fresh_install_is_removed_and_conflicts_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("hooks");
        assert_eq!(
            install(&d, GitHook::PostCommit, None).unwrap(),
            Installed::Fresh
        );
        let mode = fs::metadata(d.join("post-commit"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            uninstall(&d, GitHook::PostCommit).unwrap(),
            Uninstalled::Removed
        );
        assert!(!d.join("post-commit").exists());
        assert_eq!(
            uninstall(&d, GitHook::PostCommit).unwrap(),
            Uninstalled::NotInstalled
        );
        fs::write(d.join("post-commit"), "mine").unwrap();
        fs::write(d.join("post-commit.waymark-orig"), "old").unwrap();
        assert!(matches!(
            install(&d, GitHook::PostCommit, None),
            Err(GitHookError::Conflict { .. })
        ));
        assert_eq!(fs::read(d.join("post-commit")).unwrap(), b"mine");
        assert_eq!(status(&d, GitHook::PostCommit).unwrap().state(), "conflict");
    }

    #[test]
    fn symlinked_hook_is_moved_as_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("real.sh"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink("real.sh", d.join("post-commit")).unwrap();
        install(d, GitHook::PostCommit, None).unwrap();
        assert!(
            d.join("post-commit.waymark-orig")
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink()
        );
        uninstall(d, GitHook::PostCommit).unwrap();
        assert_eq!(
            fs::read_link(d.join("post-commit")).unwrap(),
            Path::new("real.sh")
        );
    }

    #[test]
    fn not_a_repo() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            hooks_dir(dir.path()),
            Err(GitHookError::NotARepo(_))
        ));
    }
}
