//! Where a write into the project's files really lands (issue 43): the one check every
//! path waymark writes on the project's word passes, whoever gave the path (a snapshot, a
//! rewind's journal, the `agent_md` of a project's `waymark.json`, `waymark init`'s own
//! files).
//!
//! A path's text is not where it lands: `hk/post-checkout` is `.git/hooks/post-checkout`
//! when a committed `hk` is a link to `.git/hooks`. So the text is judged first
//! (`waymark_core::rewind::refusal`: no `.git` component in any case, no `..`, nothing
//! absolute, nothing in `.orchestration/`), then the directories it lies in are resolved,
//! and the place they reach is judged by the same rule, relative to the real root: it must
//! be inside the project, outside `.git` and outside waymark's state directory (wherever
//! that really is). A link to what does not exist yet is followed by hand to where it
//! would be; one that loops is refused: where it would land cannot be told. waymark's own state files are not written through here: they are the
//! state directory's, which [`Project::check`] holds inside the project and outside `.git`.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use waymark_core::rewind::{is_dot_git, refusal};

use super::project::{Located, Project, STATE_DIR};

/// What a write does with the path's last component when it is a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Replaces it (a rename over it: a rewind's file, `init`'s files): the link itself
    /// is what changes, so only the directories are resolved.
    Replaced,
    /// Writes where it leads (the lessons file, `AGENT.md -> CLAUDE.md`): resolved too.
    Followed,
}

impl Project {
    /// Where a write to root-relative `rel` really lands, as an absolute path to write, or
    /// why waymark must not write it (a sentence naming it): outside the project, inside
    /// `.git` or inside waymark's state directory, by its text or where its directories
    /// lead.
    pub fn landing(&self, rel: &Path, last: Last) -> Result<PathBuf, String> {
        // `./AGENT.md` is `AGENT.md`; any other `.` or `..` is refused with the text.
        let rel: PathBuf = rel
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect();
        let shown = rel.display();
        if let Some(why) = refusal(rel.as_os_str().as_bytes(), STATE_DIR) {
            return Err(format!("`{shown}` is {why}"));
        }
        let name = rel
            .file_name()
            .ok_or_else(|| format!("`{shown}` names no file"))?;
        let dirs = rel.parent().unwrap_or(Path::new(""));
        let judged = match last {
            Last::Replaced => dirs,
            Last::Followed => rel.as_path(),
        };
        let state = self.state_dir();
        let state_linked = self.state_linked();
        // Nearly always: no link on the way, and the text was the whole story.
        if !state_linked && !self.links_on(judged) {
            return Ok(self.root.join(&rel));
        }
        let real = match last {
            Last::Replaced => self.resolved(dirs).map(|d| d.join(name)),
            Last::Followed => self.resolved(&rel),
        };
        let real = real.map_err(|why| format!("`{shown}` {why}"))?;
        // A link out of the project (even to a file not there yet) leads outside.
        let Ok(real_rel) = real.strip_prefix(self.real_root()) else {
            let to = real.display();
            return Err(format!("`{shown}` leads outside the project (to {to})"));
        };
        if let Some(why) = refusal(real_rel.as_os_str().as_bytes(), STATE_DIR) {
            let to = real_rel.display();
            return Err(format!("`{shown}` lands at `{to}`, {why}"));
        }
        if state_linked && state.canonicalize().is_ok_and(|s| real.starts_with(s)) {
            return Err(format!(
                "`{shown}` lands inside waymark's state directory ({STATE_DIR} is a link to where it leads)"
            ));
        }
        Ok(real)
    }

    /// Why the state directory must not be written into, if it must not: where it really
    /// lands (it may be a link) is inside `.git`, or cannot be told (a link that leads
    /// nowhere or loops). One leading out of the project is [`Project::check`]'s.
    pub(super) fn state_lands(&self) -> Result<(), String> {
        if !self.state_linked() {
            return Ok(());
        }
        let state = self.state_dir();
        let real = state
            .canonicalize()
            .map_err(|e| format!("is a link that leads nowhere or in a loop ({e})"))?;
        let Ok(rel) = real.strip_prefix(self.real_root()) else {
            return Ok(());
        };
        let mut names = rel.components().map(|c| c.as_os_str().as_bytes());
        match names.any(is_dot_git) {
            true => Err(format!("lands at `{}`, inside `.git`", rel.display())),
            false => Ok(()),
        }
    }

    /// Whether a component of root-relative `rel` that exists is a symbolic link.
    pub fn links_on(&self, rel: &Path) -> bool {
        self.first_link(rel).is_some()
    }

    /// Root-relative `rel` with every link on its way followed: the longest part of it that
    /// exists resolved, the rest (directories to be made) as it is; `Err`: why it cannot be.
    fn resolved(&self, rel: &Path) -> Result<PathBuf, String> {
        super::project::real_path(&self.root.join(rel))
    }

    /// Refuses a root waymark must not write into: one that does not exist (a root is
    /// never created: a mistyped `CLAUDE_PROJECT_DIR` must not grow a tree), the file
    /// system's root, and the home directory itself (a session started in `~` is not a
    /// project); and a project whose state would land outside the root or inside `.git`,
    /// `.orchestration` being a symlink that leads there (rule 3). The lessons file is not
    /// judged here but where it is written (`governance::lessons`): a repository that
    /// links it into `.git` loses its lessons, not waymark (deny mode, the trace, recovery
    /// go on).
    pub fn check(&self) -> anyhow::Result<()> {
        let root = self.root.display();
        // The same directory is the same (device, inode): two stats, where resolving
        // each path (`canonicalize`) reads every component's link, on every event.
        use std::os::unix::fs::MetadataExt;
        let id = |m: std::fs::Metadata| (m.dev(), m.ino());
        let dir = |p: &Path| std::fs::metadata(p).ok().filter(|m| m.is_dir()).map(id);
        let Some(here) = dir(&self.root) else {
            return Err(anyhow::anyhow!(
                "the project root {root} is not a directory: waymark does not create it"
            ));
        };
        if dir(Path::new("/")) == Some(here) {
            return Err(anyhow::anyhow!(
                "the project root {root} is the file system's root: not a project"
            ));
        }
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
        if home.and_then(|h| dir(Path::new(&h))) == Some(here) {
            return Err(anyhow::anyhow!(
                "the project root {root} is the home directory, not a project: start Claude Code in a project (or set CLAUDE_PROJECT_DIR)"
            ));
        }
        // A state directory that is no link leads nowhere but where it is.
        if self.state_linked()
            && let Located::Outside(target) = self.locate(STATE_DIR, None)
        {
            return Err(anyhow::anyhow!(
                "{STATE_DIR} leads outside the project ({target}): waymark will not write through it"
            ));
        }
        self.state_lands()
            .map_err(|why| anyhow::anyhow!("{STATE_DIR} {why}: waymark will not write through it"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// A project with `.git/hooks`, `.orchestration/` and `src/`, in a fresh directory.
    fn project() -> (tempfile::TempDir, Project) {
        let (dir, p) = super::super::project::temp_project();
        for d in [".git/hooks", STATE_DIR, "src/deep/er"] {
            fs::create_dir_all(p.root.join(d)).unwrap();
        }
        (dir, p)
    }

    fn refused(p: &Project, rel: &str, last: Last) -> bool {
        p.landing(Path::new(rel), last).is_err()
    }

    #[test]
    fn a_path_with_no_link_lands_where_its_text_says() {
        let (_d, p) = project();
        for rel in [
            "a.txt",
            "src/deep/er/x.rs",
            "new/dir/f",
            "./AGENT.md",
            ".gitignore",
        ] {
            let at = p.landing(Path::new(rel), Last::Replaced).unwrap();
            assert_eq!(at, p.root.join(rel.trim_start_matches("./")), "{rel}");
        }
        for rel in [
            ".git/config",
            ".GIT/hooks/x",
            "a/../.git/x",
            "/etc/x",
            "../x",
        ] {
            assert!(refused(&p, rel, Last::Replaced), "{rel}");
            assert!(refused(&p, rel, Last::Followed), "{rel}");
        }
        assert!(refused(&p, ".orchestration/hook.json", Last::Replaced));
    }

    /// Links at every depth, into `.git`, into the state directory, out of the project,
    /// dangling into `.git` or out, and in a loop: each refused where a file would be written through it.
    #[test]
    fn a_directory_linked_into_git_the_state_or_out_is_refused_at_any_depth() {
        let (_d, p) = project();
        let outside = tempfile::tempdir().unwrap();
        let at = |rel: &str| p.root.join(rel);
        let links = [
            ("hk", p.root.join(".git/hooks")),
            ("src/g", p.root.join(".git")),
            ("src/deep/er/g", PathBuf::from("../../../.git")),
            ("src/o", p.root.join(STATE_DIR)),
            ("src/deep/out", outside.path().to_path_buf()),
            ("gone", PathBuf::from(".git/no/such/dir")),
            ("src/gone", PathBuf::from("/nonexistent-waymark/dir")),
            ("loop", PathBuf::from("loop")),
            ("src/ping", PathBuf::from("pong")),
            ("src/pong", PathBuf::from("ping")),
        ];
        for (link, target) in &links {
            symlink(target, at(link)).unwrap();
        }
        for (link, _) in &links {
            for rel in [format!("{link}/x"), format!("{link}/sub/y")] {
                assert!(refused(&p, &rel, Last::Replaced), "{rel}");
                assert!(refused(&p, &rel, Last::Followed), "{rel}");
            }
        }
        // A link inside the project to a directory of the project is fine, also one to a
        // directory not made yet: it is judged where it will be.
        symlink("no/such/dir", at("later")).unwrap();
        let real = p.landing(Path::new("later/x"), Last::Replaced).unwrap();
        assert!(real.ends_with("no/such/dir/x"), "{}", real.display());
        symlink("src/deep", at("d")).unwrap();
        let real = p.landing(Path::new("d/er/x.rs"), Last::Replaced).unwrap();
        assert!(real.ends_with("src/deep/er/x.rs"), "{}", real.display());
        // The last component: replaced, the link itself is written; followed, it is judged.
        symlink(".git/config", at("cfg")).unwrap();
        assert!(p.landing(Path::new("cfg"), Last::Replaced).is_ok());
        assert!(refused(&p, "cfg", Last::Followed));
        let why = p.landing(Path::new("hk/post-checkout"), Last::Replaced);
        assert!(why.unwrap_err().contains(".git/hooks/post-checkout"));
    }

    #[test]
    fn a_state_directory_linked_elsewhere_is_still_waymarks() {
        let (_d, p) = project();
        fs::remove_dir(p.state_dir()).unwrap();
        fs::create_dir_all(p.root.join("notes/state")).unwrap();
        symlink("notes/state", p.state_dir()).unwrap();
        assert!(p.state_lands().is_ok());
        assert!(refused(&p, "notes/state/hook.json", Last::Replaced));
        assert!(p.landing(Path::new("notes/x.md"), Last::Replaced).is_ok());
        fs::remove_file(p.state_dir()).unwrap();
        symlink(".git", p.state_dir()).unwrap();
        assert!(p.state_lands().unwrap_err().contains("inside `.git`"));
        assert!(p.check().is_err());
    }

    #[test]
    fn the_root_reached_through_a_link_is_judged_where_it_is() {
        let (d, _) = project();
        let links = tempfile::tempdir().unwrap();
        let link = links.path().join("link");
        symlink(d.path(), &link).unwrap();
        let p = Project::at(link.clone());
        assert!(p.landing(Path::new("src/a.rs"), Last::Replaced).is_ok());
        symlink(d.path().join(".git"), d.path().join("g")).unwrap();
        assert!(refused(&p, "g/x", Last::Replaced));
    }

    proptest::proptest! {
        /// Any path made of plain names, `.git` spelled in any case and links into `.git`,
        /// the state directory or out: it is written only when where it lands is plain.
        #[test]
        fn what_lands_in_git_or_the_state_is_never_allowed(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", ".git", ".GiT", "hk", "st", "out", "d", ".orchestration"]),
                1..5,
            ),
            followed in proptest::bool::ANY,
        ) {
            let (_d, p) = project();
            let outside = tempfile::tempdir().unwrap();
            symlink(p.root.join(".git/hooks"), p.root.join("hk")).unwrap();
            symlink(p.state_dir(), p.root.join("st")).unwrap();
            symlink(outside.path(), p.root.join("out")).unwrap();
            symlink("src", p.root.join("d")).unwrap();
            let rel = parts.join("/");
            let last = if followed { Last::Followed } else { Last::Replaced };
            let judged: &[&str] = if followed { &parts } else { &parts[..parts.len() - 1] };
            let bad = parts.first() == Some(&".orchestration")
                || parts.iter().any(|c| c.eq_ignore_ascii_case(".git"))
                || judged.first().is_some_and(|c| ["hk", "st", "out"].contains(c));
            let got = p.landing(Path::new(&rel), last);
            proptest::prop_assert_eq!(got.is_err(), bad, "{} {:?}", rel, got);
        }
    }
}
