//! The command line: [`cli`] parses it (clap), then one file per subcommand turns the
//! arguments into calls on the domain and prints.
//!
//! The rule of this room: no domain logic here, and no reaching into `handlers` (only
//! `hook` and `replay` hand events to `handlers::dispatch`, and `hook` applies and keeps
//! the events a busy lock deferred through `handlers::pending`, and Codex's shell calls
//! waiting for their exit code through `handlers::verdicts`); the current task is read
//! and changed through `task::current`, as the hooks do.

/// Everything a command prints to the terminal goes through [`terminal`] (these shadow
/// std's macros in every command's file): what it prints holds stored strings (step
/// names, prompts, commands, file names) that must never act on the terminal.
macro_rules! println {
    () => {
        $crate::cmd::terminal("\n")
    };
    ($($arg:tt)*) => {
        $crate::cmd::terminal(&format!("{}\n", format_args!($($arg)*)))
    };
}

macro_rules! print {
    ($($arg:tt)*) => {
        $crate::cmd::terminal(&format!($($arg)*))
    };
}

macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::cmd::terminal_err(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod checkpoint;
pub mod cleanup;
pub mod cli;
pub mod config;
pub mod diff;
pub mod doctor;
pub mod git_hooks;
pub mod hook;
pub mod init;
pub mod intent;
pub mod key;
pub mod log;
pub mod receipts;
pub mod recover;
pub mod replay;
pub mod report;
pub mod rewind;
pub mod status;
pub mod task;
pub mod trace;
pub mod validate;
pub mod verify;

use std::path::PathBuf;

use crate::runtime::context::Ctx;
use crate::store::project::Project;

/// How a command ends: its exit status. (std's `ExitCode` keeps its number to itself, and
/// `main` must return one.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct ExitCode(pub u8);

impl ExitCode {
    pub const SUCCESS: ExitCode = ExitCode(0);

    /// Success when what was checked `holds`, else [`CHECK_FAILED`].
    pub fn checked(holds: bool) -> ExitCode {
        ExitCode(if holds { 0 } else { CHECK_FAILED })
    }
}

/// What a command returns: its exit status, `Err` when it ended early (the error already
/// said), so that `?` ends it.
pub type Outcome = Result<ExitCode, ExitCode>;

/// Exit code: the thing checked is wrong (a receipt failed, doctor found a problem).
pub const CHECK_FAILED: u8 = 1;
/// Exit code: the command could not do what was asked (usage, missing task, bad value).
pub const USAGE: u8 = 2;

/// The context for a CLI command: `--root`, else the project around the current directory.
/// Outside any project (no `--root`, `CLAUDE_PROJECT_DIR`, `.git` or `.orchestration`)
/// the command says so and ends (exit 2) rather than start a task in a random directory;
/// a project whose state paths lead outside the root is refused (exit 1). A checkpoint's
/// snapshot in flight is waited for first: the command sees it, and what the command
/// changes (a validation's own command, a rewind) comes after it.
pub fn ctx(root: Option<PathBuf>) -> Ctx {
    let ctx = ctx_anywhere(root);
    if !ctx.project.found {
        eprintln!(
            "waymark: not in a project: no .git or .orchestration in {} or above it, and CLAUDE_PROJECT_DIR is not set; run this in a project or pass --root DIR",
            ctx.project.root.display()
        );
        std::process::exit(USAGE.into());
    }
    crate::task::capture::settle(&ctx.project);
    ctx
}

/// [`ctx`] for a command that makes a project of the directory it runs in (`init`): a
/// root waymark must not write into is refused (exit 1).
pub fn ctx_anywhere(root: Option<PathBuf>) -> Ctx {
    let ctx = ctx_unchecked(root);
    if let Err(e) = ctx.project.check() {
        eprintln!("waymark: {e}");
        std::process::exit(CHECK_FAILED.into());
    }
    ctx
}

/// The context with no check at all, for `doctor`, which reports what it finds.
pub fn ctx_unchecked(root: Option<PathBuf>) -> Ctx {
    let ctx = Ctx::new(Project::from_arg(root, None));
    for e in &ctx.config_errors {
        eprintln!("waymark: config: {e}");
    }
    ctx
}

/// The current task for a read-only command; a state file that cannot be read is an
/// error (exit 1) for the caller to return.
pub fn load_hook(ctx: &Ctx) -> Result<Option<waymark_core::task::Hook>, ExitCode> {
    crate::task::current::load(ctx).map_err(failed)
}

/// A write to a closed stdout becomes an error the caller ignores instead of ending the
/// process (SIGPIPE): for work that must finish whoever stops reading, a hook event or a
/// validation. Other commands keep SIGPIPE's default and end quietly (`status | head -1`).
pub fn finish_on_closed_stdout() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Writes `text` to stdout, inert ([`waymark_core::text::for_terminal`]): the one way a
/// command's words reach the terminal. A closed stdout is not an error here: `status |
/// head -1` ends quietly by SIGPIPE, a hook or a validation goes on
/// ([`finish_on_closed_stdout`]).
pub fn terminal(text: &str) {
    inert(std::io::stdout().lock(), text);
}

/// [`terminal`] for stderr.
pub fn terminal_err(text: &str) {
    inert(std::io::stderr().lock(), text);
}

fn inert(mut out: impl std::io::Write, text: &str) {
    let _ = out.write_all(waymark_core::text::for_terminal(text).as_bytes());
}

/// Prints an error (redacted: it may quote what was typed) and returns the exit code.
pub fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    let text = format!("waymark: {message}");
    eprintln!("{}", waymark_redact::Clean::text(&text).as_str());
    ExitCode(code)
}

/// [`fail`] with [`CHECK_FAILED`].
pub fn failed(message: impl std::fmt::Display) -> ExitCode {
    fail(CHECK_FAILED, message)
}

/// [`fail`] with [`USAGE`].
pub fn usage(message: impl std::fmt::Display) -> ExitCode {
    fail(USAGE, message)
}

/// Prints a command's answer, redacted, and a newline: what `waymark plan`, `task` and
/// `step` say (the plan, a step's name, a task id) goes through here, so what they print
/// is what they store (through the same redactor), whichever field it came from.
pub fn say(text: &str) {
    println!("{}", waymark_redact::Clean::text(text).as_str());
}

/// Pretty JSON to stdout (the `--json` outputs). serde_json escapes the C0 controls in
/// strings; the other characters that act ([`waymark_core::text::acts`]: DEL, C1, bidi
/// overrides) are written as `\uXXXX` escapes, so that the JSON reads the same and acts
/// on no terminal. Its own line ends stay.
pub fn print_json(value: &impl serde::Serialize) {
    let json = serde_json::to_string_pretty(value).expect("serializable");
    let mut shown = String::with_capacity(json.len() + 1);
    for c in json.chars() {
        match c {
            '\n' => shown.push(c),
            c if waymark_core::text::acts(c) => shown.push_str(&format!("\\u{:04x}", c as u32)),
            c => shown.push(c),
        }
    }
    shown.push('\n');
    terminal(&shown);
}
