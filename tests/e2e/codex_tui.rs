//! The interactive Codex TUI under a pseudo-terminal. `codex exec` has no slash commands:
//! what a user does only in the TUI (`/clear`) is done here by typing into the real TUI, as
//! a user would, with the same binary, environment and config as [`crate::codex`].
//!
//! The TUI asks its terminal questions at startup and waits for the answers (the keyboard
//! protocol `ESC[?u`, `ESC[c`, the cursor `ESC[6n`, the colours `OSC 10/11`): the reader
//! thread answers them as a terminal would. Codex tells the terminal what it is doing with
//! `OSC 7501;state=…`: `working` while a turn runs, then `done`, `idle`, or `done` then
//! `idle` (all three seen). Keys are typed one at a time, 25 ms apart, with a pause before
//! Enter: keys that come faster are taken for a paste, where Enter is a new line and not a
//! submit.
//!
//! Every wait is bounded; a [`Tui`] kills its process group when it is dropped, so a failed
//! assertion does not leave Codex running.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use regex::bytes::Regex;

use crate::codex::{base_command, codex_home, diagnose};
use crate::codex_api::CodexApi;
use crate::harness::{Sandbox, kill_group};

/// The first-run screens of the TUI, marked as seen (what the TUI writes to config.toml
/// once the user has answered them): the model-upgrade offer for `gpt-5.5`, the new-model
/// notice, the screen-reader check.
const TUI_CONFIG: &str = "\n[tui]\nscreen_reader_detection_done = true\n\n\
    [tui.model_availability_nux]\n\"gpt-6.1-sol\" = 1\n\n\
    [notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n";

/// The terminal's answers to the TUI's questions.
const ANSWERS: &[(&[u8], &[u8])] = &[
    (b"\x1b[?u", b"\x1b[?0u"),
    (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b[6n", b"\x1b[1;1R"),
    (b"\x1b]10;?", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
];

/// The pseudo-terminal's size.
const ROWS: u16 = 40;
const COLS: u16 = 120;

/// One interactive Codex, running until dropped, with the sandbox and the fake API a
/// failure reports.
pub struct Tui<'a> {
    sb: &'a Sandbox,
    api: &'a CodexApi,
    child: Child,
    /// The terminal's side: what is typed.
    keys: File,
    /// Everything the TUI wrote to its terminal.
    output: Arc<Mutex<Vec<u8>>>,
    /// Where [`Tui::mark`] was set in `output`: the waits look after it.
    mark: usize,
    raw_log: PathBuf,
}

/// Starts `codex --dangerously-bypass-hook-trust` against `api` in a new pseudo-terminal
/// (its controlling terminal, in a session and process group of its own).
pub fn start<'a>(sb: &'a Sandbox, api: &'a CodexApi) -> Tui<'a> {
    let mut command = base_command(sb, api);
    let mut config = OpenOptions::new()
        .append(true)
        .open(codex_home(sb).join("config.toml"))
        .unwrap();
    config.write_all(TUI_CONFIG.as_bytes()).unwrap();
    let (master, slave) = open_pty();
    let slave = File::from(slave);
    command
        .arg("--dangerously-bypass-hook-trust")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    // SAFETY: setsid and ioctl are async-signal-safe; fd 0 is the terminal by then.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().expect("spawn the codex TUI");
    // The terminal's slave side lives on in the child only: once it is gone, reads end.
    drop(command);
    let master = File::from(master);
    let raw_log = sb.logs.join("codex-tui.raw");
    let output = Arc::new(Mutex::new(Vec::new()));
    let (reader, answers, log) = (
        master.try_clone().unwrap(),
        master.try_clone().unwrap(),
        File::create(&raw_log).unwrap(),
    );
    let shared = output.clone();
    thread::spawn(move || pump(reader, answers, log, &shared));
    Tui {
        sb,
        api,
        child,
        keys: master,
        output,
        mark: 0,
        raw_log,
    }
}

/// The name of the slave side of the pseudo-terminal whose master is `fd`.
#[cfg(target_os = "linux")]
unsafe fn pts_name(fd: libc::c_int) -> std::ffi::CString {
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the buffer is ours and its length is passed.
    assert_eq!(
        unsafe { libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) },
        0
    );
    // SAFETY: ptsname_r wrote a NUL-terminated name into the buffer.
    unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_owned()
}

/// The same where the libc crate binds only `ptsname` (macOS, where the suite's Codex
/// does not run: the binary it installs is Linux's); its buffer is copied at once.
#[cfg(not(target_os = "linux"))]
unsafe fn pts_name(fd: libc::c_int) -> std::ffi::CString {
    // SAFETY: ptsname returns a NUL-terminated name, or null on an error.
    let name = unsafe { libc::ptsname(fd) };
    assert!(!name.is_null(), "ptsname");
    // SAFETY: not null, NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr(name) }.to_owned()
}

/// A new pseudo-terminal of [`ROWS`] × [`COLS`]: its master and slave sides.
fn open_pty() -> (OwnedFd, OwnedFd) {
    // SAFETY: plain libc calls on descriptors this function owns; each is checked.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        let master = OwnedFd::from_raw_fd(master);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&master);
        assert!(libc::grantpt(fd) == 0 && libc::unlockpt(fd) == 0, "grantpt");
        let name = pts_name(fd);
        let slave = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(slave >= 0, "open pts: {}", std::io::Error::last_os_error());
        let size = libc::winsize {
            ws_row: ROWS,
            ws_col: COLS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        assert_eq!(libc::ioctl(slave, libc::TIOCSWINSZ as _, &size), 0);
        (master, OwnedFd::from_raw_fd(slave))
    }
}

/// Reads what the TUI writes until its terminal closes: kept in `output` and `log`, and
/// each question answered once.
fn pump(mut reader: File, mut answers: File, mut log: File, output: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 16384];
    let mut scanned = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO: the TUI and everything holding its terminal are gone.
            Err(_) => break,
        };
        let _ = log.write_all(&buf[..n]);
        let mut all = output.lock().unwrap();
        all.extend_from_slice(&buf[..n]);
        scanned = answer(&all, scanned, &mut answers);
    }
}

/// Answers the questions in `all` from `from` on, in their order; returns where the next
/// look starts (a question cut in two by the reads is found whole next time).
fn answer(all: &[u8], from: usize, to: &mut File) -> usize {
    let mut found: Vec<(usize, usize, &[u8])> = Vec::new();
    for (question, reply) in ANSWERS {
        let mut at = from;
        while let Some(p) = find(&all[at..], question) {
            found.push((at + p, at + p + question.len(), reply));
            at += p + question.len();
        }
    }
    found.sort_by_key(|f| f.0);
    let longest = ANSWERS.iter().map(|(q, _)| q.len()).max().unwrap_or(1);
    let mut next = all.len().saturating_sub(longest - 1).max(from);
    for (_, end, reply) in found {
        let _ = to.write_all(reply);
        next = next.max(end);
    }
    next
}

/// The states the TUI told its terminal in `raw` (`OSC 7501;state=S[:app=codex]`), in order.
fn states(raw: &[u8]) -> Vec<String> {
    static STATE: OnceLock<Regex> = OnceLock::new();
    let re = STATE.get_or_init(|| Regex::new(r"\x1b\]7501;state=([a-z_]+)").unwrap());
    re.captures_iter(raw)
        .map(|c| String::from_utf8_lossy(&c[1]).into_owned())
        .collect()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The text of terminal output: cursor moves to a line start become new lines, other
/// control sequences go.
pub fn text(raw: &[u8]) -> String {
    static RES: OnceLock<[Regex; 3]> = OnceLock::new();
    let [goto, csi, osc] = RES.get_or_init(|| {
        [
            Regex::new(r"\x1b\[\d+;\d+H").unwrap(),
            Regex::new(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]").unwrap(),
            Regex::new(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)").unwrap(),
        ]
    });
    let t = goto.replace_all(raw, &b"\n"[..]);
    let t = csi.replace_all(&t, &b""[..]);
    let t = osc.replace_all(&t, &b""[..]);
    String::from_utf8_lossy(&t).into_owned()
}

impl Tui<'_> {
    /// From now on, the waits look only at what the TUI writes next.
    pub fn mark(&mut self) {
        self.mark = self.output.lock().unwrap().len();
    }

    /// Waits up to `timeout` for `needle` in the TUI's text since the mark.
    pub fn wait_text(&self, needle: &str, timeout: Duration) -> bool {
        self.wait(timeout, |raw| text(raw).contains(needle))
    }

    /// Waits up to `timeout` for the TUI to tell its terminal (`OSC 7501`), since the
    /// mark, that a turn runs.
    pub fn wait_working(&self, timeout: Duration) -> bool {
        self.wait(timeout, |raw| states(raw).iter().any(|s| s == "working"))
    }

    /// Waits up to `timeout` for the TUI to tell its terminal, since the mark, that a turn
    /// ran and is over: `working`, then `done` or `idle` (either comes, or both).
    pub fn wait_turn_over(&self, timeout: Duration) -> bool {
        self.wait(timeout, |raw| {
            let states = states(raw);
            states.iter().any(|s| s == "working")
                && states.last().is_some_and(|s| s == "done" || s == "idle")
        })
    }

    fn wait(&self, timeout: Duration, cond: impl Fn(&[u8]) -> bool) -> bool {
        let start = Instant::now();
        loop {
            if cond(&self.output.lock().unwrap()[self.mark..]) {
                return true;
            }
            if start.elapsed() > timeout {
                return false;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` one at a time, as a person would (not a paste).
    pub fn type_keys(&mut self, keys: &str) {
        for c in keys.chars() {
            let mut b = [0u8; 4];
            self.keys
                .write_all(c.encode_utf8(&mut b).as_bytes())
                .unwrap();
            thread::sleep(Duration::from_millis(25));
        }
        // A pause before Enter, so that it is not taken for part of a paste.
        thread::sleep(Duration::from_millis(400));
    }

    pub fn enter(&mut self) {
        self.keys.write_all(b"\r").unwrap();
    }

    /// Types a slash command, waits for the TUI to offer it (`described`: the text its
    /// menu shows for it) and runs it; the mark is set before Enter.
    pub fn command(&mut self, command: &str, described: &str) {
        self.mark();
        self.type_keys(command);
        let offered = self.wait_text(described, Duration::from_secs(10));
        self.ensure(offered, &format!("the TUI did not offer {command}"));
        self.mark();
        self.enter();
    }

    /// Submits a prompt and waits for the turn to start: the mark is set before it.
    pub fn submit(&mut self, prompt: &str) {
        self.mark();
        self.type_keys(prompt);
        self.enter();
        let started = self.wait_working(Duration::from_secs(20));
        self.ensure(started, &format!("{prompt:?} did not start a turn"));
    }

    /// Fails the test unless `ok`: the TUI killed, what it showed and what the sandbox and
    /// the fake API hold.
    pub fn ensure(&mut self, ok: bool, what: &str) {
        if !ok {
            self.kill();
            panic!("{what}\n{}", self.diagnose());
        }
    }

    /// What a failure reports: the end of the screen, the sandbox, the requests.
    pub fn diagnose(&self) -> String {
        format!("{}\n{}", self.screen(), diagnose(self.sb, self.api))
    }

    /// Waits up to `timeout` for the TUI to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// The end of the TUI's text, for failure messages (all of it is in `raw_log`).
    pub fn screen(&self) -> String {
        let all = text(&self.output.lock().unwrap());
        let lines: Vec<&str> = all.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(60)..].join("\n");
        format!(
            "--- the TUI's last lines (all its output: {}):\n{tail}",
            self.raw_log.display()
        )
    }

    /// Kills the TUI's process group.
    pub fn kill(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

impl Drop for Tui<'_> {
    /// Whatever it left running (it may have exited already) goes with it.
    fn drop(&mut self) {
        self.kill();
    }
}
