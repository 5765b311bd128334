//! Durable file primitives: atomic replace, locked append, tail read.
//!
//! Every file waymark keeps is written through these three functions, so the rules of
//! DESIGN.md ("nothing lost") live in one place: a replaced file is never seen half
//! written, an appended record is one `write` under a lock, a reader of a JSONL file reads
//! only the tail it needs and tolerates a torn last line.

mod append;
mod atomic;
mod lock;
mod tail;

pub use append::{append_line, append_text};
pub use atomic::{Durability, write_atomic, write_atomic_with};
pub use lock::{FileLock, LockError};
pub use tail::{TailLines, read_tail_lines};
