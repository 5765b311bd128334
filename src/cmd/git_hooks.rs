//! `waymark git-hooks install|uninstall|status`: the post-commit, pre-push and
//! prepare-commit-msg wrappers of `git::hooks`, in the hooks directory git uses for the
//! project's repository. `trailers FILE` (hidden) is what the prepare-commit-msg wrapper
//! calls.
//!
//! Exit codes: 0 done; 1 a hook could not be handled (a conflict, an I/O error: the other
//! hook is still handled); 2 not a git repository.

use crate::cmd::{ExitCode, Outcome};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::git::hooks::{self, GitHook, GitHookError, Installed, Uninstalled};
use crate::git::trailers;
use crate::runtime::context::Ctx;
use crate::store::project::Project;
use waymark_core::task::Hook;
use waymark_core::trace::anchor::{self, Anchor};

#[derive(Debug, clap::Subcommand)]
pub enum GitHooksCmd {
    /// Install the post-commit, pre-push and prepare-commit-msg wrappers (existing hooks are
    /// kept and chained).
    Install,
    /// Remove the wrappers and put back exactly what was there before.
    Uninstall,
    /// Show what is installed for each hook, and the hooks directory.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// (the prepare-commit-msg wrapper's) Add waymark's trailers to a commit message file.
    #[command(hide = true)]
    Trailers { file: PathBuf },
}

pub fn run(root: Option<PathBuf>, cmd: GitHooksCmd) -> Outcome {
    if let GitHooksCmd::Trailers { file } = &cmd {
        return Ok(add_trailers(root, file));
    }
    let project = Project::from_arg(root, None);
    let dir = hooks::hooks_dir(&project.root).map_err(super::usage)?;
    match cmd {
        GitHooksCmd::Install => Ok(each(&dir, install)),
        GitHooksCmd::Uninstall => Ok(each(&dir, uninstall)),
        GitHooksCmd::Status { json } => status(&dir, json),
        GitHooksCmd::Trailers { .. } => unreachable!("answered above"),
    }
}

fn install(dir: &Path, hook: GitHook) -> Result<String, GitHookError> {
    // The wrapper calls the binary that installed it; if that moves, `waymark` on PATH.
    let bin = std::env::current_exe().ok();
    let what = match hooks::install(dir, hook, bin.as_deref())? {
        Installed::Fresh => "installed".to_string(),
        Installed::ChainedForeign => format!(
            "installed; the existing hook moved to {} and runs first",
            hook.orig_name()
        ),
        Installed::AlreadyInstalled => "already installed".to_string(),
        Installed::Updated => "updated".to_string(),
    };
    Ok(format!("{} ({}): {what}", hook.name(), hook.trigger()))
}

fn uninstall(dir: &Path, hook: GitHook) -> Result<String, GitHookError> {
    let what = match hooks::uninstall(dir, hook)? {
        Uninstalled::Removed => "removed".to_string(),
        Uninstalled::Restored => "removed; the previous hook is back".to_string(),
        Uninstalled::NotInstalled => "not installed".to_string(),
        Uninstalled::LeftForeign => "not waymark's: left as it is".to_string(),
    };
    Ok(format!("{}: {what}", hook.name()))
}

/// Names the hooks directory, then runs `f` for every hook, printing its line; one failure
/// does not stop the other hook.
fn each(dir: &Path, f: fn(&Path, GitHook) -> Result<String, GitHookError>) -> ExitCode {
    println!("Hooks directory: {}", dir.display());
    let mut failed = false;
    for hook in GitHook::ALL {
        match f(dir, hook) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed = true;
                eprintln!("waymark: {}: {e}", hook.name());
            }
        }
    }
    ExitCode::checked(!failed)
}

fn status(dir: &Path, as_json: bool) -> Outcome {
    let mut rows = Vec::new();
    for hook in GitHook::ALL {
        let s = hooks::status(dir, hook);
        rows.push(s.map_err(|e| super::failed(format!("{}: {e}", hook.name())))?);
    }
    if as_json {
        let hooks: Vec<_> = rows
            .iter()
            .map(|s| {
                json!({
                    "name": s.hook.name(),
                    "trigger": s.hook.trigger(),
                    "state": s.state(),
                    "original": s.original.then(|| s.hook.orig_name()),
                })
            })
            .collect();
        super::print_json(&json!({"hooks_dir": dir, "hooks": hooks}));
        return Ok(ExitCode::SUCCESS);
    }
    println!("Hooks directory: {}", dir.display());
    for s in rows {
        println!("{}: {}", s.hook.name(), s.describe());
    }
    Ok(ExitCode::SUCCESS)
}

/// With `commit_trailers` on and a task in progress, waymark's trailers into the message
/// file (`git::trailers`). Always exit 0: the wrapper ignores it anyway, and a commit is
/// never refused for want of a trailer.
fn add_trailers(root: Option<PathBuf>, file: &Path) -> ExitCode {
    let ctx = super::ctx_unchecked(root);
    if !ctx.config.commit_trailers {
        return ExitCode::SUCCESS;
    }
    let hook = match crate::task::current::load(&ctx) {
        Ok(Some(h)) if !h.state.is_terminal() => h,
        _ => return ExitCode::SUCCESS,
    };
    let list = for_commit(&ctx, &hook);
    if !trailers::add(&ctx.project.root, file, &list) {
        eprintln!("waymark: git-hooks trailers: git interpret-trailers failed");
    }
    ExitCode::SUCCESS
}

/// The trailers for a commit made now in `hook`'s task, as (key, value).
fn for_commit(ctx: &Ctx, hook: &Hook) -> Vec<(&'static str, String)> {
    let mut out = vec![(trailers::TASK, hook.task_id.clone())];
    if let Some(id) = receipt_of_index(ctx, hook) {
        out.push((trailers::RECEIPT, id));
    }
    let links = anchor::links(&ledger(ctx));
    if let Some(last) = links.last() {
        out.push((trailers::TRACE, Anchor::value(links.len() as u64, last)));
    }
    out
}

/// The ledger the commit anchors: as the commit will hold it (the index's) when it is
/// tracked, so that checking the commit out later gives a ledger that has the anchored
/// line; else the file as it is.
fn ledger(ctx: &Ctx) -> Vec<u8> {
    super::trace::ledger_at(ctx, "").unwrap_or_else(|| {
        std::fs::read(crate::trace::trace_path(&ctx.project)).unwrap_or_default()
    })
}

/// The newest passing receipt of the task, signed validly, whose tree is the index's.
fn receipt_of_index(ctx: &Ctx, hook: &Hook) -> Option<String> {
    let receipts = crate::task::store::receipts(&ctx.project, hook).ok()?;
    if !receipts
        .iter()
        .any(|r| r.exit_code == 0 && !r.tree.is_empty())
    {
        return None;
    }
    let tree = crate::git::project_tree::of_index(&ctx.project.root, &ctx.config.agent_md)?;
    let signer = crate::receipt::existing_signer(&ctx.config).ok()?;
    receipts
        .iter()
        .rev()
        .find(|r| r.exit_code == 0 && r.tree == tree && signer.verify(r).is_ok())
        .map(|r| r.receipt_id.clone())
}
