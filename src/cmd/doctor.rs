//! `waymark doctor`: checks the install, the configuration, the key, the hook registration
//! and the state files, one line each; exit 1 when anything is wrong.

use crate::cmd::ExitCode;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::task::store;

#[derive(PartialEq)]
enum Mark {
    Ok,
    Warn,
    Fail,
}

pub fn run(root: Option<PathBuf>) -> ExitCode {
    let ctx = super::ctx(root);
    let mut lines: Vec<(Mark, String)> = Vec::new();
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    lines.push((
        Mark::Ok,
        format!("waymark {} at {exe}", env!("CARGO_PKG_VERSION")),
    ));
    lines.push((
        Mark::Ok,
        format!("project root {}", ctx.project.root.display()),
    ));

    if ctx.config_errors.is_empty() {
        lines.push((Mark::Ok, "configuration valid".into()));
    }
    for e in &ctx.config_errors {
        lines.push((Mark::Fail, format!("config: {e}")));
    }

    match ctx.config.key_path() {
        Some(p) => match std::fs::metadata(&p) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => lines.push((
                Mark::Fail,
                format!(
                    "key {} is readable by others (mode {:o}): run `chmod 600 {}`",
                    p.display(),
                    m.permissions().mode() & 0o777,
                    p.display()
                ),
            )),
            Ok(_) => lines.push((Mark::Ok, format!("signing key {} (mode 600)", p.display()))),
            Err(_) => lines.push((
                Mark::Warn,
                format!(
                    "no signing key yet at {} (created on the first validation)",
                    p.display()
                ),
            )),
        },
        None => lines.push((
            Mark::Warn,
            "no user config directory: set HOME or XDG_CONFIG_HOME for the signing key".into(),
        )),
    }

    let registered = registrations(&ctx.project.root);
    if registered.is_empty() {
        lines.push((Mark::Warn, "hooks not found in .claude/settings.json or ~/.claude/settings.json (fine when loaded as a plugin; else run `waymark init`)".into()));
    }
    for r in registered {
        lines.push((Mark::Ok, format!("hooks registered in {r}")));
    }

    let dir = ctx.project.state_dir();
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&probe, b"")) {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            lines.push((Mark::Ok, format!("{} is writable", dir.display())));
        }
        Err(e) => lines.push((
            Mark::Fail,
            format!("{} is not writable: {e}", dir.display()),
        )),
    }
    match store::load(&ctx.project) {
        Ok((Some(h), note)) => {
            if let Some(n) = note.restored {
                lines.push((Mark::Warn, n));
            }
            lines.push((Mark::Ok, format!("task {} is {}", h.task_id, h.state)));
        }
        Ok((None, _)) => lines.push((Mark::Ok, "no task yet".into())),
        Err(e) => lines.push((Mark::Fail, e.to_string())),
    }
    match crate::governance::intent::load(&ctx.project) {
        Ok(Some(f)) => lines.push((
            Mark::Ok,
            format!("{} intents in active_intents.yaml", f.active_intents.len()),
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
    match crate::git::run(&ctx.project.root, &["--version"]) {
        Some(v) => lines.push((Mark::Ok, v)),
        None => lines.push((
            Mark::Warn,
            "git not found: commit checkpoints need it".into(),
        )),
    }

    let mut failed = false;
    for (mark, text) in &lines {
        let tag = match mark {
            Mark::Ok => "ok  ",
            Mark::Warn => "warn",
            Mark::Fail => {
                failed = true;
                "FAIL"
            }
        };
        println!("{tag} {text}");
    }
    if failed {
        ExitCode::from(super::CHECK_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

fn registrations(root: &std::path::Path) -> Vec<String> {
    let mut files = vec![
        root.join(".claude/settings.json"),
        root.join(".claude/settings.local.json"),
    ];
    if let Some(h) = std::env::var_os("HOME") {
        files.push(PathBuf::from(h).join(".claude/settings.json"));
    }
    files
        .into_iter()
        .filter(|f| {
            std::fs::read_to_string(f).is_ok_and(|t| t.contains("waymark") && t.contains(" hook "))
        })
        .map(|f| f.display().to_string())
        .collect()
}
