//! `waymark intent list [--json]` and `waymark intent use <ID>`.

use crate::cmd::{ExitCode, Outcome};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::cli::Json;
use crate::governance::intent::{self, IntentFile};
use crate::runtime::context::Ctx;

#[derive(Debug, clap::Subcommand)]
pub enum IntentCmd {
    /// The intents of .orchestration/active_intents.yaml, and which one is active.
    List(super::cli::Json),
    /// Make intent ID the active one (when several are in progress).
    Use { id: String },
}

pub fn run(root: Option<PathBuf>, cmd: IntentCmd) -> Outcome {
    let ctx = super::ctx(root);
    let path = intent::intents_path(&ctx.project);
    let Some(file) = intent::load(&ctx.project).map_err(super::usage)? else {
        return no_file(cmd, &path);
    };
    let chosen = intent::chosen(&ctx.project);
    match cmd {
        IntentCmd::List(Json { json }) => {
            let active = file.active(chosen.as_deref(), None).map(|i| i.id.clone());
            if json {
                list_json(&file, active.as_deref(), chosen.as_deref());
            } else {
                list_text(&file, active.as_deref(), chosen.as_deref(), &path);
            }
            Ok(ExitCode::SUCCESS)
        }
        IntentCmd::Use { id } => use_intent(&ctx, &file, &id, &path),
    }
}

/// No file is the normal state of a project that does not use intents: nothing to list;
/// but nothing to choose from either.
fn no_file(cmd: IntentCmd, path: &Path) -> Outcome {
    let missing = format!(
        "{} does not exist (see docs/governance.md for its format)",
        path.display()
    );
    match cmd {
        IntentCmd::List(Json { json: true }) => {
            super::print_json(&json!({"intents": [], "active": null, "chosen": null}));
        }
        IntentCmd::List(Json { json: false }) => println!("No intents: {missing}."),
        IntentCmd::Use { id } => return Err(super::usage(format!("no intent {id}: {missing}"))),
    }
    Ok(ExitCode::SUCCESS)
}

/// `intent list --json`: every intent with its state and whether it is the active one.
fn list_json(file: &IntentFile, active: Option<&str>, chosen: Option<&str>) {
    let intents: Vec<_> = file
        .active_intents
        .iter()
        .map(|i| {
            json!({
                "id": i.id,
                "name": i.name,
                "status": i.status,
                "state": match i.state() {
                    intent::Status::InProgress => "in_progress",
                    intent::Status::Completed => "completed",
                    intent::Status::Other => "other",
                },
                "owned_scope": i.owned_scope,
                "acceptance_criteria": i.acceptance_criteria,
                "active": active == Some(i.id.as_str()),
            })
        })
        .collect();
    super::print_json(&json!({
        "intents": intents,
        "active": active,
        "chosen": chosen,
    }));
}

/// `intent list`: each intent (the active one starred) with its scope, then which is
/// active and why, or why none is.
fn list_text(file: &IntentFile, active: Option<&str>, chosen: Option<&str>, path: &Path) {
    if file.active_intents.is_empty() {
        println!("No intents in {}.", path.display());
        return;
    }
    for i in &file.active_intents {
        let mark = if active == Some(i.id.as_str()) {
            "*"
        } else {
            " "
        };
        let scope = if i.owned_scope.is_empty() {
            "(any file)".to_string()
        } else {
            i.owned_scope.join(", ")
        };
        println!("{mark} {:<12} {:<12} {}", i.id, i.status, i.name);
        println!("  {:<12} scope: {scope}", "");
    }
    let running = file.running().count();
    match active {
        Some(id) => println!(
            "\nActive: {id}{}",
            if chosen == Some(id) {
                " (chosen with `waymark intent use`)"
            } else {
                ""
            }
        ),
        None if running > 1 => println!(
            "\n{running} intents are in progress: each edit goes to the one whose scope holds the file. Choose one with `waymark intent use ID`."
        ),
        None => println!("\nNo intent is in progress."),
    }
}

/// `intent use ID`: records the choice, and says whether the intent is active now.
fn use_intent(ctx: &Ctx, file: &IntentFile, id: &str, path: &Path) -> Outcome {
    let Some(i) = file.get(id) else {
        let ids: Vec<_> = file.active_intents.iter().map(|i| i.id.as_str()).collect();
        let shown = path.display();
        let message = if ids.is_empty() {
            format!("no intent {id}: {shown} has no intents")
        } else {
            format!("no intent {id} in {shown} (there are: {})", ids.join(", "))
        };
        return Err(super::usage(message));
    };
    let target = ctx.project.state_file(intent::CHOSEN_FILE);
    crate::store::write_verbatim(&target, format!("{id}\n").as_bytes())
        .map_err(|e| super::usage(format!("cannot write {}: {e}", target.display())))?;
    if i.is_in_progress() {
        println!("Active intent: {id} ({})", i.name);
    } else {
        println!(
            "Chose {id} ({}), but its status is {}: it becomes active once it is in progress ({}, or active).",
            i.name,
            if i.status.is_empty() {
                "unset"
            } else {
                &i.status
            },
            intent::IN_PROGRESS
        );
    }
    Ok(ExitCode::SUCCESS)
}
