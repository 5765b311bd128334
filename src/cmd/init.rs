//! `waymark init [--remove] [--user]`: register waymark's hooks in a settings.json, for
//! people who do not use the plugin. Idempotent; every other key and hook is kept as it
//! was (in its order, the file's indentation kept); `--remove` takes out exactly what
//! `init` added (and the file, when nothing else is left in it).
//!
//! The command registered must survive a rebuild: `waymark hook <Event>` when `waymark` is
//! on PATH (`cargo install --path .`), else the absolute path of this binary, with a
//! warning that it stops working when that build goes. A waymark entry that runs another
//! command (a build since removed) is rewritten in place.

use crate::cmd::{ExitCode, Outcome};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::claude::codex::Agent;
use crate::claude::event::EVENTS;
use crate::store;
use crate::store::landing::Last;
use crate::store::project::{self, Project};

/// How waymark's own entries are recognized: the command runs `waymark … hook <Event>`.
pub(crate) fn is_ours(command: &str) -> bool {
    command.contains("waymark") && command.split_whitespace().any(|w| w == "hook")
}

/// What the hooks should run: `waymark` when the `waymark` on PATH is this same program,
/// else this binary's absolute path (and why that is fragile).
fn program() -> (String, Option<String>) {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = crate::runtime::program::on_path("waymark");
    if exe.is_some() && on_path.as_ref().and_then(|p| p.canonicalize().ok()) == exe {
        return ("waymark".into(), None);
    }
    let path = exe
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "waymark".into());
    let why = match on_path {
        Some(p) => format!(
            "the waymark on PATH ({}) is another build than this one: the hooks run {path}; run the one you mean to keep, or `cargo install --path .` again",
            p.display()
        ),
        None => format!(
            "waymark is not on PATH: the hooks run {path}, which stops working when that build is removed (`cargo clean`); `cargo install --path .` puts waymark on PATH, then run `waymark init` again"
        ),
    };
    (waymark_core::shell::quote(&path), Some(why))
}

/// `waymark init [--agent codex] [--remove] [--user]`: waymark's hooks in the agent's
/// settings (Claude Code's `.claude/settings.json`, Codex CLI's `.codex/hooks.json`; the
/// user's with --user): idempotent, every other entry kept.
pub fn run(root: Option<PathBuf>, remove: bool, user: bool, agent: Agent) -> Outcome {
    let ctx = super::ctx_anywhere(root);
    if !ctx.project.found && !user {
        // As every command that works on a project: a directory that is none is not made
        // one by accident (a `.claude/`, `.orchestration/` and `.gitattributes` in `~`).
        return Err(super::usage(not_a_project(&ctx.project.root, agent)));
    }
    let path = settings_path(&ctx.project, user, agent).map_err(super::failed)?;
    let mut settings = read_settings(&path).map_err(super::failed)?;
    let (exe, warning) = program();
    let (changed, what) = if remove {
        match unregister(&mut settings) {
            true => (true, "Removed waymark's hooks".to_string()),
            false => (false, "No waymark hooks to remove".to_string()),
        }
    } else {
        let done = register(&mut settings, &exe, agent);
        (done != Registered::default(), registered_text(&done, &exe))
    };
    if changed {
        let made = path.parent().map_or(Ok(()), fs::create_dir_all);
        made.and_then(|()| write_settings(&path, &settings))
            .map_err(|e| super::failed(format!("cannot write {}: {e}", path.display())))?;
    }
    if !remove && ctx.project.found {
        skeleton(&ctx.project, &ctx.config.agent_md)
            .map_err(|e| super::failed(format!("cannot create .orchestration: {e}")))?;
    }
    if let Some(w) = warning.filter(|_| !remove) {
        eprintln!("waymark: warning: {w}");
    }
    println!("{what} in {}", path.display());
    if agent == Agent::Codex && !remove {
        println!("{CODEX_TRUST}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Why `init` outside a project writes nothing, and what to run instead.
fn not_a_project(root: &Path, agent: Agent) -> String {
    let (command, theirs) = match agent {
        Agent::Claude => ("waymark init", "~/.claude/settings.json"),
        Agent::Codex => ("waymark init --agent codex", "Codex's own hooks.json"),
    };
    format!(
        "not in a project: no .git or .orchestration in {} or above it, and CLAUDE_PROJECT_DIR is not set; nothing was written. Run `{command}` in your project (a git repository), pass --root DIR, or use --user for {theirs}",
        root.display()
    )
}

/// Where `agent`'s hooks are registered: the project's file, judged where it lands (a
/// committed `.claude` linked into `.git` is refused), or with `user` the user's.
fn settings_path(project: &Project, user: bool, agent: Agent) -> Result<PathBuf, String> {
    match (agent, user) {
        (Agent::Claude, true) => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(project::CLAUDE_SETTINGS))
            .ok_or_else(|| "HOME is not set".to_string()),
        (Agent::Codex, true) => {
            codex_user_hooks().ok_or_else(|| "neither CODEX_HOME nor HOME is set".into())
        }
        (_, false) => {
            let rel = match agent {
                Agent::Claude => project::CLAUDE_SETTINGS,
                Agent::Codex => project::CODEX_HOOKS,
            };
            project
                .landing(Path::new(rel), Last::Replaced)
                .map_err(|why| format!("{why}: nothing was written"))
        }
    }
}

/// The user's Codex hooks.json: in `$CODEX_HOME`, else `~/.codex` (as Codex reads it).
pub fn codex_user_hooks() -> Option<PathBuf> {
    let home = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty());
    match (home, std::env::var_os("HOME")) {
        (Some(h), _) => Some(PathBuf::from(h).join("hooks.json")),
        (None, Some(h)) => Some(PathBuf::from(h).join(project::CODEX_HOOKS)),
        (None, None) => None,
    }
}

/// What Codex CLI asks before it runs the hooks (measured with 0.169.0).
const CODEX_TRUST: &str = "Codex CLI runs a project's hooks only when the project is trusted, and \
     each new or changed hook only once you trust it: review them with /hooks in codex (or run \
     `codex --dangerously-bypass-hook-trust` where you already trust the hooks).";

/// What [`register`] did, said: nothing, entries repointed at `exe`, or entries added
/// (and some repointed).
fn registered_text(done: &Registered, exe: &str) -> String {
    match (done.added, done.repointed) {
        (0, 0) => "waymark's hooks were already there".to_string(),
        (0, n) => format!("Pointed {n} of waymark's hooks at `{exe}` (they ran another program)"),
        (added, n) => format!(
            "Added waymark's hooks for {}{}",
            waymark_core::text::count(added as u64, "event"),
            match n {
                0 => String::new(),
                n => format!(" and pointed {n} at `{exe}`"),
            }
        ),
    }
}

/// Writes the changed settings in the file's own indentation, or removes the file when
/// nothing is left in it.
fn write_settings(path: &Path, settings: &Map<String, Value>) -> std::io::Result<()> {
    if settings.is_empty() {
        // Nothing of the user's was in it: leave no `{}` behind.
        std::fs::remove_file(path)
    } else {
        let indent = indentation(&std::fs::read_to_string(path).unwrap_or_default());
        store::write_verbatim(path, &to_text(settings, &indent))
    }
}

fn read_settings(path: &Path) -> Result<Map<String, Value>, String> {
    let shown = path.display();
    match fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!("{shown} is not a JSON object; not touching it")),
            Err(e) => Err(format!("{shown} is not valid JSON ({e}); not touching it")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

/// What [`register`] did: entries added, entries pointed at the program from another.
#[derive(Debug, Default, PartialEq)]
struct Registered {
    added: usize,
    repointed: usize,
}

/// Adds one entry per event of `agent` unless an entry of ours is there; an entry of ours
/// that runs another program (a stale path) is pointed at `program`. Codex CLI's hooks.json
/// has Claude Code's layout (`hooks.<Event>[].hooks[]` of `{type: command, command,
/// timeout}`, `codex-rs/config/src/hook_config.rs`): its events, each naming the agent.
/// SessionEnd and Interrupt get 3 s, the most Codex allows them.
fn register(settings: &mut Map<String, Value>, program: &str, agent: Agent) -> Registered {
    let (events, flag) = match agent {
        Agent::Claude => (EVENTS, ""),
        Agent::Codex => (crate::claude::codex::EVENTS, " --agent codex"),
    };
    let mut done = Registered::default();
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return done;
    };
    for event in events {
        let wanted = format!("{program} hook{flag} {event}");
        let list = hooks.entry(*event).or_insert_with(|| json!([]));
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        let mut present = false;
        for hook in list.iter_mut().flat_map(entries_mut) {
            let Some(command) = hook.get("command").and_then(Value::as_str) else {
                continue;
            };
            if is_ours(command) {
                present = true;
                if command != wanted {
                    hook["command"] = Value::from(wanted.clone());
                    done.repointed += 1;
                }
            }
        }
        if !present {
            let timeout = match (agent, *event) {
                (Agent::Codex, "SessionEnd" | "Interrupt") => 3,
                _ => 30,
            };
            list.push(
                json!({"hooks": [{"type": "command", "command": wanted, "timeout": timeout}]}),
            );
            done.added += 1;
        }
    }
    done
}

fn entries_mut(group: &mut Value) -> impl Iterator<Item = &mut Value> {
    group
        .get_mut("hooks")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// The indentation a JSON text uses (its first indented line's), two spaces by default.
fn indentation(text: &str) -> String {
    text.lines()
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_string()
}

fn to_text(settings: &Map<String, Value>, indent: &str) -> Vec<u8> {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    settings.serialize(&mut ser).expect("serializable");
    out.push(b'\n');
    out
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

/// The commands of waymark's entries in a settings file (for `doctor`).
pub(crate) fn registered_commands(settings: &Value) -> Vec<String> {
    let mut out: Vec<String> = settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|h| h.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .filter(|c| is_ours(c))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The `.orchestration` folder (with what belongs in git said, `docs/git.md`) and an
/// intents file to fill in.
fn skeleton(project: &Project, lessons: &str) -> std::io::Result<()> {
    project::ensure_state_dir(project)?;
    // Read and written whole: where a link there leads is judged too.
    let attributes = project
        .landing(Path::new(project::GIT_ATTRIBUTES), Last::Followed)
        .map_err(std::io::Error::other)?;
    union_merge(&attributes, lessons)?;
    let dir = project.state_dir();
    let intents = dir.join(crate::governance::intent::INTENTS_FILE);
    // Anything there, a link too (dangling or not), is the repository's: never written
    // through, and a new file replaces nothing.
    if fs::symlink_metadata(&intents).is_err() {
        store::write_verbatim(
            &intents,
            b"# Intents waymark governs: one IN_PROGRESS intent binds the task (task id = intent id).\n\
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

/// Adds `/<lessons> merge=union` to the root `.gitattributes` unless a line names the file:
/// lessons are appended, so two branches' lessons merge by keeping both.
fn union_merge(attributes: &Path, lessons: &str) -> std::io::Result<()> {
    let text = match fs::read_to_string(attributes) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let pattern = format!("/{}", lessons.trim_start_matches('/'));
    let named = text.lines().any(|l| {
        let first = l.split_whitespace().next().unwrap_or_default();
        first == pattern || first == lessons
    });
    if named {
        return Ok(());
    }
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let line = format!("{text}{sep}{pattern} merge=union\n");
    store::write_verbatim(attributes, line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_is_idempotent_and_remove_restores() {
        let original = json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}, "z": 1});
        let mut s = original.as_object().unwrap().clone();
        let all = EVENTS.len();
        assert_eq!(register(&mut s, "'/bin/waymark'", Agent::Claude).added, all);
        assert_eq!(
            register(&mut s, "'/bin/waymark'", Agent::Claude),
            Registered::default()
        );
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(s["hooks"].as_object().unwrap().len(), EVENTS.len());
        // A stale path is rewritten in place, not added beside.
        assert_eq!(
            register(&mut s, "waymark", Agent::Claude),
            Registered {
                added: 0,
                repointed: all
            }
        );
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            s["hooks"]["Stop"][1]["hooks"][0]["command"],
            "waymark hook Stop"
        );
        assert!(unregister(&mut s));
        assert_eq!(Value::Object(s), original);
    }

    #[test]
    fn codex_hooks_name_the_agent_and_keep_other_entries() {
        let original =
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}});
        let mut s = original.as_object().unwrap().clone();
        let all = crate::claude::codex::EVENTS.len();
        assert_eq!(register(&mut s, "waymark", Agent::Codex).added, all);
        assert_eq!(
            register(&mut s, "waymark", Agent::Codex),
            Registered::default()
        );
        assert_eq!(
            s["hooks"]["Stop"][1]["hooks"][0]["command"],
            "waymark hook --agent codex Stop"
        );
        assert_eq!(s["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 3);
        assert_eq!(s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 30);
        assert!(unregister(&mut s));
        assert_eq!(Value::Object(s), original);
    }

    #[test]
    fn programs_and_indentation_are_read() {
        use waymark_core::shell::{first_word, quote};
        assert_eq!(
            first_word("'/opt/x y/waymark' hook Stop"),
            "'/opt/x y/waymark'"
        );
        assert_eq!(first_word("waymark hook Stop"), "waymark");
        let odd = format!("{} hook Stop", quote("/opt/it's here/waymark"));
        assert_eq!(first_word(&odd), quote("/opt/it's here/waymark"));
        assert_eq!(indentation("{\n\t\"a\": 1\n}"), "\t");
        assert_eq!(indentation("{\n    \"a\": 1\n}"), "    ");
        assert_eq!(indentation("{}"), "  ");
    }
}
