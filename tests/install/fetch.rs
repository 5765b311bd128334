//! A plugin installed with no waymark anywhere fetches the released binary: the real
//! launcher and hooks/fetch-waymark against a local HTTP server serving a release made
//! here (the binary under test packed by `.github/release-archive`, the release workflow's
//! script, as `waymark-<target>.tar.gz` and its `.sha256`). The event that finds no binary passes at once; the binary lands in
//! `${CLAUDE_PLUGIN_DATA}/bin/waymark` and runs the next event; a wrong sum installs
//! nothing and the log says why; events during a download start no second one.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::launcher::{Checkout, OutputWith};
use crate::util::Project;

/// The release target of this machine, as the launcher names it from `uname`.
fn target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        other => panic!("no release for {other:?}"),
    }
}

pub(crate) fn archive() -> String {
    format!("waymark-{}.tar.gz", target())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A release directory as the workflow makes it, with the script it packs each target
/// with (`.github/release-archive`): the archive holding the binary under test at its
/// root, and `<archive>.sha256` in sha256sum's format; the sum is replaced by `sum` when
/// one is given (a wrong one).
pub(crate) fn release(dir: &Path, sum: Option<&str>) {
    release_of(dir, &assert_cmd::cargo::cargo_bin("waymark"), sum);
}

/// [`release`] of the program `bin`.
fn release_of(dir: &Path, bin: &Path, sum: Option<&str>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/release-archive");
    let out = std::process::Command::new(script)
        .arg(bin)
        .arg(target())
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said, format!("{}  {}\n", right_sum(dir), archive()));
    if let Some(sum) = sum {
        write_sum(dir, sum);
    }
}

/// The SHA-256 of the archive in `dir`.
pub(crate) fn right_sum(dir: &Path) -> String {
    hex(&Sha256::digest(fs::read(dir.join(archive())).unwrap()))
}

pub(crate) fn write_sum(dir: &Path, sum: &str) {
    let file = format!("{}.sha256", archive());
    fs::write(dir.join(file), format!("{sum}  {}\n", archive())).unwrap();
}

/// A GET-only HTTP server for a directory, on a thread; it notes each path asked for, and
/// holds the archive's download while `open` is false (30 s at most).
pub(crate) struct Server {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
    pub(crate) open: Arc<AtomicBool>,
}

impl Server {
    pub(crate) fn start(dir: &Path) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let open = Arc::new(AtomicBool::new(true));
        let (dir, a, o) = (dir.to_path_buf(), asked.clone(), open.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (dir, a, o) = (dir.clone(), a.clone(), o.clone());
                std::thread::spawn(move || answer(stream, &dir, &a, &o));
            }
        });
        Server { url, asked, open }
    }

    /// How many times the archive was asked for.
    pub(crate) fn archive_asked(&self) -> usize {
        let path = format!("/{}", archive());
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|p| **p == path)
            .count()
    }
}

fn answer(mut stream: TcpStream, dir: &Path, asked: &Mutex<Vec<String>>, open: &AtomicBool) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) <= 2 {
            break;
        }
    }
    asked.lock().unwrap().push(path.clone());
    if path.ends_with(".tar.gz") {
        let until = Instant::now() + Duration::from_secs(30);
        while !open.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = match fs::read(dir.join(path.trim_start_matches('/'))) {
        Ok(body) => write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .and_then(|()| stream.write_all(&body)),
        Err(_) => stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    };
}

/// The plugin as a marketplace install from a git URL has it: the plugin's directory
/// alone (no checkout, no build), a data directory, no waymark on PATH, and the release
/// URL pointing at `server`.
pub(crate) struct Installed {
    pub(crate) co: Checkout,
    pub(crate) data: PathBuf,
    url: String,
}

impl Installed {
    pub(crate) fn new(p: &Project, server: &Server) -> Installed {
        let co = Checkout::new();
        fs::remove_dir_all(co.path("target")).unwrap();
        fs::remove_file(co.path("Cargo.toml")).unwrap();
        let data = p.config.path().join("waymark-waymark");
        let url = server.url.clone();
        Installed { co, data, url }
    }

    /// The launcher run by hand (`--which`) for this install.
    pub(crate) fn launcher(&self, p: &Project, args: &[&str]) -> std::process::Command {
        self.installed(self.co.launcher(p, "waymark-waymark", args))
    }

    /// An event's hook as Claude Code runs it for this install: `sh -c` the command
    /// hooks.json registers.
    pub(crate) fn hook(&self, p: &Project, event: &str) -> std::process::Command {
        self.installed(self.co.registered(p, "waymark-waymark", event))
    }

    /// `c` with this install's environment: nothing on PATH, the release server's URL.
    pub(crate) fn installed(&self, mut c: std::process::Command) -> std::process::Command {
        c.env("PATH", self.co.search_path(false))
            .env("WAYMARK_RELEASE_URL", &self.url)
            .env("no_proxy", "127.0.0.1")
            .env("NO_PROXY", "127.0.0.1");
        c
    }

    /// An event that finds no binary: it passes, with one line on stderr (returned, with
    /// how long the launcher took).
    pub(crate) fn event(&self, p: &Project, event: &str, input: &str) -> (String, Duration) {
        let started = Instant::now();
        let out = self.hook(p, event).output_with(input);
        let took = started.elapsed();
        assert!(out.status.success(), "a hook never fails: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        (err, took)
    }

    /// `n` PostToolUse events at once.
    pub(crate) fn at_once(&self, p: &Project, n: usize) -> Vec<(String, Duration)> {
        std::thread::scope(|s| {
            let started: Vec<_> = (0..n)
                .map(|i| {
                    s.spawn(move || {
                        let event = p.write_event(&format!("{i}.txt"), "a\n");
                        self.event(p, "PostToolUse", &event)
                    })
                })
                .collect();
            started.into_iter().map(|t| t.join().unwrap()).collect()
        })
    }

    /// A PostToolUse event that runs a binary: it succeeds.
    pub(crate) fn run(&self, p: &Project, file: &str) {
        let out = self
            .hook(p, "PostToolUse")
            .output_with(&p.write_event(file, "x\n"));
        assert!(out.status.success(), "{out:?}");
    }

    pub(crate) fn bin(&self) -> PathBuf {
        self.data.join("bin/waymark")
    }

    pub(crate) fn log(&self) -> String {
        fs::read_to_string(self.data.join("waymark-fetch.log")).unwrap_or_default()
    }

    /// Waits (30 s at most) for the download under way to end.
    pub(crate) fn wait_for_the_fetch(&self) {
        wait_until(
            || !self.data.join("bin/.fetch.lock").exists(),
            || self.log(),
        );
    }
}

/// Waits (30 s at most) for `done`; `why` says what was seen when it never is.
pub(crate) fn wait_until(done: impl Fn() -> bool, why: impl Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "waited 30 s: {}", why());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn with_no_binary_the_release_is_fetched_once_checked_and_runs_the_next_event() {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);

    // Events at once, the archive's download held: one starts it, none waits for it.
    server.open.store(false, Ordering::SeqCst);
    let events = plugin.at_once(&p, 4);
    let fetching: Vec<_> = events
        .iter()
        .filter(|(err, _)| err.contains("fetching the waymark binary"))
        .collect();
    assert_eq!(fetching.len(), 1, "{events:?}");
    assert!(
        fetching[0].0.contains(target()) && fetching[0].0.contains("this event is skipped"),
        "{events:?}"
    );
    for (err, took) in &events {
        assert!(
            err.contains("fetching the waymark binary") || err.contains("still being fetched"),
            "{err}"
        );
        assert!(*took < Duration::from_secs(10), "{took:?}");
    }
    assert!(!plugin.bin().exists());
    assert!(!p.path(".orchestration/hook.json").exists());
    let (err, _) = plugin.event(&p, "Stop", "{}");
    assert!(err.contains("still being fetched"), "{err}");
    let which = plugin.launcher(&p, &["--which"]).output().unwrap();
    assert_eq!(which.status.code(), Some(1));
    let said = String::from_utf8_lossy(&which.stderr);
    assert!(said.contains("being fetched"), "doctor shows it: {said}");

    server.open.store(true, Ordering::SeqCst);
    plugin.wait_for_the_fetch();
    let mode = fs::metadata(plugin.bin()).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "executable: {mode:o}");
    assert_eq!(
        fs::read(plugin.bin()).unwrap(),
        fs::read(assert_cmd::cargo::cargo_bin("waymark")).unwrap()
    );
    assert!(plugin.log().contains("installed"), "{}", plugin.log());

    // The next event runs it.
    plugin.run(&p, "b.txt");
    assert!(p.path(".orchestration/hook.json").exists(), "the hook ran");
    let which = plugin.launcher(&p, &["--which"]).output().unwrap();
    let said = String::from_utf8_lossy(&which.stdout);
    assert!(
        said.contains("the binary kept in the plugin's data directory"),
        "{said}"
    );
    assert_eq!(server.archive_asked(), 1, "{:?}", server.asked);
}

#[test]
fn a_wrong_sum_installs_nothing_says_why_and_waits_before_trying_again() {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), Some(&"0".repeat(64)));
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);

    let (err, _) = plugin.event(&p, "Stop", "{}");
    assert!(err.contains("fetching the waymark binary"), "{err}");
    plugin.wait_for_the_fetch();
    let log = plugin.log();
    assert!(
        log.contains("SHA-256 mismatch") && log.contains("nothing installed"),
        "{log}"
    );
    assert!(!plugin.bin().exists(), "nothing installed");
    let left: Vec<_> = fs::read_dir(plugin.data.join("bin"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, [".fetch-failed"], "no download left behind");

    // The next events skip without downloading again, and point at the log.
    let (err, _) = plugin.event(&p, "Stop", "{}");
    assert!(
        err.contains("failed") && err.contains("waymark-fetch.log"),
        "{err}"
    );
    assert_eq!(server.archive_asked(), 1);
    let which = plugin.launcher(&p, &["--which"]).output().unwrap();
    let said = String::from_utf8_lossy(&which.stderr);
    assert!(
        said.contains("fetching the released one failed") && said.contains("waymark-fetch.log"),
        "doctor shows it: {said}"
    );

    // Once the wait is over (here: none) and the release is right, it is installed.
    write_sum(site.path(), &right_sum(site.path()));
    let out = plugin
        .hook(&p, "Stop")
        .env("WAYMARK_FETCH_RETRY", "0")
        .output_with("{}");
    assert!(out.status.success());
    plugin.wait_for_the_fetch();
    assert!(plugin.bin().exists(), "{}", plugin.log());
    assert_eq!(server.archive_asked(), 2);
}

/// Where a plugin whose manifest names no `repository` fetches from: the GitHub
/// repository its checkout was cloned from (a local marketplace's plugin runs in the
/// checkout; `tests/e2e/plugin.rs` proves it for a plugin Claude Code installed from
/// GitHub). A manifest's `repository` wins; an origin that is not GitHub fetches nothing.
#[test]
fn with_no_repository_named_the_release_comes_from_the_repository_the_plugin_came_from() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/.claude-plugin/plugin.json");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(manifest).unwrap()).unwrap();
    assert!(
        manifest.get("repository").is_none(),
        "the test assumes none"
    );
    let version = manifest["version"].as_str().unwrap();
    let from = |owner| format!("https://github.com/{owner}/releases/download/v{version}");
    for (origin, repository, fetched) in [
        (
            "git@github.com:someone/waymark.git",
            None,
            Some(from("someone/waymark")),
        ),
        (
            "https://github.com/someone/fork/",
            None,
            Some(from("someone/fork")),
        ),
        (
            "https://github.com/someone/fork.git",
            Some("https://github.com/publisher/waymark"),
            Some(from("publisher/waymark")),
        ),
        ("https://gitlab.com/someone/waymark.git", None, None),
        ("https://github.com/someone/waymark/tree/main", None, None),
        ("https://github.com/some one/waymark?x=1", None, None),
    ] {
        let mut m = manifest.clone();
        if let Some(repository) = repository {
            m["repository"] = repository.into();
        }
        let (said, log) = first_event_of(origin, &m);
        match fetched {
            Some(url) => {
                assert!(
                    said.contains("fetching the waymark binary"),
                    "{origin}: {said}"
                );
                let asked = format!("fetching {url}/{}", archive());
                assert!(log.unwrap().contains(&asked), "{origin}");
            }
            None => {
                assert!(said.contains("WAYMARK_RELEASE_URL"), "{origin}: {said}");
                assert!(log.is_none(), "{origin}: nothing fetched");
            }
        }
    }
}

/// The first event of a plugin with no binary, run from a checkout cloned from `origin`
/// with `manifest` as its plugin.json: what it said, and the fetch log once its download
/// failed (None: nothing was fetched). No download leaves this machine: every one goes to
/// a closed port.
fn first_event_of(origin: &str, manifest: &serde_json::Value) -> (String, Option<String>) {
    let p = Project::new();
    let co = Checkout::new();
    fs::remove_dir_all(co.path("target")).unwrap();
    crate::util::git(co.dir.path(), &["init", "-q"]);
    crate::util::git(co.dir.path(), &["remote", "add", "origin", origin]);
    let text = serde_json::to_string_pretty(manifest).unwrap();
    fs::write(co.path("plugin/.claude-plugin/plugin.json"), text).unwrap();
    let out = co
        .registered(&p, "waymark-waymark", "Stop")
        .env("PATH", co.search_path(false))
        .env("https_proxy", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .output_with("{}");
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let data = p.config.path().join("waymark-waymark");
    if !data.join("bin").exists() {
        return (said, None);
    }
    let log = || fs::read_to_string(data.join("waymark-fetch.log")).unwrap_or_default();
    wait_until(|| log().contains("could not download"), log);
    (said, Some(log()))
}

/// Sets the modification time of `path` a minute back.
fn age(path: &Path) {
    let minute_ago = std::time::SystemTime::now() - Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(minute_ago)
        .unwrap();
}

/// A program that says it is waymark 0.2.0 and runs the binary under test.
fn waymark_0_2_0(dir: &Path) -> PathBuf {
    let newer = dir.join("waymark");
    fs::create_dir_all(dir).unwrap();
    fs::write(
        &newer,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'waymark 0.2.0'; exit 0; }}\nexec '{}' \"$@\"\n",
            assert_cmd::cargo::cargo_bin("waymark").display()
        ),
    )
    .unwrap();
    fs::set_permissions(&newer, fs::Permissions::from_mode(0o755)).unwrap();
    newer
}

#[test]
fn a_binary_fetched_before_the_plugin_was_updated_serves_while_the_new_one_is_fetched() {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);
    plugin.event(&p, "Stop", "{}");
    plugin.wait_for_the_fetch();
    let note = plugin.data.join("bin/waymark.fetched");
    assert_eq!(fs::read_to_string(&note).unwrap(), "0.1.0\n");

    // The plugin is updated to 0.2.0, whose release is another program.
    let newer = waymark_0_2_0(&site.path().join("newer"));
    release_of(site.path(), &newer, None);
    let manifest = plugin.co.path("plugin/.claude-plugin/plugin.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, text.replace("\"0.1.0\"", "\"0.2.0\"")).unwrap();
    age(&note);

    // The event runs the binary there is, and the new one replaces it.
    plugin.run(&p, "a.txt");
    assert!(p.path(".orchestration/hook.json").exists(), "the hook ran");
    wait_until(
        || fs::read_to_string(&note).unwrap() == "0.2.0\n",
        || plugin.log(),
    );
    plugin.wait_for_the_fetch();
    assert_eq!(fs::read(plugin.bin()).unwrap(), fs::read(&newer).unwrap());
    assert_eq!(server.archive_asked(), 2);

    // The manifest rewritten with the same version: the note is refreshed, nothing fetched.
    age(&note);
    plugin.run(&p, "b.txt");
    let modified = |f: &Path| fs::metadata(f).unwrap().modified().unwrap();
    wait_until(|| modified(&note) >= modified(&manifest), || plugin.log());
    plugin.wait_for_the_fetch();
    assert_eq!(server.archive_asked(), 2);
}

/// A directory of links to the system's `tools`, for a PATH holding only them; `None`
/// when one is missing.
fn only(tools: &[&str]) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    for tool in tools {
        let found = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|f| f.is_file())?;
        std::os::unix::fs::symlink(found, dir.path().join(tool)).unwrap();
    }
    Some(dir)
}

/// macOS has no sha256sum, and some Linux machines no curl: wget and `shasum -a 256` do.
#[test]
fn without_curl_or_sha256sum_wget_and_shasum_fetch_and_check_it() {
    let tools = [
        "sh", "uname", "sed", "head", "date", "mkdir", "cat", "rm", "mv", "chmod", "tar", "gzip",
        "tr", "touch", "find", "wget", "shasum",
    ];
    let Some(bin) = only(&tools) else {
        eprintln!("skipped: this machine lacks one of {tools:?}");
        return;
    };
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);
    let path = format!(
        "{}:{}",
        plugin.co.path("plugin/bin").display(),
        bin.path().display()
    );
    let out = plugin.hook(&p, "Stop").env("PATH", &path).output_with("{}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fetching the waymark binary"), "{err}");
    plugin.wait_for_the_fetch();
    let sum = hex(&Sha256::digest(
        fs::read(site.path().join(archive())).unwrap(),
    ));
    let log = plugin.log();
    assert!(log.contains(&format!("SHA-256 {sum}")), "{log}");
    assert!(plugin.bin().exists(), "{log}");
    assert_eq!(server.archive_asked(), 1);
}
