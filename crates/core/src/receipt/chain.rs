//! The receipt chain: each receipt names its task and the link of the receipt before it,
//! and hook.json keeps the authenticated head (how many receipts, the last one's link), so that
//! `waymark receipts --verify` sees a receipt replayed from another task, receipts
//! reordered, and receipts deleted from the middle or the end of the log (docs/receipts.md).
//!
//! A link is the SHA-256 of the receipt as stored (its JSON, every field, the signature
//! included). Receipts older than the chain (signature versions 1 and 2) carry neither
//! task nor link: they are reported as unchained, and the chain starts after them.

use serde::{Deserialize, Serialize};

use super::signer::ReceiptSigner;
use super::{ValidationReceipt, sha256_hex};

/// The first signature version whose receipts are chained.
pub const CHAINED_SINCE: u32 = 3;

/// The link of a receipt: what the next receipt's `prev` names.
pub fn link(r: &ValidationReceipt) -> String {
    sha256_hex(&serde_json::to_vec(r).expect("a receipt serializes"))
}

/// Of `unsynced`, the newest receipts of a chain in order (hook.json's
/// `unsynced_receipts`), those its log does not hold, given the log's last receipt `last`:
/// what a power cut took from the end of the log before it reached the disk. Nothing when
/// the log ends with one of them, or with anything else than the receipt before them (a
/// receipt a killed save appended after them is not a loss, and nothing is given twice).
pub fn unlogged<'a>(
    unsynced: &'a [ValidationReceipt],
    last: Option<&ValidationReceipt>,
) -> &'a [ValidationReceipt] {
    let Some(first) = unsynced.first() else {
        return &[];
    };
    let before = last.map(link).unwrap_or_default();
    match last.and_then(|l| unsynced.iter().position(|r| r.receipt_id == l.receipt_id)) {
        Some(i) => &unsynced[i + 1..],
        None if first.prev == before => unsynced,
        None => &[],
    }
}

/// The authenticated end of a task's chain, kept in hook.json: a receipt cut from the end
/// of the log leaves the head naming more receipts, or another last link, than the log
/// has, and the head cannot be rewritten to match without the master key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptHead {
    /// How many chained receipts the task has.
    pub count: u64,
    /// The link of the last one.
    pub link: String,
    pub key_path: String,
    /// Hex HMAC-SHA256 of [`ReceiptHead::message`] under the task's head key
    /// ([`ReceiptSigner::mac`]); empty when no key was usable.
    #[serde(default)]
    pub mac: String,
}

impl ReceiptHead {
    /// The head after `r` was added to a chain whose head was `before`.
    pub fn after(before: Option<&ReceiptHead>, r: &ValidationReceipt) -> ReceiptHead {
        ReceiptHead {
            count: before.map_or(0, |h| h.count) + 1,
            link: link(r),
            key_path: r.key_path.clone(),
            mac: String::new(),
        }
    }

    /// The authenticated bytes: `waymark-receipt-head/1\n` then `task_id`, `count`, `link`
    /// and `key_path` as `name:<byte length>:<value>\n` lines (the receipts' encoding).
    pub fn message(&self, task_id: &str) -> Vec<u8> {
        let count = self.count.to_string();
        super::fields_message(
            "waymark-receipt-head/1",
            &[
                ("task_id", task_id),
                ("count", &count),
                ("link", &self.link),
                ("key_path", &self.key_path),
            ],
        )
    }

    pub fn seal(&mut self, signer: &dyn ReceiptSigner, task_id: &str) {
        self.mac = signer.mac(&self.key_path, &self.message(task_id));
    }

    /// Whether the head's MAC holds (compared in constant time).
    pub fn holds(&self, signer: &dyn ReceiptSigner, task_id: &str) -> bool {
        let expected = signer.mac(&self.key_path, &self.message(task_id));
        expected.len() == self.mac.len()
            && expected
                .bytes()
                .zip(self.mac.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// Something wrong with the order or completeness of a task's receipts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainProblem {
    /// Receipt `index` was made in another task (and copied into this one's log).
    #[error("replayed: it was made in task {task_id}")]
    Replayed { index: usize, task_id: String },
    /// Receipt `index` follows a receipt that is elsewhere in the log.
    #[error("reordered: it follows a receipt found elsewhere in the log")]
    Reordered { index: usize },
    /// The receipt receipt `index` follows is not in the log: one or more were deleted.
    #[error("missing before it: the receipt it follows is not in the log")]
    MissingBefore { index: usize },
    /// The head names more receipts, or another last one, than the log ends with.
    #[error(
        "missing at the end: hook.json's authenticated head counts {head_count} chained receipts, the log ends after {found}"
    )]
    MissingAtEnd { head_count: u64, found: u64 },
    /// Chained receipts are in the log but hook.json has no head for them.
    #[error("the log holds chained receipts but hook.json has no receipt head")]
    NoHead,
    /// hook.json counts more receipts than the log holds, and has no head to say which:
    /// the log and the head were removed together.
    #[error(
        "lost: hook.json counts {counted} receipts, the log holds {found}, and the receipt head is gone"
    )]
    Lost { counted: u64, found: u64 },
    /// The head's MAC does not hold (hook.json was edited, or another key).
    #[error(
        "hook.json's receipt head does not authenticate: it was edited, or made with another key"
    )]
    BadHead,
}

impl ChainProblem {
    /// The receipt the problem is about, when it is about one.
    pub fn index(&self) -> Option<usize> {
        match self {
            ChainProblem::Replayed { index, .. }
            | ChainProblem::Reordered { index }
            | ChainProblem::MissingBefore { index } => Some(*index),
            _ => None,
        }
    }
}

/// Where a write was interrupted, if one was: the first chained receipt after the last one
/// hook.json's head counts (or the first of all, when hook.json has counted none). A save
/// killed between appending a receipt to its log and writing hook.json leaves it so: not a
/// problem of the chain, which the next receipt continues after it, counting it
/// (`Hook::count_receipts`).
pub fn interrupted(
    receipts: &[ValidationReceipt],
    head: Option<&ReceiptHead>,
    counted: u64,
) -> Option<usize> {
    let chained = |r: &&ValidationReceipt| r.sig_version >= CHAINED_SINCE;
    let after = match head {
        Some(h) => {
            receipts
                .iter()
                .position(|r| chained(&r) && link(r) == h.link)?
                + 1
        }
        None if counted == 0 => 0,
        None => return None,
    };
    receipts[after..]
        .iter()
        .position(|r| chained(&r))
        .map(|i| after + i)
}

/// Checks the chain of `task_id`'s `receipts` (the log, in order) against `head`, the
/// head of hook.json, which counted `counted` receipts. The head's signature is checked
/// when there is a `signer`. Empty when all is in order.
pub fn check(
    task_id: &str,
    receipts: &[ValidationReceipt],
    head: Option<&ReceiptHead>,
    counted: u64,
    signer: Option<&dyn ReceiptSigner>,
) -> Vec<ChainProblem> {
    let mut problems = Vec::new();
    let links: Vec<String> = receipts.iter().map(link).collect();
    let mut last: Option<usize> = None;
    let mut chained = 0u64;
    for (i, r) in receipts.iter().enumerate() {
        if r.sig_version < CHAINED_SINCE {
            continue;
        }
        chained += 1;
        if r.task_id != task_id {
            problems.push(ChainProblem::Replayed {
                index: i,
                task_id: r.task_id.clone(),
            });
        }
        let expected = last.map(|j| links[j].as_str()).unwrap_or("");
        if r.prev != expected {
            problems.push(match links.contains(&r.prev) {
                true => ChainProblem::Reordered { index: i },
                false => ChainProblem::MissingBefore { index: i },
            });
        }
        last = Some(i);
    }
    match head {
        // A head hook.json never had (no receipt counted yet) is an interrupted first
        // write ([`interrupted`]); a head lost from a hook.json that counted receipts is not.
        None if chained > 0 && counted > 0 => problems.push(ChainProblem::NoHead),
        None if counted > receipts.len() as u64 => problems.push(ChainProblem::Lost {
            counted,
            found: receipts.len() as u64,
        }),
        None => {}
        Some(h) => {
            // The head must name a chained receipt of the log, as the count-th. Receipts
            // after it are what a hook killed between appending and saving left: chained
            // to it, and not counted yet.
            let chained_links: Vec<&str> = receipts
                .iter()
                .zip(&links)
                .filter(|(r, _)| r.sig_version >= CHAINED_SINCE)
                .map(|(_, l)| l.as_str())
                .collect();
            let at = chained_links.iter().position(|l| *l == h.link);
            if at.map(|k| k as u64 + 1) != Some(h.count) {
                problems.push(ChainProblem::MissingAtEnd {
                    head_count: h.count,
                    found: chained,
                });
            }
            if signer.is_some_and(|s| !h.holds(s, task_id)) {
                problems.push(ChainProblem::BadHead);
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipt::{Ed25519Signer, Run, SIG_VERSION};

    fn signer() -> Ed25519Signer {
        crate::receipt::testing::signer(7)
    }

    fn run(exit_code: i32) -> Run {
        crate::receipt::testing::run(exit_code, true, "")
    }

    /// A task's log of `exits.len()` chained receipts, and its authenticated head.
    fn chain(task: &str, exits: &[i32]) -> (Vec<ValidationReceipt>, Option<ReceiptHead>) {
        let s = signer();
        let mut head: Option<ReceiptHead> = None;
        let mut log = Vec::new();
        for &code in exits {
            let mut r = ValidationReceipt::new("step", run(code));
            r.task_id = task.into();
            r.prev = head.as_ref().map(|h| h.link.clone()).unwrap_or_default();
            s.sign(&mut r, 1);
            let mut next = ReceiptHead::after(head.as_ref(), &r);
            next.seal(&s, task);
            head = Some(next);
            log.push(r);
        }
        (log, head)
    }

    fn problems(log: &[ValidationReceipt], head: Option<&ReceiptHead>) -> Vec<ChainProblem> {
        let counted = head.map_or(1, |h| h.count);
        check("task-a", log, head, counted, Some(&signer()))
    }

    #[test]
    fn what_the_log_lost_of_the_unsynced_receipts_is_given_back_once() {
        let (log, _) = chain("task-a", &[0, 1, 0, 0]);
        let unsynced = &log[2..];
        let ids = |rs: &[ValidationReceipt]| -> Vec<String> {
            rs.iter().map(|r| r.receipt_id.clone()).collect()
        };
        // The log ends before them, after one of them, or after the last.
        assert_eq!(ids(unlogged(unsynced, Some(&log[1]))), ids(&log[2..]));
        assert_eq!(ids(unlogged(unsynced, Some(&log[2]))), ids(&log[3..]));
        assert!(unlogged(unsynced, Some(&log[3])).is_empty());
        // A log that lost all of a chain that starts with them, and one that holds a
        // receipt a killed save appended after them (not theirs to repeat).
        assert_eq!(ids(unlogged(&log[..2], None)), ids(&log[..2]));
        let (other, _) = chain("task-a", &[1]);
        assert!(unlogged(unsynced, Some(&other[0])).is_empty());
        assert!(unlogged(&[], Some(&log[0])).is_empty());
    }

    #[test]
    fn an_untouched_chain_is_intact() {
        let (log, head) = chain("task-a", &[0, 1, 0]);
        assert_eq!(log[0].sig_version, SIG_VERSION);
        assert_eq!(problems(&log, head.as_ref()), vec![]);
    }

    #[test]
    fn a_receipt_from_another_task_is_replayed() {
        let (mut log, head) = chain("task-a", &[0, 1]);
        let (other, _) = chain("task-b", &[0]);
        log.push(other[0].clone());
        let p = problems(&log, head.as_ref());
        assert!(
            p.contains(&ChainProblem::Replayed {
                index: 2,
                task_id: "task-b".into()
            }),
            "{p:?}"
        );
    }

    #[test]
    fn a_failing_receipt_deleted_from_the_middle_is_missing() {
        let (mut log, head) = chain("task-a", &[0, 1, 0]);
        log.remove(1);
        assert_eq!(
            problems(&log, head.as_ref()),
            vec![
                ChainProblem::MissingBefore { index: 1 },
                ChainProblem::MissingAtEnd {
                    head_count: 3,
                    found: 2
                }
            ]
        );
    }

    #[test]
    fn the_last_receipt_deleted_is_missing_at_the_end() {
        let (mut log, head) = chain("task-a", &[0, 1]);
        log.pop();
        assert_eq!(
            problems(&log, head.as_ref()),
            vec![ChainProblem::MissingAtEnd {
                head_count: 2,
                found: 1
            }]
        );
    }

    #[test]
    fn swapped_receipts_are_reordered() {
        let (mut log, head) = chain("task-a", &[0, 1, 0]);
        log.swap(1, 2);
        let p = problems(&log, head.as_ref());
        assert!(p.contains(&ChainProblem::Reordered { index: 1 }), "{p:?}");
        assert!(p.contains(&ChainProblem::Reordered { index: 2 }), "{p:?}");
    }

    #[test]
    fn an_edited_or_missing_head_is_caught() {
        let (mut log, head) = chain("task-a", &[0, 1]);
        let mut forged = head.clone().unwrap();
        log.pop();
        forged.count = 1;
        forged.link = link(&log[0]);
        let p = problems(&log, Some(&forged));
        assert_eq!(p, vec![ChainProblem::BadHead]);
        assert_eq!(problems(&log, None), vec![ChainProblem::NoHead]);
    }

    /// The log and the head removed together (issue 32, item 3): hook.json still counts the
    /// receipts, so verification fails. Counting none, with no log, is a task that never
    /// validated.
    #[test]
    fn a_log_removed_with_its_head_is_caught_by_the_count() {
        let check = |counted| super::check("task-a", &[], None, counted, Some(&signer()));
        assert_eq!(
            check(3),
            vec![ChainProblem::Lost {
                counted: 3,
                found: 0
            }]
        );
        assert!(check(0).is_empty());
    }

    #[test]
    fn a_receipt_appended_by_a_save_that_did_not_finish_is_accepted() {
        let (log, head) = chain("task-a", &[0, 0]);
        let (short, short_head) = chain("task-a", &[0]);
        assert_ne!(short[0].receipt_id, log[0].receipt_id);
        let mut behind = head.clone().unwrap();
        behind.count = 1;
        behind.link = link(&log[0]);
        behind.seal(&signer(), "task-a");
        assert_eq!(problems(&log, Some(&behind)), vec![]);
        assert_eq!(interrupted(&log, Some(&behind), 1), Some(1));
        assert_eq!(problems(&short, short_head.as_ref()), vec![]);
        assert_eq!(interrupted(&short, short_head.as_ref(), 1), None);
        // Killed before hook.json counted any receipt: interrupted, not tampered with; a
        // hook.json that counted receipts and lost its head is another matter.
        let none: &[ChainProblem] = &[];
        assert_eq!(check("task-a", &short, None, 0, Some(&signer())), none);
        assert_eq!(interrupted(&short, None, 0), Some(0));
        assert_eq!(interrupted(&short, None, 1), None);
    }

    /// The head's MAC is compared byte by byte: two of its characters swapped (which
    /// leaves the XOR of all their differences zero) is a forged head.
    #[test]
    fn a_head_whose_mac_has_two_characters_swapped_does_not_hold() {
        let (log, head) = chain("task-a", &[0, 1]);
        let mut forged = head.clone().unwrap();
        assert!(forged.holds(&signer(), "task-a"));
        let mut mac: Vec<char> = forged.mac.chars().collect();
        let other = mac.iter().position(|c| *c != mac[0]).unwrap();
        mac.swap(0, other);
        forged.mac = mac.into_iter().collect();
        assert!(!forged.holds(&signer(), "task-a"));
        assert_eq!(problems(&log, Some(&forged)), vec![ChainProblem::BadHead]);
        // Nor does a head moved to another task, or checked with another master key.
        assert!(!head.as_ref().unwrap().holds(&signer(), "task-b"));
        let other_key = crate::receipt::testing::signer(8);
        assert!(!head.unwrap().holds(&other_key, "task-a"));
    }

    /// What `waymark receipts --verify` prints for each problem, and the receipt it points at.
    #[test]
    fn each_problem_is_told_with_the_receipt_it_is_about() {
        let cases = [
            (
                ChainProblem::Replayed {
                    index: 2,
                    task_id: "task-b".into(),
                },
                "replayed: it was made in task task-b",
                Some(2),
            ),
            (
                ChainProblem::Reordered { index: 1 },
                "reordered: it follows a receipt found elsewhere in the log",
                Some(1),
            ),
            (
                ChainProblem::MissingBefore { index: 3 },
                "missing before it: the receipt it follows is not in the log",
                Some(3),
            ),
            (
                ChainProblem::MissingAtEnd {
                    head_count: 3,
                    found: 2,
                },
                "missing at the end: hook.json's authenticated head counts 3 chained receipts, the log ends after 2",
                None,
            ),
            (
                ChainProblem::NoHead,
                "the log holds chained receipts but hook.json has no receipt head",
                None,
            ),
            (
                ChainProblem::BadHead,
                "hook.json's receipt head does not authenticate: it was edited, or made with another key",
                None,
            ),
            (
                ChainProblem::Lost {
                    counted: 3,
                    found: 0,
                },
                "lost: hook.json counts 3 receipts, the log holds 0, and the receipt head is gone",
                None,
            ),
        ];
        for (problem, text, index) in cases {
            assert_eq!(problem.to_string(), text);
            assert_eq!(problem.index(), index, "{text}");
        }
    }

    /// A save killed after appending its receipt, later in the chain: the receipt after the
    /// one the head names is the interrupted one.
    #[test]
    fn the_interrupted_receipt_is_the_one_after_the_head() {
        let (log, head) = chain("task-a", &[0, 1, 0]);
        let mut behind = head.unwrap();
        behind.count = 2;
        behind.link = link(&log[1]);
        behind.seal(&signer(), "task-a");
        assert_eq!(problems(&log, Some(&behind)), vec![]);
        assert_eq!(interrupted(&log, Some(&behind), 2), Some(2));
        // Receipts older than the chain before the first chained one, none counted yet.
        let (chained, _) = chain("task-a", &[0]);
        let log = [old(&chained[0]), chained[0].clone()];
        assert_eq!(interrupted(&log, None, 0), Some(1));
    }

    /// `r` as a receipt made before the chain (signature version 2): no task, no link.
    fn old(r: &ValidationReceipt) -> ValidationReceipt {
        let mut old = r.clone();
        old.sig_version = 2;
        old.task_id.clear();
        old.prev.clear();
        old
    }

    /// A task whose receipts all predate the chain has no head to lose: no alarm.
    #[test]
    fn a_log_of_receipts_older_than_the_chain_needs_no_head() {
        let (log, _) = chain("task-a", &[0, 1]);
        let log: Vec<ValidationReceipt> = log.iter().map(old).collect();
        let none: &[ChainProblem] = &[];
        assert_eq!(check("task-a", &log, None, 2, Some(&signer())), none);
    }

    #[test]
    fn receipts_older_than_the_chain_are_not_checked() {
        let (mut log, head) = chain("task-a", &[0]);
        log.insert(0, old(&log[0]));
        assert_eq!(problems(&log, head.as_ref()), vec![]);
    }
}
