//! Running a validation command for `waymark validate`: its stdin is passed on, its stdout
//! and stderr stream through to ours byte for byte while being hashed (one thread per
//! stream, so neither pipe can fill up and stall the other), and the end of the output is
//! kept for a failure lesson.

use std::io::{self, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

/// Exit code when the command does not exist (as a shell reports it).
pub const NOT_FOUND: i32 = 127;
/// Exit code when the command exists but cannot be run.
pub const CANNOT_RUN: i32 = 126;
/// How much of the end of the combined output is kept.
const TAIL_BYTES: usize = 8 * 1024;

/// What running the command produced.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The command's exit code; 128 + N when killed by signal N; 127 / 126 when it could
    /// not be started.
    pub exit_code: i32,
    pub started_at: DateTime<Utc>,
    pub completed_at: DateTime<Utc>,
    pub duration: std::time::Duration,
    pub stdout_hash: String,
    pub stderr_hash: String,
    /// The last few KiB of stdout and stderr as they arrived (unredacted).
    pub tail: Vec<u8>,
    /// Why the command could not be started, if it could not.
    pub start_error: Option<String>,
}

/// Runs `argv` (program and arguments), streaming its output to ours and hashing it.
pub fn run(argv: &[String]) -> Ran {
    run_to(argv, io::stdout(), io::stderr())
}

/// [`run`], with the command's stdout and stderr copied to `out` and `err`.
pub fn run_to(
    argv: &[String],
    out: impl Write + Send + 'static,
    err: impl Write + Send + 'static,
) -> Ran {
    let started_at = Utc::now();
    let clock = Instant::now();
    let empty = super::sha256_hex(b"");
    let spawned = match argv.split_first() {
        Some((program, args)) => spawn(program, args),
        None => Err((NOT_FOUND, "no command given".into())),
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err((exit_code, why)) => {
            return Ran {
                exit_code,
                started_at,
                completed_at: Utc::now(),
                duration: clock.elapsed(),
                stdout_hash: empty.clone(),
                stderr_hash: empty,
                tail: why.clone().into_bytes(),
                start_error: Some(why),
            };
        }
    };
    let tail = Arc::new(Mutex::new(Vec::new()));
    let out = child.stdout.take().map(|s| {
        let tail = Arc::clone(&tail);
        thread::spawn(move || pump(s, out, &tail))
    });
    let err = child.stderr.take().map(|s| {
        let tail = Arc::clone(&tail);
        thread::spawn(move || pump(s, err, &tail))
    });
    let join = |h: Option<thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok())
            .unwrap_or_else(|| empty.clone())
    };
    let stdout_hash = join(out);
    let stderr_hash = join(err);
    let exit_code = match child.wait() {
        Ok(status) => status.code().unwrap_or(128 + status.signal().unwrap_or(0)),
        Err(_) => CANNOT_RUN,
    };
    let duration = clock.elapsed();
    let tail = std::mem::take(&mut *tail.lock().unwrap_or_else(|p| p.into_inner()));
    Ran {
        exit_code,
        started_at,
        completed_at: Utc::now(),
        duration,
        stdout_hash,
        stderr_hash,
        tail,
        start_error: None,
    }
}

/// Starts `program` with our stdin and its output piped; the error is the exit code a
/// shell would give (127 not found, 126 cannot run) and why.
fn spawn(program: &str, args: &[String]) -> Result<Child, (i32, String)> {
    Command::new(program)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => (NOT_FOUND, format!("command not found: {program}")),
            _ => (CANNOT_RUN, format!("cannot run {program}: {e}")),
        })
}

/// Copies `from` to `to` chunk by chunk as it arrives, hashing it and keeping its end.
/// Once `to` is gone (a closed pipe), the rest is still read and hashed, so the command
/// never blocks on a full pipe and the hash is of all it wrote.
fn pump(mut from: impl Read, mut to: impl Write, tail: &Mutex<Vec<u8>>) -> String {
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut forward = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        hash.update(chunk);
        if forward {
            forward = to.write_all(chunk).and_then(|()| to.flush()).is_ok();
        }
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        t.extend_from_slice(chunk);
        if t.len() > 2 * TAIL_BYTES {
            let cut = t.len() - TAIL_BYTES;
            t.drain(..cut);
        }
    }
    waymark_core::text::hex(&hash.finalize())
}

/// The argv as one shell-readable line (what the receipt records as `command`): words
/// that need it are single-quoted, so `sh -c 'echo ok'` reads back as it was typed.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn bytes(&self) -> Vec<u8> {
            self.0.lock().unwrap().clone()
        }
    }

    /// Runs with both streams captured.
    fn capture(v: &[&str]) -> (Ran, Vec<u8>, Vec<u8>) {
        let (out, err) = (Shared::default(), Shared::default());
        let r = run_to(&argv(v), out.clone(), err.clone());
        (r, out.bytes(), err.bytes())
    }

    /// A writer that is gone, like a closed pipe.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn hashes_both_streams_and_keeps_the_exit_code() {
        let (r, out, err) = capture(&["sh", "-c", "printf out; printf err >&2; exit 3"]);
        assert_eq!((out.as_slice(), err.as_slice()), (&b"out"[..], &b"err"[..]));
        assert_eq!(r.exit_code, 3);
        assert_eq!(r.stdout_hash, waymark_core::receipt::sha256_hex(b"out"));
        assert_eq!(r.stderr_hash, waymark_core::receipt::sha256_hex(b"err"));
        let tail = String::from_utf8(r.tail).unwrap();
        assert!(tail.contains("out") && tail.contains("err"));
        assert!(r.completed_at >= r.started_at);
        assert!(r.start_error.is_none());
    }

    #[test]
    fn large_output_on_both_streams_does_not_stall_and_tail_is_bounded() {
        let (r, out, err) = capture(&[
            "sh",
            "-c",
            "head -c 300000 /dev/zero >&2; head -c 300000 /dev/zero | tr '\\0' a",
        ]);
        assert_eq!(r.exit_code, 0);
        // Passed through unchanged, byte for byte.
        assert_eq!(out, vec![b'a'; 300_000]);
        assert_eq!(err, vec![0u8; 300_000]);
        assert_eq!(
            r.stdout_hash,
            waymark_core::receipt::sha256_hex(&vec![b'a'; 300_000])
        );
        assert_eq!(
            r.stderr_hash,
            waymark_core::receipt::sha256_hex(&vec![0u8; 300_000])
        );
        assert!(r.tail.len() <= 2 * TAIL_BYTES);
    }

    #[test]
    fn signals_and_missing_commands_map_to_shell_codes() {
        let (r, _, _) = capture(&["sh", "-c", "kill -TERM $$"]);
        assert_eq!(r.exit_code, 128 + 15);
        let (r, _, _) = capture(&["waymark-no-such-command-xyz"]);
        assert_eq!(r.exit_code, NOT_FOUND);
        assert!(r.start_error.unwrap().contains("command not found"));
        assert_eq!(r.stdout_hash, waymark_core::receipt::sha256_hex(b""));
    }

    #[test]
    fn a_closed_output_still_drains_and_hashes_everything() {
        let r = run_to(
            &argv(&["sh", "-c", "head -c 200000 /dev/zero; echo done >&2"]),
            Closed,
            Closed,
        );
        assert_eq!(r.exit_code, 0);
        assert_eq!(
            r.stdout_hash,
            waymark_core::receipt::sha256_hex(&vec![0u8; 200_000])
        );
        assert_eq!(r.stderr_hash, waymark_core::receipt::sha256_hex(b"done\n"));
    }

    #[test]
    fn shell_join_quotes_only_what_needs_it() {
        assert_eq!(
            shell_join(&argv(&["sh", "-c", "echo ok; exit 0"])),
            "sh -c 'echo ok; exit 0'"
        );
        assert_eq!(
            shell_join(&argv(&["cargo", "test", "--lib"])),
            "cargo test --lib"
        );
        assert_eq!(
            shell_join(&argv(&["echo", "it's", ""])),
            r"echo 'it'\''s' ''"
        );
    }
}
