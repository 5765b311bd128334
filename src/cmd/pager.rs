//! Long output through a pager, as `git log` does: `$PAGER` (else `less -FRX`, which
//! quits at once when the text fits the screen), only when stdout is a terminal; piped
//! output, and tests, get the text as it is.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use waymark_redact::Clean;

/// Whether output may be coloured: stdout is a terminal and `NO_COLOR` is not set.
pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Prints `text` (redacted), through the pager when stdout is a terminal.
pub fn show(text: &str) {
    let clean = Clean::text(text);
    let shown = waymark_core::text::for_terminal(clean.as_str());
    if std::io::stdout().is_terminal() && page(&shown) {
        return;
    }
    super::terminal(&shown);
}

/// Hands `text` to the pager and waits for it; false when there is none to run.
fn page(text: &str) -> bool {
    let pager = std::env::var("PAGER").unwrap_or_default();
    let pager = match pager.trim() {
        "" => "less -FRX",
        "cat" => return false,
        p => p,
    };
    // A reader who quits early closes the pipe: the write fails, waymark does not die.
    super::finish_on_closed_stdout();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", pager]).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        cmd.env("LESS", "FRX");
    }
    let Ok(mut child) = cmd.spawn() else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // The reader may quit before the end (q in less): not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    true
}
