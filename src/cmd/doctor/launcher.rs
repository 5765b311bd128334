//! Which binary the plugin's hooks run, asked of the plugin's launcher itself
//! (`hooks/waymark-hook --which`): the launcher decides, so doctor cannot tell another
//! story than the one the hooks live.
//!
//! The launcher is found where Claude Code runs it from: the plugin this process runs
//! under (`CLAUDE_PLUGIN_ROOT`: a hook, or the agent's `waymark` through the plugin's
//! `bin/`), else the installed plugin's directory. A plugin from a local marketplace runs
//! from the marketplace's own directory (Claude Code 2.1.197 and 2.1.332 do), any other
//! from its copy under `plugins/cache/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::Mark;

/// The check line for the binary the plugin's hooks run; `plugin` is the enabled plugin's
/// id (`waymark@<marketplace>`), when one is.
pub(super) fn line(plugin: Option<&str>) -> Option<(Mark, String)> {
    let mut which = match running_under() {
        Some(root) => ask(&root),
        None => {
            let id = plugin?;
            let config = config_dir()?;
            let root = installed_root(&config, id)?;
            let data = config.join("plugins/data").join(id.replace('@', "-"));
            let mut c = ask(&root);
            c.env("CLAUDE_PLUGIN_ROOT", &root)
                .env("CLAUDE_PLUGIN_DATA", data);
            c
        }
    };
    let out = which.stdin(Stdio::null()).output();
    let Ok(out) = out else {
        return Some((Mark::Fail, "the plugin's launcher does not run".into()));
    };
    let said = String::from_utf8_lossy(&out.stdout);
    let mut lines = said.lines();
    match (out.status.success(), lines.next(), lines.next()) {
        (true, Some(bin), Some(how)) => Some(judge(Path::new(bin), how)),
        _ => Some((
            Mark::Fail,
            format!(
                "the plugin's hooks find no waymark binary ({}): every event is skipped",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )),
    }
}

/// The plugin this process runs under (`CLAUDE_PLUGIN_ROOT` holding a launcher): a hook,
/// or the agent's `waymark` through the plugin's `bin/`, however the plugin was loaded.
pub(super) fn running_under() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_PLUGIN_ROOT")
        .map(PathBuf::from)
        .filter(|root| launcher(root).is_file())
}

fn launcher(root: &Path) -> PathBuf {
    root.join("hooks/waymark-hook")
}

fn ask(root: &Path) -> Command {
    let mut c = Command::new("sh");
    c.arg(launcher(root)).arg("--which");
    c
}

/// The line for the binary the launcher picked: its version, and whether it is this one's.
fn judge(bin: &Path, how: &str) -> (Mark, String) {
    let version = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let ours = format!("waymark {}", env!("CARGO_PKG_VERSION"));
    let runs = format!("the plugin's hooks run {}", bin.display());
    match version {
        Some(v) if v == ours => (Mark::Ok, format!("{runs} ({v}; {how})")),
        Some(v) => (
            Mark::Warn,
            format!(
                "{runs} ({v}; {how}), not this {ours}: install the one you mean (`cargo install --path <checkout>`)"
            ),
        ),
        None => (Mark::Fail, format!("{runs} ({how}), which does not start")),
    }
}

/// Claude Code's configuration directory: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    Some(PathBuf::from(std::env::var_os("HOME")?).join(".claude"))
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The directory Claude Code runs the installed plugin `id` from.
fn installed_root(config: &Path, id: &str) -> Option<PathBuf> {
    let (name, market) = id.split_once('@')?;
    let known = read_json(&config.join("plugins/known_marketplaces.json"));
    let source = known.as_ref().map(|k| &k[market]["source"]);
    if let Some(dir) = source
        .filter(|s| s["source"] == "directory")
        .and_then(|s| s["path"].as_str())
    {
        let manifest = read_json(&Path::new(dir).join(".claude-plugin/marketplace.json"))?;
        let entry = manifest["plugins"]
            .as_array()?
            .iter()
            .find(|p| p["name"] == name)?;
        return Some(Path::new(dir).join(entry["source"].as_str()?));
    }
    let installed = read_json(&config.join("plugins/installed_plugins.json"))?;
    Some(PathBuf::from(
        installed["plugins"][id][0]["installPath"].as_str()?,
    ))
}
