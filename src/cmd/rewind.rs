//! `waymark rewind <checkpoint> [--files PATH…] [--dry-run]`, `waymark rewind --continue`
//! and `waymark rewind --abort`: put the project's files back as a checkpoint's snapshot
//! had them, after saving the current state as a `pre_rewind` checkpoint (the undo);
//! finish or give up one cut short. docs/rewind.md.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use serde_json::json;

use crate::cmd::{ExitCode, Outcome};
use crate::git::in_the_way;
use crate::git::rewind::{self, Journal};
use crate::git::snapshot::{self, Change, Reason};
use crate::git::tree_path::TreePath;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::task::{CheckpointTrigger, Rewound, current};
use crate::trace::{self, Waymark, kind};

#[derive(Debug, clap::Args)]
pub struct RewindArgs {
    /// The checkpoint to go back to (its id, or a unique start of it; `waymark checkpoints`
    /// lists them).
    #[arg(required_unless_present_any = ["resume", "abort"])]
    pub checkpoint: Option<String>,
    /// Only these files (all of the project's by default).
    #[arg(long, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Say what would change, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Finish a rewind that was cut short (a crash or a kill during it).
    #[arg(long = "continue", conflicts_with_all = ["checkpoint", "files", "dry_run"])]
    pub resume: bool,
    /// Give up a rewind that was cut short: the files stay as they are, and its undo puts
    /// them back as they were before it.
    #[arg(long, conflicts_with_all = ["checkpoint", "files", "dry_run", "resume"])]
    pub abort: bool,
}

pub fn run(root: Option<PathBuf>, args: RewindArgs) -> Outcome {
    let ctx = super::ctx(root);
    if args.abort {
        return abort(&ctx);
    }
    if let Some(done) = pending(&ctx, args.resume) {
        return done;
    }
    rewindable(&ctx.project.root)?;
    let wanted = args.checkpoint.unwrap_or_default();
    let found = super::diff::snapshot_of(&ctx, &wanted)?;
    let paths = project_paths(&ctx, &args.files)?;
    let plan = changes_since(&ctx, &found.tree, &paths).map_err(super::failed)?;
    if plan.changes.is_empty() {
        println!(
            "Nothing to rewind: the files are as checkpoint {} left them.",
            found.checkpoint
        );
        return Ok(ExitCode::SUCCESS);
    }
    print_plan(&plan, args.dry_run);
    if args.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    let undo =
        save_undo(&ctx, &found.checkpoint, &plan.now, &plan.forced).map_err(super::failed)?;
    let journal = Journal {
        task_id: found.task,
        checkpoint_id: found.checkpoint,
        snapshot: found.name,
        undo,
        started_at: ctx.now,
        changes: plan.changes,
    };
    rewind::begin(&ctx.project, &journal)
        .map_err(|e| super::failed(format!("cannot write the journal: {e}")))?;
    carry_out(&ctx, &journal)
}

/// Refused when no rewind can be made here now: not in git, or git busy with a merge or
/// the like.
fn rewindable(root: &std::path::Path) -> Result<(), ExitCode> {
    if crate::git::head::find_git_dir(root).is_none() {
        return Err(super::usage(
            "not a git repository: rewind restores from the snapshots git keeps, and checkpoints here record file hashes only",
        ));
    }
    match snapshot::busy(root) {
        Some(why) => Err(super::failed(format!("not rewinding: {why}"))),
        None => Ok(()),
    }
}

/// A rewind cut short comes first: `--continue` finishes it, any other rewind is refused
/// until it is. `None` when the command goes on to rewind.
fn pending(ctx: &Ctx, resume: bool) -> Option<Outcome> {
    match rewind::pending(&ctx.project) {
        Err(e) => Some(Err(super::failed(e))),
        Ok(Some(journal)) if resume => Some(finish_cut_short(ctx, &journal)),
        Ok(Some(journal)) => Some(Err(super::failed(format!(
            "a rewind to {} was cut short: run `waymark rewind --continue` to finish it first (or `waymark rewind --abort` to give it up)",
            journal.checkpoint_id
        )))),
        Ok(None) if resume => {
            println!("No rewind to finish.");
            Some(Ok(ExitCode::SUCCESS))
        }
        Ok(None) => None,
    }
}

/// `--continue`: the plan is checked again (what came in the way since), then applied.
fn finish_cut_short(ctx: &Ctx, journal: &Journal) -> Outcome {
    if let Some(why) = in_the_way::survey(&ctx.project.root, &journal.changes).refusal() {
        let why = format!("{why}; or give the rewind up with `waymark rewind --abort`");
        return Err(super::failed(why));
    }
    println!(
        "Finishing the rewind to {} begun {}.",
        journal.checkpoint_id,
        waymark_core::text::stamp(journal.started_at)
    );
    carry_out(ctx, journal)
}

/// `--abort`: the journal of a rewind cut short goes (even a damaged one), so that no plan
/// that cannot be applied holds every later rewind back. The files stay as they are, each
/// as it was or as the checkpoint had it; the rewind's undo puts them back as they were.
fn abort(ctx: &Ctx) -> Outcome {
    let journal = rewind::pending(&ctx.project);
    if matches!(journal, Ok(None)) {
        println!("No rewind to give up.");
        return Ok(ExitCode::SUCCESS);
    }
    rewind::finish(&ctx.project)
        .map_err(|e| super::failed(format!("cannot remove the journal: {e}")))?;
    match journal {
        Ok(Some(j)) => {
            println!(
                "Gave up the rewind to {}: the files it had put back stay as the checkpoint had them, the others as they were.",
                j.checkpoint_id
            );
            print_undo(j.undo.as_deref());
        }
        _ => println!(
            "Removed the damaged journal; the files stay as they are (the newest pre_rewind checkpoint in `waymark checkpoints` holds them as they were before)."
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_undo(undo: Option<&str>) {
    if let Some(undo) = undo {
        println!("Undo with `waymark rewind {undo}`.");
    }
}

/// The `--files` as root-relative paths, git's bytes (a name need not be UTF-8), taken
/// against the current directory when relative; one outside the project is refused. A
/// path through a link made since the checkpoint (`src/deep` → `/elsewhere`) is the
/// project's: the plan removes the link and puts the directory back, touching nothing
/// where it led: the link is one of the paths.
fn project_paths(ctx: &Ctx, files: &[PathBuf]) -> Result<Vec<Vec<u8>>, ExitCode> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ctx.project.root.clone());
    let mut paths = Vec::new();
    for f in files {
        let abs = crate::store::project::normalize(&cwd.join(f));
        // Either spelling of a root reached through a link (the current directory is
        // always the real one).
        match ctx.project.relative(&abs) {
            Some(rel) => {
                let rel = rel.as_os_str().as_bytes().to_vec();
                paths.extend(in_the_way::not_a_directory(&ctx.project.root, &rel));
                paths.push(rel);
            }
            _ => {
                let why = format!("{} is outside the project", abs.display());
                return Err(super::usage(why));
            }
        }
    }
    Ok(paths)
}

/// A rewind's plan: the changes, the tree of the work tree now (what the undo holds), and
/// the ignored files it holds because the rewind overwrites or removes them.
struct Plan {
    changes: Vec<Change>,
    now: String,
    forced: Vec<TreePath>,
}

/// What differs between the checkpoint's `tree` and the work tree now (restricted to
/// `paths` when given), checked for what is in the way: staged under the capture lock, so
/// that no checkpoint's snapshot is taken meanwhile. Ignored files the rewind would
/// overwrite or remove are added to the tree of now, and so to the plan and the undo: a
/// rewind never destroys what its undo cannot bring back.
fn changes_since(ctx: &Ctx, tree: &str, paths: &[Vec<u8>]) -> Result<Plan, String> {
    let (root, lessons) = (&ctx.project.root, &ctx.config.agent_md);
    let _exclusive = crate::task::capture::exclusive(&ctx.project)
        .map_err(|e| format!("a checkpoint's snapshot is still being taken: {e}"))?;
    let index = crate::task::capture::index_path(&ctx.project);
    let mut now = snapshot::tree(root, &index, lessons).ok_or("cannot snapshot the work tree")?;
    let mut spec = paths.to_vec();
    let mut changes = snapshot::changes(root, tree, &now.tree, &spec, lessons)?;
    // A file a snapshot leaves out (it holds a secret, or is large and untracked) is in
    // no snapshot: a rewind of it could not be undone.
    let mut left: Vec<(Vec<u8>, &str)> = now
        .withheld
        .iter()
        .map(|w| (w.name.clone(), why_left(w.reason)))
        .collect();
    left_alone(&mut changes, &left);
    let survey = in_the_way::survey(root, &changes);
    if let Some(why) = survey.refusal() {
        return Err(why);
    }
    // Nor can an ignored file that holds a secret be kept for the undo.
    let (kept_out, forced): (Vec<TreePath>, Vec<TreePath>) = survey
        .unsaved
        .into_iter()
        .partition(|p| snapshot::holds_secret(root, p.as_bytes()));
    left.extend(
        kept_out
            .iter()
            .map(|p| (p.as_bytes().to_vec(), why_left(Reason::Secret))),
    );
    for (path, why) in &left {
        let shown = crate::git::tree_path::Shown(path);
        println!("  left as it is: {shown} ({why})");
    }
    left_alone(&mut changes, &left);
    if !forced.is_empty() {
        now = now
            .with_forced(root, &forced)
            .ok_or("cannot snapshot the work tree")?;
        if !spec.is_empty() {
            spec.extend(forced.iter().map(|p| p.as_bytes().to_vec()));
        }
        changes = snapshot::changes(root, tree, &now.tree, &spec, lessons)?;
        left_alone(&mut changes, &left);
        if let Some(unread) = in_the_way::survey(root, &changes).unsaved.first() {
            return Err(format!(
                "not rewinding, no file was changed: {unread} would be overwritten, and git cannot read it to save it for the undo: make it readable or move it, then rewind again"
            ));
        }
    }
    Ok(Plan {
        changes,
        now: now.tree,
        forced,
    })
}

/// Why a file is in no snapshot, as a rewind says it.
fn why_left(reason: Reason) -> &'static str {
    match reason {
        Reason::Secret => "it holds a secret, so no snapshot has it",
        Reason::Large => "untracked and too large for a snapshot",
        Reason::Nested => "a git repository of its own, whose files no snapshot has",
    }
}

/// Takes the files no snapshot has (`left`) out of the plan.
fn left_alone(changes: &mut Vec<Change>, left: &[(Vec<u8>, &str)]) {
    changes.retain(|c| !left.iter().any(|(p, _)| p.as_slice() == c.path.as_bytes()));
}

/// Each file and what the rewind does to it; an ignored file it replaces is said to be
/// kept in the undo, so that nobody wonders where it went.
fn print_plan(plan: &Plan, dry_run: bool) {
    if dry_run {
        let files = waymark_core::text::count(plan.changes.len() as u64, "file");
        println!("Would rewind {files}:");
    }
    for c in &plan.changes {
        let verb = match c.status {
            'A' => "delete  ",
            'D' => "recreate",
            _ => "restore ",
        };
        let kept = plan
            .forced
            .contains(&c.path)
            .then_some("  (ignored: the undo keeps it)");
        println!("  {verb} {}{}", c.path, kept.unwrap_or_default());
    }
}

/// Saves the files as they are now, so the rewind can be undone: a `pre_rewind` checkpoint
/// of the current task (its capture takes the snapshot), or, with no task, a bare snapshot.
fn save_undo(
    ctx: &Ctx,
    target: &str,
    now_tree: &str,
    forced: &[TreePath],
) -> Result<Option<String>, String> {
    let description = format!("Before rewind to {target}");
    let made = current::update(ctx, |slot, _| {
        slot.as_mut().map(|h| {
            let trigger = CheckpointTrigger::PreRewind;
            let id = current::make_checkpoint(ctx, h, trigger, &description, None).id;
            // Its snapshot holds the ignored files the rewind replaces, as `now_tree` does.
            for r in ctx.captures.borrow_mut().iter_mut() {
                if r.checkpoint_id == id {
                    r.force = forced.iter().map(|p| p.as_bytes().to_vec()).collect();
                }
            }
            id
        })
    })
    .map_err(|e| e.to_string())?;
    if let Some(id) = made.value {
        return Ok(Some(id));
    }
    let id = format!("pre-rewind-{}", ctx.now.format("%Y%m%d-%H%M%S"));
    let name = snapshot::ref_name("_", &id);
    let head = crate::git::head_revision(&ctx.project.root);
    snapshot::save(
        &ctx.project.root,
        now_tree,
        head.as_deref(),
        &name,
        &description,
    )
    .map(|_| Some(id))
    .ok_or_else(|| "cannot save the current state before rewinding".to_string())
}

/// Applies the journal, records the rewind in the task and the trace, removes the journal.
/// No agent's tool call starts while the files are put back (the capture lock, which a
/// PreToolUse waits on).
fn carry_out(ctx: &Ctx, journal: &Journal) -> Outcome {
    let exclusive = crate::task::capture::exclusive(&ctx.project);
    let applied = rewind::apply(&ctx.project, journal);
    drop(exclusive);
    applied.map_err(|e| super::failed(format!(
        "the rewind stopped: {e}; every file is either as it was or rewound; run `waymark rewind --continue` once the cause is fixed, or `waymark rewind --abort` to give it up"
    )))?;
    let (restored, deleted) = journal.split();
    let rewound = Rewound {
        checkpoint_id: journal.checkpoint_id.clone(),
        at: ctx.now,
        restored,
        deleted,
        undo: journal.undo.clone(),
    };
    record_rewind(ctx, &rewound)?;
    rewind::finish(&ctx.project)
        .map_err(|e| super::failed(format!("cannot remove the journal: {e}")))?;
    let files = rewound.restored.len() + rewound.deleted.len();
    println!(
        "Rewound {} to checkpoint {}.",
        waymark_core::text::count(files as u64, "file"),
        rewound.checkpoint_id
    );
    print_undo(rewound.undo.as_deref());
    Ok(ExitCode::SUCCESS)
}

/// Records the rewind in the current task (a note and its `rewound`) and in the trace; a
/// trace that cannot be written is logged, not fatal.
fn record_rewind(ctx: &Ctx, rewound: &Rewound) -> Result<(), ExitCode> {
    let recorded = current::update(ctx, |slot, _| {
        let hook = slot.as_mut()?;
        let details = BTreeMap::from([
            ("checkpoint_id".into(), json!(rewound.checkpoint_id)),
            ("restored".into(), json!(rewound.restored.len())),
            ("deleted".into(), json!(rewound.deleted.len())),
            ("undo".into(), json!(rewound.undo)),
        ]);
        hook.note("rewind", details, ctx.now);
        hook.rewound = Some(rewound.clone());
        Some(hook.task_id.clone())
    });
    let task_id = recorded.map_err(super::failed)?.value;
    let record = trace::record(
        &ctx.project,
        ctx.now,
        Waymark {
            kind: kind::REWIND.into(),
            event: "rewind".into(),
            task_id,
            rewind: Some(rewound.clone()),
            ..Default::default()
        },
    );
    if let Err(e) = trace::append(&ctx.project, &ctx.config, record) {
        ctx.log(Level::Error, "rewind", &format!("trace: {e}"));
    }
    Ok(())
}
