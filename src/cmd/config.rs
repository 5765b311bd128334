//! `waymark config show|set KEY VALUE`: the effective configuration and where each value
//! came from (the command-line form of contextd's checkpoint_configure).

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use clap::Subcommand;
use serde_json::{Map, Value, json};

use crate::config;
use crate::runtime::context::Ctx;
use crate::store;

#[derive(Debug, Subcommand)]
pub enum ConfigCmd {
    /// Every key, its effective value and its origin.
    Show(super::cli::Json),
    /// Set a key in the project's waymark.json (or the user config with --user).
    Set {
        /// The key, dotted for a nested one (`retention.completed`).
        key: String,
        /// The value, as JSON (`3`, `true`, `["a"]`) or a bare string (`5m`).
        value: String,
        /// Write ~/.config/waymark/config.json instead of the project's.
        #[arg(long)]
        user: bool,
    },
}

pub fn run(root: Option<PathBuf>, cmd: ConfigCmd) -> Outcome {
    let ctx = super::ctx(root);
    match cmd {
        ConfigCmd::Show(super::cli::Json { json }) => show(&ctx, json),
        ConfigCmd::Set { key, value, user } => set(&ctx, &key, value, user),
    }
}

/// `config show`: every key with its value and origin, then the configuration's errors
/// (which make the exit status 1).
fn show(ctx: &Ctx, json: bool) -> Outcome {
    let loaded = crate::config::load(&ctx.project.root);
    if json {
        let map: Map<String, Value> = loaded
            .values()
            .iter()
            .map(|(k, (v, o))| (k.to_string(), json!({"value": v, "origin": o})))
            .collect();
        super::print_json(&json!({"values": map, "errors": loaded.errors}));
    } else {
        for (k, (v, o)) in &loaded.values() {
            println!("{k:<30} {:<24} {o}", v.to_string());
        }
        for e in &loaded.errors {
            println!("error: {e}");
        }
    }
    Ok(ExitCode::checked(loaded.errors.is_empty()))
}

/// `config set`: checks the value, then writes it under its key into the project's
/// waymark.json or the user's config.json, keeping the file's other keys.
fn set(ctx: &Ctx, key: &str, value: String, user: bool) -> Outcome {
    let parsed: Value = serde_json::from_str(&value).unwrap_or(Value::String(value));
    crate::config::check(key, &parsed).map_err(|e| super::usage(format!("{key}: {e}")))?;
    if !user && waymark_core::config::table::USER_ONLY.contains(&key) {
        return Err(super::usage(format!(
            "{key}: only your own configuration may set it, not the project's waymark.json: add --user"
        )));
    }
    let path = if user {
        let dir = config::user_config_dir()
            .ok_or_else(|| super::usage("no user config directory (HOME unset)"))?;
        dir.join("config.json")
    } else {
        config::project_config_path(&ctx.project.root)
    };
    let mut map = match std::fs::read_to_string(&path).map(|t| serde_json::from_str(&t)) {
        Ok(Ok(Value::Object(m))) => m,
        Ok(_) => {
            let why = format!("{} is not a JSON object; fix it first", path.display());
            return Err(super::failed(why));
        }
        Err(_) => Map::new(),
    };
    set_path(&mut map, key, parsed.clone());
    let text = serde_json::to_string_pretty(&Value::Object(map)).expect("serializable") + "\n";
    store::write_verbatim(&path, text.as_bytes())
        .map_err(|e| super::failed(format!("cannot write {}: {e}", path.display())))?;
    println!("{key} = {parsed} in {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Sets `a.b` as `{"a":{"b":…}}`.
fn set_path(map: &mut Map<String, Value>, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            map.insert(key.to_string(), value);
        }
        Some((head, rest)) => {
            let inner = map.entry(head).or_insert_with(|| Value::Object(Map::new()));
            if !inner.is_object() {
                *inner = Value::Object(Map::new());
            }
            set_path(inner.as_object_mut().expect("object"), rest, value);
        }
    }
}
