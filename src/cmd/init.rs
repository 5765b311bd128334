//! `waymark init [--remove] [--user]`: register waymark's hooks in a settings.json, for
//! people who do not use the plugin. Idempotent; every other key and hook is kept as it
//! was (in its order); `--remove` takes out exactly what `init` added.

use crate::cmd::ExitCode;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::claude::event::EVENTS;
use crate::store;

/// How waymark's own entries are recognized: the command runs `waymark … hook <Event>`.
fn is_ours(command: &str) -> bool {
    command.contains("waymark") && command.split_whitespace().any(|w| w == "hook")
}

pub fn run(root: Option<PathBuf>, remove: bool, user: bool) -> ExitCode {
    let ctx = super::ctx(root);
    let path = if user {
        match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(".claude/settings.json"),
            None => return super::fail(super::USAGE, "HOME is not set"),
        }
    } else {
        ctx.project.root.join(".claude/settings.json")
    };
    let mut settings = match read_settings(&path) {
        Ok(s) => s,
        Err(e) => return super::fail(super::CHECK_FAILED, e),
    };
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "waymark".into());
    let changed = if remove {
        unregister(&mut settings)
    } else {
        register(&mut settings, &exe)
    };
    if changed {
        let text =
            serde_json::to_string_pretty(&Value::Object(settings)).expect("serializable") + "\n";
        if let Err(e) = store::write_verbatim(&path, text.as_bytes()) {
            return super::fail(
                super::CHECK_FAILED,
                format!("cannot write {}: {e}", path.display()),
            );
        }
    }
    if !remove {
        if let Err(e) = skeleton(&ctx.project.state_dir()) {
            return super::fail(
                super::CHECK_FAILED,
                format!("cannot create .orchestration: {e}"),
            );
        }
    }
    let what = match (remove, changed) {
        (false, true) => format!("Added waymark's hooks for {} events", EVENTS.len()),
        (false, false) => "waymark's hooks were already there".to_string(),
        (true, true) => "Removed waymark's hooks".to_string(),
        (true, false) => "No waymark hooks to remove".to_string(),
    };
    println!("{what} in {}", path.display());
    ExitCode::SUCCESS
}

fn read_settings(path: &Path) -> Result<Map<String, Value>, String> {
    match fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!(
                "{} is not a JSON object; not touching it",
                path.display()
            )),
            Err(e) => Err(format!(
                "{} is not valid JSON ({e}); not touching it",
                path.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Adds one entry per event unless an entry of ours is already there.
fn register(settings: &mut Map<String, Value>, exe: &str) -> bool {
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return false;
    };
    let mut changed = false;
    for event in EVENTS {
        let list = hooks.entry(*event).or_insert_with(|| json!([]));
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        let present = list.iter().any(|group| commands(group).any(is_ours));
        if !present {
            list.push(json!({"hooks": [{"type": "command", "command": format!("'{exe}' hook {event}"), "timeout": 30}]}));
            changed = true;
        }
    }
    changed
}

/// Removes our commands; groups and event lists left empty go too.
fn unregister(settings: &mut Map<String, Value>) -> bool {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for list in hooks.values_mut() {
        let Some(groups) = list.as_array_mut() else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = inner.len();
                inner.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_ours)
                });
                changed |= inner.len() != before;
            }
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|h| !h.is_empty())
        });
    }
    hooks.retain(|_, v| v.as_array().is_none_or(|a| !a.is_empty()));
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    changed
}

fn commands(group: &Value) -> impl Iterator<Item = &str> {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
}

/// The `.orchestration` folder with an intents file to fill in.
fn skeleton(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let intents = dir.join(crate::governance::intent::INTENTS_FILE);
    if !intents.exists() {
        fs::write(
            &intents,
            "# Intents waymark governs: one IN_PROGRESS intent binds the task (task id = intent id).\n\
             # active_intents:\n\
             #   - id: INT-001\n\
             #     name: Short name\n\
             #     status: IN_PROGRESS\n\
             #     owned_scope: [\"src/module/**\"]\n\
             #     constraints: []\n\
             #     acceptance_criteria: [\"test result: ok\"]\n\
             active_intents: []\n",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_is_idempotent_and_remove_restores() {
        let original = json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}, "z": 1});
        let mut s = original.as_object().unwrap().clone();
        assert!(register(&mut s, "/bin/waymark"));
        assert!(!register(&mut s, "/bin/waymark"));
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(s["hooks"].as_object().unwrap().len(), EVENTS.len());
        assert!(unregister(&mut s));
        assert_eq!(Value::Object(s), original);
    }
}
