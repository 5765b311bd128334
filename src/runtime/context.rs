//! What every piece of work needs to know: the project, the configuration, the time.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::config::{Config, ConfigError};
use crate::store::log::{self, Level};
use crate::store::project::Project;

/// A checkpoint's capture to take: which checkpoint, and of which files
/// (`task::capture`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureRequest {
    pub task_id: String,
    pub checkpoint_id: String,
    /// Root-relative paths.
    pub files: Vec<String>,
    /// How many of the task's newest checkpoints keep their captures (`max_checkpoints`).
    pub keep: usize,
    /// The lessons file, left out of the snapshot like the state directory.
    pub lessons: String,
    /// Files the snapshot holds even though git ignores them (root-relative, git's bytes):
    /// those a rewind is about to overwrite or remove, which its undo (this snapshot) must
    /// bring back.
    pub force: Vec<Vec<u8>>,
}

/// How this invocation takes captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMode {
    /// Now, in this process (commands, replay, tests of the library).
    Inline,
    /// By a forked copy of this process, so that the hook returns at once.
    Detached,
}

pub struct Ctx {
    /// How checkpoint captures are taken (detached for hooks, inline for commands).
    pub capture: CaptureMode,
    /// Captures asked for during a change, taken once hook.json is saved and unlocked.
    pub captures: std::cell::RefCell<Vec<CaptureRequest>>,
    pub project: Project,
    pub config: Config,
    /// Problems found in the configuration (already logged for hooks).
    pub config_errors: Vec<ConfigError>,
    pub now: DateTime<Utc>,
    /// Set while an event is applied after its own hook (a kept event, a held Codex call):
    /// this process is not the one its session's agent started, so nothing of this
    /// process (its Claude Code ancestor) is recorded for that session.
    pub late: bool,
}

impl Ctx {
    pub fn new(project: Project) -> Ctx {
        let loaded = crate::config::load(&project.root);
        Ctx {
            capture: CaptureMode::Inline,
            captures: Default::default(),
            project,
            config: loaded.config,
            config_errors: loaded.errors,
            now: Utc::now(),
            late: false,
        }
    }

    /// True once most of a hook's deadline is spent (never for a command, which has
    /// none): optional work (post-hooks, snapshots of many files) is skipped so the
    /// essential state is written in time.
    pub fn short_of_time(&self) -> bool {
        crate::store::deadline::left().is_some_and(|left| left <= Duration::from_millis(300))
    }

    pub fn log(&self, level: Level, context: &str, message: &str) {
        log::write(&self.project.state_dir(), level, context, message);
    }
}
