//! `waymark doctor`: checks the install, the configuration, the key, the hook registration
//! and the state files, one line each; exit 1 when anything is wrong. It writes nothing:
//! run in a directory that is no project yet, it leaves it as it was.

use crate::cmd::{ExitCode, Outcome};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::task::store::{self, Peeked};

mod launcher;

#[derive(PartialEq)]
enum Mark {
    Ok,
    Warn,
    Fail,
}

pub fn run(root: Option<PathBuf>) -> Outcome {
    let ctx = super::ctx_unchecked(root);
    let mut lines: Vec<(Mark, String)> = Vec::new();
    install_lines(&mut lines);

    if ctx.config_errors.is_empty() {
        lines.push((Mark::Ok, "configuration valid".into()));
    }
    for e in &ctx.config_errors {
        lines.push((Mark::Fail, format!("config: {e}")));
    }
    lines.push(key_line(&ctx));

    hook_lines(&ctx.project.root, &mut lines);
    codex_lines(&ctx.project.root, &mut lines);
    match crate::git::run(&ctx.project.root, ["--version"]) {
        Some(v) => lines.push((Mark::Ok, v)),
        None => lines.push((
            Mark::Warn,
            "git not found: commit checkpoints need it".into(),
        )),
    }

    match ctx.project.check() {
        _ if !ctx.project.found => lines.push((Mark::Warn, format!(
            "not in a project: no .git or .orchestration in {} or above it, and CLAUDE_PROJECT_DIR is not set",
            ctx.project.root.display()
        ))),
        Err(why) => lines.push((Mark::Fail, why.to_string())),
        Ok(()) => project_lines(&ctx, &mut lines),
    }
    for (mark, text) in &lines {
        let tag = match mark {
            Mark::Ok => "ok  ",
            Mark::Warn => "warn",
            Mark::Fail => "FAIL",
        };
        println!("{tag} {text}");
    }
    let failed = lines.iter().any(|(m, _)| *m == Mark::Fail);
    Ok(ExitCode::checked(!failed))
}

/// This waymark's version and path, and whether a `waymark` is on PATH.
fn install_lines(lines: &mut Vec<(Mark, String)>) {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    lines.push((
        Mark::Ok,
        format!("waymark {} at {exe}", env!("CARGO_PKG_VERSION")),
    ));
    match crate::runtime::program::on_path("waymark") {
        Some(p) => lines.push((Mark::Ok, format!("waymark on PATH: {}", p.display()))),
        None => lines.push((
            Mark::Warn,
            "waymark is not on PATH: `cargo install --path .` in the checkout puts it in ~/.cargo/bin (have that on PATH)".into(),
        )),
    }
}

/// How Claude Code reaches waymark: the plugin, the settings files' hooks (each program
/// they run must start), and a warning when it is registered more than once.
fn hook_lines(root: &Path, lines: &mut Vec<(Mark, String)>) {
    let registered = registrations(root);
    let plugin = plugin_enabled(root);
    if let Some((file, id)) = &plugin {
        lines.push((Mark::Ok, format!("the plugin {id} is enabled in {file}")));
    }
    lines.extend(launcher::line(plugin.as_ref().map(|(_, id)| id.as_str())));
    if plugin.is_none() && registered.is_empty() {
        lines.push((Mark::Warn, "hooks not found in .claude/settings.json, .claude/settings.local.json or ~/.claude/settings.json, and no waymark plugin enabled there (fine with `claude --plugin-dir`; else `/plugin install waymark@waymark` or `waymark init`)".into()));
    }
    // The plugin is in effect when a settings file enables it, or when this process runs
    // under a loaded one (`claude --plugin-dir`, which no settings file names).
    // Or when waymark saw it run an event a second time (`handlers::once`): the only
    // trace a `--plugin-dir` plugin leaves for a doctor run outside it.
    let seen = seen_twice(root);
    let in_effect = plugin
        .as_ref()
        .map(|(f, _)| format!("enabled in {f}"))
        .or_else(|| launcher::running_under().map(|r| format!("loaded from {}", r.display())))
        .or_else(|| {
            seen.iter()
                .find_map(|k| k.strip_prefix("plugin "))
                .map(|r| format!("loaded from {r}, seen running each event a second time"))
        });
    if let Some(line) = twice(in_effect.as_deref(), &registered) {
        lines.push((Mark::Warn, line));
    } else if !seen.is_empty() {
        // Seen once, it makes every event record itself (`handlers::once`) until removed.
        lines.push((Mark::Warn, format!(
            "waymark once saw each event run twice ({}), and one registration is all this doctor finds now: if you removed the other, delete .orchestration/{} (while it is there, every event records itself to be handled once, which costs each tool call a little)",
            seen.join(", "),
            crate::store::project::REGISTRATIONS_SEEN
        )));
    }
    for (file, commands) in registered {
        program_lines(&file, &commands, lines);
    }
}

/// How Codex CLI reaches waymark, when it does: each hooks.json it reads for the project
/// (the project's `.codex/hooks.json`, `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json`)
/// with waymark's entries, whose programs must start. Nothing when none has them: most
/// users have no Codex.
fn codex_lines(root: &Path, lines: &mut Vec<(Mark, String)>) {
    let mut files = vec![root.join(crate::store::project::CODEX_HOOKS)];
    files.extend(super::init::codex_user_hooks());
    // The project may be the home directory: one file, one check.
    if files.len() == 2 && same_file(&files[0], &files[1]) {
        files.pop();
    }
    for f in files {
        let Some(settings) = std::fs::read_to_string(&f)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            continue;
        };
        let commands = super::init::registered_commands(&settings);
        if commands.iter().any(|c| !c.contains("--agent codex")) {
            lines.push((Mark::Warn, format!("{}: a waymark hook without `--agent codex` reads Codex's events as Claude Code's: run `waymark init --agent codex` again", f.display())));
        }
        if !commands.is_empty() {
            program_lines(&format!("{} (Codex CLI)", f.display()), &commands, lines);
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// One settings file's hooks: one check per program the entries run (normally one for
/// all events), which must start.
fn program_lines(file: &str, commands: &[String], lines: &mut Vec<(Mark, String)>) {
    let mut programs: Vec<(&str, Vec<&String>)> = Vec::new();
    for c in commands {
        let program = waymark_core::shell::first_word(c);
        match programs.iter_mut().find(|(p, _)| *p == program) {
            Some((_, cs)) => cs.push(c),
            None => programs.push((program, vec![c])),
        }
    }
    for (program, commands) in programs {
        let events = waymark_core::text::count(commands.len() as u64, "event");
        lines.push(match starts(program) {
            Ok(()) => (
                Mark::Ok,
                format!("hooks registered in {file} for {events}, running {program}"),
            ),
            Err(why) => (
                Mark::Fail,
                format!("hooks in {file} for {events} run `{}`, and {program} does not start ({why:#}): run `waymark init` again (with --user for ~/.claude) to point them at the waymark you have", commands[0]),
            ),
        });
    }
}

fn key_line(ctx: &crate::runtime::context::Ctx) -> (Mark, String) {
    let Some(p) = crate::config::key_path(&ctx.config) else {
        let why = "no user config directory: set HOME or XDG_CONFIG_HOME for the signing key";
        return (Mark::Warn, why.into());
    };
    let shown = p.display();
    match std::fs::metadata(&p).map(|m| m.permissions().mode()) {
        Ok(mode) if mode & 0o077 != 0 => (
            Mark::Fail,
            format!(
                "key {shown} is readable by others (mode {:o}): run `chmod 600 {shown}`",
                mode & 0o777
            ),
        ),
        Ok(_) => (Mark::Ok, format!("signing key {shown} (mode 600)")),
        Err(_) => (
            Mark::Warn,
            format!("no signing key yet at {shown} (created on the first validation)"),
        ),
    }
}

/// The project's state: writable (asked without writing), task, intents, git hooks.
fn project_lines(ctx: &crate::runtime::context::Ctx, lines: &mut Vec<(Mark, String)>) {
    lines.push((
        Mark::Ok,
        format!("project root {}", ctx.project.root.display()),
    ));
    let dir = ctx.project.state_dir();
    let (probe, what) = if dir.is_dir() {
        (dir.clone(), format!("{} is writable", dir.display()))
    } else {
        (
            ctx.project.root.clone(),
            format!("{} will be made on first use", dir.display()),
        )
    };
    lines.push(if writable(&probe) {
        (Mark::Ok, what)
    } else {
        (Mark::Fail, format!("{} is not writable", probe.display()))
    });
    task_lines(ctx, lines);
    match crate::governance::intent::load(&ctx.project) {
        Ok(Some(f)) => lines.push((
            Mark::Ok,
            format!(
                "{} in active_intents.yaml",
                waymark_core::text::count(f.active_intents.len() as u64, "intent")
            ),
        )),
        Ok(None) => {}
        Err(e) => lines.push((Mark::Fail, e.to_string())),
    }
    if let Ok(dir) = crate::git::hooks::hooks_dir(&ctx.project.root) {
        for hook in crate::git::hooks::GitHook::ALL {
            if let Ok(st) = crate::git::hooks::status(&dir, hook) {
                lines.push((
                    Mark::Ok,
                    format!("git hook {}: {}", hook.name(), st.describe()),
                ));
            }
        }
    }
}

/// The current task and its state, and whether hook.json is damaged.
fn task_lines(ctx: &crate::runtime::context::Ctx, lines: &mut Vec<(Mark, String)>) {
    // Peeked, not loaded: loading would restore a damaged hook.json, and doctor writes
    // nothing.
    match store::peek_current(&ctx.project) {
        Ok(Some(Peeked::Task { task_id, state, .. })) => {
            let whole = std::fs::read(store::hook_path(&ctx.project)).map(|b| {
                matches!(
                    store::peek(&b),
                    Peeked::Task {
                        task_id: Some(_),
                        ..
                    }
                )
            });
            if whole.is_ok_and(|w| !w) {
                lines.push((
                    Mark::Warn,
                    "hook.json is damaged: the next event restores it from hook.json.bak".into(),
                ));
            }
            let id = task_id.unwrap_or_default();
            lines.push((Mark::Ok, format!("task {id} is {state}")));
        }
        Ok(None) => lines.push((Mark::Ok, "no task yet".into())),
        Ok(Some(_)) => lines.push((Mark::Fail, "hook.json holds no task".into())),
        Err(e) => lines.push((Mark::Fail, e)),
    }
}

/// The settings files Claude Code reads for a session in `root`, parsed: the project's,
/// its local one, the user's.
fn settings_files(root: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut files = vec![
        root.join(crate::store::project::CLAUDE_SETTINGS),
        root.join(crate::store::project::CLAUDE_LOCAL_SETTINGS),
    ];
    if let Some(h) = std::env::var_os("HOME") {
        files.push(PathBuf::from(h).join(crate::store::project::CLAUDE_SETTINGS));
    }
    files.dedup();
    files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).ok()?;
            Some((f, serde_json::from_str(&text).ok()?))
        })
        .collect()
}

/// The settings files that register waymark's hooks, with the commands of its entries.
fn registrations(root: &Path) -> Vec<(String, Vec<String>)> {
    settings_files(root)
        .into_iter()
        .filter_map(|(f, settings)| {
            let commands = super::init::registered_commands(&settings);
            (!commands.is_empty()).then(|| (f.display().to_string(), commands))
        })
        .collect()
}

/// The settings file that enables the waymark plugin (`enabledPlugins`, as
/// `/plugin install` writes it), if one does, and the plugin's id there.
fn plugin_enabled(root: &Path) -> Option<(String, String)> {
    settings_files(root).into_iter().find_map(|(f, settings)| {
        let enabled = settings.get("enabledPlugins")?.as_object()?;
        let (id, _) = enabled
            .iter()
            .find(|(name, on)| name.starts_with("waymark@") && on.as_bool() == Some(true))?;
        Some((f.display().to_string(), id.clone()))
    })
}

/// The registrations waymark saw running one event twice (`plugin <root>`, `settings`),
/// from `.orchestration/registrations.seen`.
fn seen_twice(root: &Path) -> Vec<String> {
    let path = root
        .join(crate::store::project::STATE_DIR)
        .join(crate::store::project::REGISTRATIONS_SEEN);
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, kind)| kind.to_string()))
        .collect()
}

/// When waymark is registered more than once (the plugin, `plugin` saying how it is in
/// effect, and `waymark init`, or `init` in two settings files): every event then starts a waymark process per registration. Each
/// event is handled once anyway (`handlers::once`), but the extra processes cost each
/// tool call; the line names them all and which to remove (the plugin is the main way).
fn twice(plugin: Option<&str>, registered: &[(String, Vec<String>)]) -> Option<String> {
    let inits = registered
        .iter()
        .map(|(f, _)| format!("`waymark init` in {f}"));
    let names: Vec<String> = plugin
        .map(|how| format!("the plugin ({how})"))
        .into_iter()
        .chain(inits)
        .collect();
    if names.len() < 2 {
        return None;
    }
    let remove: Vec<String> = registered
        .iter()
        .skip(usize::from(plugin.is_none()))
        .map(|(f, _)| {
            let user = std::env::var_os("HOME")
                .is_some_and(|h| Path::new(f).starts_with(Path::new(&h).join(".claude")));
            let flag = if user { " --user" } else { "" };
            format!("`waymark init --remove{flag}` (for {f})")
        })
        .collect();
    Some(format!(
        "waymark is registered {} times: {}. Each event is handled once, but every tool call starts a waymark process per registration: keep {} and run {}.",
        names.len(),
        names.join(", "),
        if plugin.is_some() {
            "the plugin"
        } else {
            "the first"
        },
        remove.join(" and ")
    ))
}

/// Whether a registered hook command's program (its first word, as written) starts: the
/// shell reads it (quotes, `$VARS`) and runs it with `--version`.
fn starts(program: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{program} --version"))
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run sh")?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    anyhow::bail!("{}", err.trim().lines().last().unwrap_or("it failed"))
}

/// `access(W_OK)`: whether this user may write in `dir`, asked without writing.
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}
