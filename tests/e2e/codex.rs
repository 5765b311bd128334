//! Codex CLI in the e2e suite: the pinned release installed from npm into
//! `<repo>/.e2e/codex-<version>` once, its native binary run directly (a SIGKILL to the
//! npm wrapper would leave it running), `CODEX_HOME` in the sandbox with a model provider
//! pointed at [`CodexApi`], and waymark registered by `waymark init --agent codex` in the
//! project's `.codex/hooks.json`. Every run is bounded: Codex retries a dead provider
//! forever.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

use crate::codex_api::CodexApi;
use crate::harness::{Sandbox, kill_group, repo_root};

/// The Codex CLI release the suite runs.
pub const CODEX_VERSION: &str = "0.169.0";
/// The most one `codex exec` may take.
pub const CODEX_TIMEOUT: Duration = Duration::from_secs(60);

/// The native `codex` binary, installed on first use; `None` (with a note) when npm or
/// the package is not available (a failure under CI).
pub fn codex() -> Option<&'static PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| match install() {
        Ok(p) => Some(p),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "e2e: no Codex CLI: {e}");
            eprintln!("e2e: skipping the Codex CLI scenarios: {e}");
            None
        }
    })
    .as_ref()
}

fn install() -> Result<PathBuf, String> {
    let dir = repo_root()
        .join(".e2e")
        .join(format!("codex-{CODEX_VERSION}"));
    let bin =
        dir.join("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    if bin.is_file() {
        return Ok(bin);
    }
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err("the suite runs Codex's linux-x64 binary only".into());
    }
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let spec = format!("@openai/codex@{CODEX_VERSION}");
    eprintln!("e2e: installing {spec} into {} (npm)", dir.display());
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg(&spec)
        .output()
        .map_err(|e| format!("cannot run npm ({e})"))?;
    if !out.status.success() || !bin.is_file() {
        return Err(format!(
            "`npm install {spec}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(bin)
}

/// One finished `codex exec`.
#[derive(Debug)]
pub struct CodexRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Codex's home in the sandbox.
pub fn codex_home(sb: &Sandbox) -> PathBuf {
    sb.root.join("codex-home")
}

/// Registers waymark in the project's `.codex/hooks.json` with `waymark init --agent
/// codex`, asserting it worked.
pub fn register(sb: &Sandbox) {
    let out = sb.waymark(&["init", "--agent", "codex"]);
    assert!(
        out.status.success(),
        "waymark init --agent codex: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `$CODEX_HOME/config.toml`: the fake provider at `api`, the project trusted (so
/// its `.codex/hooks.json` loads), no retries.
fn configure(sb: &Sandbox, api: &CodexApi) {
    let home = codex_home(sb);
    fs::create_dir_all(&home).unwrap();
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"danger-full-access\"\n\n\
         [model_providers.fake]\nname = \"Fake\"\nbase_url = \"{}\"\nwire_api = \"responses\"\n\
         request_max_retries = 0\nstream_max_retries = 0\n\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        api.base_url(),
        sb.project.display()
    );
    fs::write(home.join("config.toml"), config).unwrap();
    // Codex runs shell calls in a login shell, whose profile sets PATH anew: waymark is
    // put on it there, as a user's profile would (`~/.cargo/bin`).
    let waymark_dir = Path::new(env!("CARGO_BIN_EXE_waymark")).parent().unwrap();
    let profile = format!("export PATH=\"{}:$PATH\"\n", waymark_dir.display());
    fs::write(sb.home.join(".profile"), profile).unwrap();
}

/// The native `codex` against `api`, in the project, with the scratch environment;
/// waymark's directory first on PATH, as an installed waymark would be. What `codex exec`
/// and the interactive TUI ([`crate::codex_tui`]) share.
pub fn base_command(sb: &Sandbox, api: &CodexApi) -> Command {
    configure(sb, api);
    let bin = codex().expect("checked by the caller");
    let waymark_dir = Path::new(env!("CARGO_BIN_EXE_waymark")).parent().unwrap();
    let path = format!(
        "{}:{}",
        waymark_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new(bin);
    c.current_dir(&sb.project)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &sb.home)
        .env("XDG_CONFIG_HOME", sb.home.join(".config"))
        .env("CODEX_HOME", codex_home(sb))
        .env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/bash");
    c
}

/// The `codex exec …` command against `api` ([`base_command`]), its output in the logs,
/// in a process group of its own.
pub fn command(sb: &Sandbox, api: &CodexApi, args: &[&str]) -> Command {
    let n = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    let mut c = base_command(sb, api);
    c.arg("exec")
        .arg("--dangerously-bypass-hook-trust")
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(sb.logs.join(format!("codex-{n}.stdout"))).unwrap())
        .stderr(File::create(sb.logs.join(format!("codex-{n}.stderr"))).unwrap())
        .process_group(0);
    c
}

/// Starts `codex exec` in its own process group and returns at once.
pub fn spawn(sb: &Sandbox, api: &CodexApi, args: &[&str]) -> Child {
    command(sb, api, args).spawn().expect("spawn codex")
}

/// Runs `codex exec` to its end, killed (and the test failed) after [`CODEX_TIMEOUT`].
pub fn run(sb: &Sandbox, api: &CodexApi, args: &[&str]) -> CodexRun {
    let mut child = spawn(sb, api, args);
    let n = RUNS.load(Ordering::SeqCst);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > CODEX_TIMEOUT {
            kill_group(child.id());
            let _ = child.wait();
            panic!(
                "codex {args:?} did not finish in {CODEX_TIMEOUT:?}\n{}",
                diagnose(sb, api)
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    let read = |ext: &str| {
        fs::read_to_string(sb.logs.join(format!("codex-{n}.{ext}"))).unwrap_or_default()
    };
    CodexRun {
        status,
        stdout: read("stdout"),
        stderr: read("stderr"),
    }
}

/// Runs `codex exec` and asserts it ended well with `expected` in its output.
pub fn run_ok(sb: &Sandbox, api: &CodexApi, args: &[&str], expected: &str) -> CodexRun {
    let run = run(sb, api, args);
    assert!(
        run.status.success() && run.stdout.contains(expected),
        "codex {args:?} did not end with {expected:?}: {}\nstdout: {}\nstderr: {}\n{}",
        run.status,
        run.stdout,
        run.stderr,
        diagnose(sb, api)
    );
    run
}

/// The sandbox's files and the requests the fake API saw, for failure messages.
pub fn diagnose(sb: &Sandbox, api: &CodexApi) -> String {
    format!(
        "{}\n--- fake Responses API requests:\n{}",
        sb.diagnose_files(),
        api.describe()
    )
}

/// A shell call that writes its shell's pid to `pid` and sleeps: the turn is mid-way
/// while it runs.
pub fn sleeping(pid: &Path) -> String {
    format!(
        "echo $$ > {0}.tmp && mv {0}.tmp {0} && sleep 30",
        pid.display()
    )
}

/// A patch that adds `path` with `lines`.
pub fn add_file(path: &str, lines: &[&str]) -> String {
    let body: String = lines.iter().map(|l| format!("+{l}\n")).collect();
    format!("*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n")
}
