//! `waymark hook <Event>`: the entry point Claude Code runs. It never fails the tool call:
//! every path exits 0, panics are caught, a watchdog ends the process at the deadline,
//! errors go to `.orchestration/waymark.log` and one line on stderr, and stdout carries
//! only valid hook JSON, only when there is something to say.
//!
//! `waymark hook --agent codex <Event>` is Codex CLI's entry ([`run_codex`]): the same
//! steps, with its input adapted first (`claude::codex`) and its shell calls' verdicts
//! read from the rollout (`handlers::verdicts`); Claude Code's path ([`run`]) does none of it.

use crate::cmd::ExitCode;
use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude::codex::{self, Agent};
use crate::claude::event::{self, Event, Parsed};
use crate::handlers::Handled;
use crate::runtime::context::Ctx;
use crate::store::log::{self, Level};
use crate::store::project::Project;
use waymark_redact::Clean;

/// Inputs larger than this are not processed (a 50 MB Write is still fine).
pub const MAX_INPUT: u64 = 64 * 1024 * 1024;

pub fn run(name: Option<&str>, root: Option<PathBuf>) -> ExitCode {
    let fallback = || Project::from_arg(root.clone(), None);
    let context = name.unwrap_or("hook");
    let Some(bytes) = begin(context, &fallback) else {
        return ExitCode::SUCCESS;
    };
    let lossy = String::from_utf8_lossy(&bytes);
    let text = decoded(&lossy);
    let parsed = event::parse(name, text.as_bytes());
    let Ok(parsed) = parsed.inspect_err(|e| report(&fallback(), context, &e.to_string())) else {
        return ExitCode::SUCCESS;
    };
    let Some(mut ctx) = open(root, &parsed) else {
        return ExitCode::SUCCESS;
    };
    let Some(claim) = crate::handlers::once::claim(&ctx, parsed.event.name(), &bytes) else {
        // Another registration of waymark's got the same event: it handles it.
        return ExitCode::SUCCESS;
    };
    crate::handlers::pending::apply(&mut ctx);
    let handled = run_event(&ctx, &parsed.event);
    claim.done(&ctx);
    if handled.deferred {
        keep(&ctx, parsed.event.name(), &text, Agent::Claude);
    }
    answer(handled.out.to_json(parsed.event.name()));
    ExitCode::SUCCESS
}

/// The input's text (decoded lossily from its bytes) as JSON can parse it. What a client
/// cut or mangled is replaced rather than rejected: one stray byte in a tool's output, or
/// half an emoji's escape (`\ud83d`), must not cost the whole event.
fn decoded(lossy: &str) -> std::borrow::Cow<'_, str> {
    waymark_core::text::lone_surrogates_replaced(lossy)
}

/// Prints the hook's answer for the agent, if any: its JSON, redacted, on one line.
fn answer(json: Option<Value>) {
    if let Some(json) = json {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(Clean::json(&json).with_newline().as_bytes());
        let _ = stdout.flush();
    }
}

/// How long reading the input may take: the hook's default deadline. The deadline proper
/// is armed once the input names the project (its configuration may set another); a
/// client whose stdin never closes must not hold the tool call meanwhile.
const READ_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// The event's input from stdin, up to [`MAX_INPUT`], within [`READ_DEADLINE`]; the error
/// says why there is none.
fn read_input() -> Result<Vec<u8>, String> {
    use std::os::fd::FromRawFd;
    let until = std::time::Instant::now() + READ_DEADLINE;
    // SAFETY: fd 0 is this process's stdin, open for its whole life; ManuallyDrop keeps
    // this File from closing it.
    let mut stdin = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(0) });
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if !readable_before(until)? {
            return Err(format!(
                "stdin was not closed within {READ_DEADLINE:?}: the event is not read"
            ));
        }
        match stdin.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read stdin: {e}")),
        }
        if bytes.len() as u64 > MAX_INPUT {
            return Err(format!("input over {} MiB ignored", MAX_INPUT >> 20));
        }
    }
}

/// Whether stdin has something to read (or its end) before `until`.
fn readable_before(until: std::time::Instant) -> Result<bool, String> {
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        let mut fd = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length of the call.
        let n = unsafe { libc::poll(&mut fd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        match n {
            0 => return Ok(false),
            n if n > 0 => return Ok(true),
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => {
                return Err(format!(
                    "cannot wait for stdin: {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
}

/// The context for the event's project, with the configuration's errors and the input's
/// mismatch logged and the deadline armed; `None` for a project waymark must not write into.
fn open(root: Option<PathBuf>, parsed: &Parsed) -> Option<Ctx> {
    let project = Project::from_arg(root, parsed.event.common.cwd.as_deref().map(Path::new));
    let mut ctx = Ctx::new(project);
    ctx.capture = crate::runtime::context::CaptureMode::Detached;
    if let Err(e) = ctx.project.check() {
        // Not even the log may be written: say it on stderr only.
        log::say(&format!("{}: {e}", parsed.event.name()));
        return None;
    }
    for e in &ctx.config_errors {
        ctx.log(Level::Warn, "config", &e.to_string());
    }
    if let Some(note) = &parsed.mismatch {
        ctx.log(Level::Warn, parsed.event.name(), note);
    }
    crate::store::deadline::arm(
        &ctx.project.state_dir(),
        parsed.event.name(),
        ctx.config.hook_deadline,
    );
    Some(ctx)
}

/// Keeps an event a busy lock deferred, for the next event to apply (`handlers::pending`).
fn keep(ctx: &Ctx, event: &str, text: &str, agent: Agent) {
    let input: Value = serde_json::from_str(text).unwrap_or_default();
    if let Err(e) = crate::handlers::pending::keep(ctx, event, &input, agent) {
        report(
            &ctx.project,
            event,
            &format!("the event could not be kept for later: {e}"),
        );
    }
}

/// The start of every event, whichever agent sent it: no panic message on stderr, a
/// closed stdout made harmless, the input read; `None` when there is none (the reason
/// reported in the project `fallback` gives).
fn begin(context: &str, fallback: &dyn Fn() -> Project) -> Option<Vec<u8>> {
    panic::set_hook(Box::new(|_| {}));
    super::finish_on_closed_stdout();
    match read_input() {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            report(&fallback(), context, &e);
            None
        }
    }
}

/// `waymark hook --agent codex <Event>`: [`run`] for Codex CLI's input.
pub fn run_codex(name: Option<&str>, root: Option<PathBuf>) -> ExitCode {
    let fallback = || Project::from_arg(root.clone(), None);
    let context = name.unwrap_or("hook");
    let Some(bytes) = begin(context, &fallback) else {
        return ExitCode::SUCCESS;
    };
    let lossy = String::from_utf8_lossy(&bytes);
    let text = decoded(&lossy);
    let parsed = codex_parse(name, &text).inspect_err(|e| report(&fallback(), context, e));
    let Ok((name, value, parsed)) = parsed else {
        return ExitCode::SUCCESS;
    };
    let Some(mut ctx) = open(root, &parsed) else {
        return ExitCode::SUCCESS;
    };
    let Some(claim) = crate::handlers::once::claim(&ctx, &name, &bytes) else {
        return ExitCode::SUCCESS;
    };
    crate::handlers::pending::apply(&mut ctx);
    let earlier = panic::catch_unwind(AssertUnwindSafe(|| {
        crate::handlers::verdicts::settle(&mut ctx, &parsed.event)
    }))
    .unwrap_or_default();
    let mut handled = codex_event(&ctx, &name, &value, &parsed.event);
    claim.done(&ctx);
    if handled.deferred {
        keep(&ctx, &name, &value.to_string(), Agent::Codex);
    }
    handled.out.context.splice(0..0, earlier);
    answer(codex::answer(&handled.out, &name));
    ExitCode::SUCCESS
}

/// A Codex input read and adapted: the event's name for the handlers, the input in Claude
/// Code's shape, and the event parsed from it (its agent set).
fn codex_parse(name: Option<&str>, text: &str) -> Result<(String, Value, Parsed), String> {
    let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if !value.is_object() {
        return Err(event::ParseError::NotObject.to_string());
    }
    let name = event::name_of(name, &value).map_err(|e| e.to_string())?;
    let name = codex::adapt(&name, &mut value);
    let mut parsed = event::from_value(Some(&name), value.clone()).map_err(|e| e.to_string())?;
    parsed.event.agent = Agent::Codex;
    Ok((name, value, parsed))
}

/// Handles one Codex event. A shell call's PostToolUse is held (`handlers::verdicts`):
/// Codex writes its exit code to the rollout only after the hook returns (its source, and
/// the e2e runs), so the next event applies it with its verdict.
fn codex_event(ctx: &Ctx, name: &str, value: &Value, event: &Event) -> Handled {
    if !codex::awaits_exit_code(name, value) {
        return run_event(ctx, event);
    }
    if let Err(e) = crate::handlers::verdicts::hold(ctx, event, value) {
        report(
            &ctx.project,
            name,
            &format!("the call could not be held: {e}"),
        );
    }
    Handled::default()
}

/// Dispatches one event with panics caught (a panic is reported, and gives nothing to
/// say and nothing to keep). Shared by `waymark hook` and `waymark replay`.
pub fn run_event(ctx: &Ctx, event: &Event) -> Handled {
    panic::catch_unwind(AssertUnwindSafe(|| crate::handlers::dispatch(ctx, event))).unwrap_or_else(
        |payload| {
            let msg = waymark_core::text::panic_message(payload.as_ref());
            report(
                &ctx.project,
                event.name(),
                &format!("internal error (panic): {msg}"),
            );
            Handled::default()
        },
    )
}

/// Logs an error and prints the one stderr line; only the line when the project is one
/// waymark must not write into (the log would create it).
fn report(project: &Project, context: &str, message: &str) {
    match project.check() {
        Ok(()) => log::report(&project.state_dir(), context, message),
        Err(why) => log::say(&format!("{context}: {message} ({why})")),
    }
}
