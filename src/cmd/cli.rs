//! The command line: clap definitions and the dispatch to `cmd::*`.

use crate::cmd::ExitCode;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::claude::codex::Agent;
use crate::cmd;

/// Crash recovery, signed validation receipts and intent governance for Claude Code.
#[derive(Debug, Parser)]
#[command(name = "waymark", version, about, long_about = None)]
pub struct Cli {
    /// The project root (default: $CLAUDE_PROJECT_DIR, else the nearest ancestor holding
    /// .git or .orchestration).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

// The flag of the commands that print JSON on request (no doc comment: the variant's says
// what the command does).
#[derive(Debug, clap::Args)]
pub struct Json {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The hook entry point: the event JSON on stdin. Always exits 0.
    Hook {
        /// The event name (SessionStart, PostToolUse, …); `hook_event_name` is the fallback.
        event: Option<String>,
        /// The agent that runs the hook: `claude` (the default) or `codex` (Codex CLI).
        #[arg(long, value_name = "AGENT", default_value = "claude")]
        agent: String,
    },
    /// Feed recorded hook events (one JSON object a line) through, in order.
    Replay {
        /// A .jsonl file, or `-` for stdin.
        file: String,
    },
    /// State, step, attempt, steps, checkpoints, receipts.
    Status(Json),
    /// Make a checkpoint now.
    Checkpoint {
        /// What was accomplished.
        description: String,
        /// The trigger to record (git hooks use git_commit / git_push).
        #[arg(long, default_value = "manual")]
        trigger: String,
        /// Quiet, and a no-op without a running task (for git hooks).
        #[arg(long)]
        auto: bool,
    },
    /// List checkpoints in order with their triggers.
    Checkpoints(Json),
    /// Start, finish, fail or abandon the task.
    #[command(subcommand)]
    Task(cmd::task::TaskCmd),
    /// Add, start, finish or fail a step.
    #[command(subcommand)]
    Step(cmd::task::StepCmd),
    /// Add steps to the plan (those it does not hold yet) and print it, numbered.
    Plan {
        /// The steps, in order.
        steps: Vec<String>,
    },
    /// Run a validation command and sign a receipt of it.
    Validate(cmd::validate::ValidateArgs),
    /// List receipts with their signature status.
    Receipts(cmd::receipts::ReceiptsArgs),
    /// The task's timeline: sessions, steps, checkpoints, receipts, crashes, in time order.
    Log(cmd::log::LogArgs),
    /// The task's timeline as one self-contained HTML page, with its verifications.
    Report(cmd::report::ReportArgs),
    /// Check every receipt, the trace, and (--range) that each commit has a passing receipt
    /// of its tree: the proof for CI.
    Verify(cmd::verify::VerifyArgs),
    /// Export the public keys that check receipts without the master key.
    #[command(subcommand)]
    Key(cmd::key::KeyCmd),
    /// Summarize the Agent Trace ledger, or check its chain (--verify).
    Trace(cmd::trace::TraceArgs),
    /// What changed since a checkpoint (new and deleted files included).
    Diff(cmd::diff::DiffArgs),
    /// Put files back as they were at a checkpoint (undoable).
    Rewind(cmd::rewind::RewindArgs),
    /// Run crash detection now and print the resume brief.
    Recover(Json),
    /// Rebuild HOOK.md from hook.json.
    Regenerate,
    /// Remove finished tasks past their retention.
    Cleanup(cmd::cleanup::CleanupArgs),
    /// Install, remove or inspect the git hooks that checkpoint commits and pushes.
    #[command(name = "git-hooks", subcommand)]
    GitHooks(cmd::git_hooks::GitHooksCmd),
    /// List intents or choose the active one.
    #[command(subcommand)]
    Intent(cmd::intent::IntentCmd),
    /// Add waymark's hooks to .claude/settings.json, or with --agent codex to
    /// .codex/hooks.json (or remove them).
    Init {
        /// Take out waymark's hooks instead (and the file, if nothing else is in it).
        #[arg(long)]
        remove: bool,
        /// Write to the user's file (~/.claude/settings.json, ~/.codex/hooks.json) instead
        /// of the project's.
        #[arg(long)]
        user: bool,
        /// The agent to register waymark with: `claude` (Claude Code, the default) or
        /// `codex` (Codex CLI).
        #[arg(long, value_name = "AGENT", default_value = "claude")]
        agent: String,
    },
    /// Show the effective configuration, or set a value.
    #[command(subcommand)]
    Config(cmd::config::ConfigCmd),
    /// Check the installation, configuration, key and hook registration.
    Doctor,
}

/// Runs the command line `args` (the program's name first) and returns the exit status,
/// stdout flushed.
pub fn run(args: Vec<std::ffi::OsString>) -> ExitCode {
    let code = dispatch(args).unwrap_or_else(|code| code);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

fn dispatch(args: Vec<std::ffi::OsString>) -> cmd::Outcome {
    // `waymark hook <Event>` is what Claude Code runs on every tool call: it skips building
    // the whole command-line parser (a seventh of the event's work). Any other form, flags
    // included, goes through clap as usual.
    if let Some(event) = plain_hook_call(args.get(1..).unwrap_or_default()) {
        return Ok(cmd::hook::run(event, None));
    }
    // Codex CLI's registered form, `waymark hook --agent codex <Event>`, skips clap too.
    if let Some(event) = codex_hook_call(args.get(1..).unwrap_or_default()) {
        return Ok(cmd::hook::run_codex(Some(event), None));
    }
    let cli = Cli::parse_from(args);
    let root = cli.root;
    match cli.command {
        Command::Hook { event, agent } => Ok(match agent_arg(&agent)? {
            Agent::Claude => cmd::hook::run(event.as_deref(), root),
            Agent::Codex => cmd::hook::run_codex(event.as_deref(), root),
        }),
        Command::Replay { file } => cmd::replay::run(&file, root),
        Command::Status(Json { json }) => cmd::status::run(root, json),
        Command::Checkpoint {
            description,
            trigger,
            auto,
        } => cmd::checkpoint::create(root, &description, &trigger, auto),
        Command::Checkpoints(Json { json }) => cmd::checkpoint::list(root, json),
        Command::Task(c) => cmd::task::task(root, c),
        Command::Step(c) => cmd::task::step(root, c),
        Command::Plan { steps } => cmd::task::plan(root, steps),
        Command::Validate(args) => Ok(cmd::validate::run(root, args)),
        Command::Receipts(args) => cmd::receipts::run(root, args),
        Command::Log(args) => cmd::log::run(root, args),
        Command::Report(args) => cmd::report::run(root, args),
        Command::Trace(args) => cmd::trace::run(root, args),
        Command::Verify(args) => cmd::verify::run(root, args),
        Command::Key(c) => cmd::key::run(root, c),
        Command::Diff(args) => cmd::diff::run(root, args),
        Command::Rewind(args) => cmd::rewind::run(root, args),
        Command::Recover(Json { json }) => cmd::recover::run(root, json),
        Command::Regenerate => cmd::recover::regenerate(root),
        Command::Cleanup(args) => cmd::cleanup::run(root, args),
        Command::GitHooks(c) => cmd::git_hooks::run(root, c),
        Command::Intent(c) => cmd::intent::run(root, c),
        Command::Init {
            remove,
            user,
            agent,
        } => cmd::init::run(root, remove, user, agent_arg(&agent)?),
        Command::Config(c) => cmd::config::run(root, c),
        Command::Doctor => cmd::doctor::run(root),
    }
}

/// The agent `--agent` names, or the usage error.
fn agent_arg(name: &str) -> Result<Agent, ExitCode> {
    Agent::parse(name).ok_or_else(|| {
        cmd::usage(format!(
            "unknown agent `{name}`: waymark knows `claude` (Claude Code) and `codex` (Codex CLI)"
        ))
    })
}

/// `Some(event)` when the arguments are exactly `hook --agent codex <Event>`.
fn codex_hook_call(args: &[std::ffi::OsString]) -> Option<&str> {
    match args {
        [hook, flag, agent, event] if hook == "hook" && flag == "--agent" && agent == "codex" => {
            let event = event.to_str()?;
            (!event.is_empty() && !event.starts_with('-')).then_some(event)
        }
        _ => None,
    }
}

/// `Some(event)` when the arguments are exactly `hook` or `hook <Event>` with an event name
/// that clap would take as the positional argument as it is.
fn plain_hook_call(args: &[std::ffi::OsString]) -> Option<Option<&str>> {
    match args {
        [hook] if hook == "hook" => Some(None),
        [hook, event] if hook == "hook" => {
            let event = event.to_str()?;
            (!event.is_empty() && !event.starts_with('-')).then_some(Some(event))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(args: &[&str]) -> Option<Option<String>> {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        plain_hook_call(&args).map(|e| e.map(str::to_string))
    }

    #[test]
    fn the_fast_path_takes_only_what_clap_would_read_the_same_way() {
        assert_eq!(
            plain(&["hook", "PostToolUse"]),
            Some(Some("PostToolUse".into()))
        );
        assert_eq!(plain(&["hook"]), Some(None));
        for other in [
            &["hook", "--help"][..],
            &["hook", "-h"],
            &["hook", "--root", "/x", "Stop"],
            &["--root", "/x", "hook", "Stop"],
            &["status"],
            &[],
        ] {
            assert_eq!(plain(other), None, "{other:?}");
        }
        // And clap agrees on what the fast path takes.
        let cli = Cli::try_parse_from(["waymark", "hook", "PostToolUse"]).unwrap();
        assert!(matches!(cli.command, Command::Hook { event: Some(e), .. } if e == "PostToolUse"));
        let cli = Cli::try_parse_from(["waymark", "hook"]).unwrap();
        assert!(matches!(cli.command, Command::Hook { event: None, .. }));
        // Codex CLI's form: its own fast path, which clap reads the same way.
        let args: Vec<std::ffi::OsString> = ["hook", "--agent", "codex", "Stop"]
            .iter()
            .map(Into::into)
            .collect();
        assert_eq!(codex_hook_call(&args), Some("Stop"));
        assert_eq!(plain_hook_call(&args), None);
        let cli = Cli::try_parse_from(["waymark", "hook", "--agent", "codex", "Stop"]).unwrap();
        assert!(
            matches!(cli.command, Command::Hook { event: Some(e), agent } if e == "Stop" && agent == "codex")
        );
    }
}
