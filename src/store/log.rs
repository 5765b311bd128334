//! waymark's own error log: `.orchestration/waymark.log`, bounded and rotated.
//!
//! A hook must never fail the tool call, so problems are written here (and summarized in
//! one line on stderr by the caller) instead of being returned to Claude Code.

use std::fs;
use std::io::Write;
use std::path::Path;

use chrono::{DateTime, Utc};

use waymark_redact::Clean;

/// When the log passes this size it is moved to `waymark.log.1` (replacing the older one).
pub const MAX_LOG_BYTES: u64 = 512 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warn,
    Info,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
        }
    }
}

/// The log's file name, in the state directory.
pub const LOG_FILE: &str = "waymark.log";

/// One log line, newline included: time, level, context, the message on one line.
pub fn line(level: Level, context: &str, message: &str, at: DateTime<Utc>) -> String {
    let at = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    // Cut by `truncate`, which redacts first: a secret cut in two is no longer found.
    let one_line = waymark_core::text::truncate(&message.replace('\n', " ⏎ "), 4000);
    format!("{at} {} [{context}] {one_line}\n", level.as_str())
}

/// Appends one line to `<state_dir>/waymark.log`, redacted (an error can quote the input
/// that caused it). Never fails: a log that cannot be written is given up on (the caller
/// still prints its stderr line).
pub fn write(state_dir: &Path, level: Level, context: &str, message: &str) {
    let path = state_dir.join(LOG_FILE);
    let _ = (|| -> std::io::Result<()> {
        crate::store::make_dir(state_dir)?;
        crate::store::refuse_symlink(&path)?;
        if fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            fs::rename(&path, state_dir.join("waymark.log.1"))?;
        }
        let line = line(level, context, message, chrono::Utc::now());
        crate::store::append_text(&path, &Clean::text(&line))
    })();
}

/// One line on stderr, `waymark: <message>`, redacted: what a hook tells the user.
pub fn say(message: &str) {
    let line = Clean::text(&format!("waymark: {message}\n"));
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// An error logged in full and told in one stderr line that points to the log.
pub fn report(state_dir: &Path, context: &str, message: &str) {
    write(state_dir, Level::Error, context, message);
    say(&format!(
        "{context}: {message} (details in .orchestration/waymark.log)"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("waymark.log"),
            vec![b'x'; MAX_LOG_BYTES as usize + 1],
        )
        .unwrap();
        write(dir.path(), Level::Error, "Stop", "boom\nsecond line");
        let log = fs::read_to_string(dir.path().join("waymark.log")).unwrap();
        assert!(log.contains("ERROR [Stop] boom ⏎ second line"));
        assert!(dir.path().join("waymark.log.1").exists());
    }

    #[test]
    fn unwritable_dir_is_silent() {
        write(
            Path::new("/proc/waymark-cannot-write"),
            Level::Error,
            "x",
            "y",
        );
    }
}
