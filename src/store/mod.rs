//! Where waymark's files are ([`project`]), and the durable file primitives: atomic
//! replace, locked append, tail read.
//!
//! Every path into the project's files waymark writes on the project's word (a rewind's,
//! the lessons file, `init`'s) is judged where it really lands by [`landing`] first.
//!
//! Every file waymark keeps is written through the functions of this room, so the rules of
//! docs/design.md (rule 2, "nothing lost") live in one place: a replaced file is never
//! seen half written, an appended record is one `write` under a lock, a reader of a JSONL
//! file reads only the tail it needs and tolerates a torn last line.
//!
//! The rule of this room: nothing here knows what a file holds; nothing outside it opens
//! a file of waymark's for writing by other means; and what a record writer takes is a
//! [`Clean`](waymark_redact::Clean), so nothing reaches a file unredacted (only
//! [`write_verbatim`] takes plain bytes, for the user's own files).

mod append;
mod atomic;
pub mod deadline;
mod dir;
mod edit;
pub mod faults;
mod hash;
pub mod landing;
mod lock;
pub mod log;
mod nofollow;
pub mod project;
mod tail;

pub use append::{
    append_after, append_chained, append_line, append_lines, append_text, sync_appended,
};
pub use atomic::{
    remove_stale_temps, replace_keeping_previous, swap_name, write_atomic, write_regenerable,
    write_regenerable_if_changed, write_replaceable, write_verbatim,
};
pub use dir::make_dir;
pub use edit::{edit_text, open_in_place};
pub use hash::sha256_file;
pub use lock::{FileLock, LOCK_TIMEOUT, LockError};
pub use nofollow::{open as open_nofollow, read, read_at_most, refuse_symlink};
pub use tail::{TailLines, find_before, find_from_end, open_regular, read_tail_lines};

/// `r`, with a missing file (`NotFound`) as `None`.
pub fn found<T>(r: std::io::Result<T>) -> std::io::Result<Option<T>> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        r => r.map(Some),
    }
}

/// Removes the file at `path`; one already gone is fine.
pub fn remove_if_there(path: &std::path::Path) -> std::io::Result<()> {
    found(std::fs::remove_file(path)).map(drop)
}
