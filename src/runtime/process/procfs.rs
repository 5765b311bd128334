//! Linux: a process as `/proc/<pid>/stat` tells it (start: field 22, clock ticks since
//! boot).

use super::Stat;

pub(super) fn stat(pid: u32) -> Option<Stat> {
    use std::io::Read;
    // Into a buffer the line fits in (a few hundred bytes; 52 numbers and a name of 16
    // at most): /proc says its files are empty, so `read_to_string` asks for the size,
    // then reads 32 bytes and doubles, a system call each (7 in all, against 2 here).
    let mut buf = [0u8; 2048];
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]).ok()? {
            0 => break,
            n => len += n,
        }
    }
    parse(std::str::from_utf8(&buf[..len]).ok()?)
}

/// Parses a `/proc/<pid>/stat` line. The command name is in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last `)`.
fn parse(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // After ")": state (field 3), ppid (4), …, starttime (22).
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(Stat { comm, ppid, start })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        let s = parse(line).unwrap();
        assert_eq!(
            (s.comm.as_str(), s.ppid, s.start),
            ("my (odd) name", 17, 987654)
        );
        assert!(parse("garbage").is_none());
    }
}
