//! AGENT.md, where lessons are kept: a lesson added or counted under the file's lock. What
//! a lesson says and where it goes in the file are `waymark_core::governance::brain`
//! (re-exported here).

use std::io;
use std::path::Path;

use chrono::{DateTime, Utc};

pub use waymark_core::governance::brain::*;

/// Adds or counts `lesson` in the file at `path`, under the lock `lock` (see
/// `store::edit_text`).
pub fn record(
    path: &Path,
    lock: &Path,
    lesson: &Lesson,
    now: DateTime<Utc>,
) -> io::Result<Recorded> {
    let recorded =
        crate::store::edit_text(path, lock, |text| Some(with_lesson(text, lesson, now)))?;
    Ok(recorded.expect("a lesson always changes the file"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use waymark_core::governance::testing::{lesson, lesson_day as now};

    #[test]
    fn record_appends_and_rewrites_under_lock() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("AGENT.md");
        fs::write(&p, "# Agents\n").unwrap();
        let l = lesson("t", Category::Governance);
        assert_eq!(record(&p, &p, &l, now()).unwrap(), Recorded::Added);
        assert_eq!(record(&p, &p, &l, now()).unwrap(), Recorded::Seen(2));
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(text.matches("### ").count(), 1);
        assert!(text.starts_with("# Agents\n\n## Lessons Learned\n"));
        let threads: Vec<_> = (0..6)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    record(
                        &p,
                        &p,
                        &lesson(&format!("c{}", i % 3), Category::Governance),
                        now(),
                    )
                    .unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(text.matches("### ").count(), 4);
        assert_eq!(text.matches("**Seen**: 2 times").count(), 4);
    }
}
