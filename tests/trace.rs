//! The Agent Trace ledger's tamper evidence (docs/guarantees.md): its chain, and the head
//! authenticated with the user's key that catches what a chain alone cannot (issue 32,
//! item 3).

use serde_json::Value;
use sha2::{Digest, Sha256};
use util::Project;

mod util;

const LEDGER: &str = ".orchestration/agent_trace.jsonl";
const HEAD: &str = ".orchestration/trace.head";

/// A project whose ledger holds three records written by waymark; the ledger's text.
fn recorded() -> (Project, String) {
    let p = Project::new();
    for f in ["a.txt", "b.txt", "c.txt"] {
        p.hook("PostToolUse", &p.write_event(f, "x\n"));
    }
    let ledger = p.read(LEDGER);
    (p, ledger)
}

/// `waymark trace --verify`: whether it passed, and what it said.
fn verify(p: &Project) -> (bool, String) {
    let out = p.waymark().args(["trace", "--verify"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success(), said)
}

/// `lines` with every line after the first naming the one before it anew: a chain that
/// holds, whatever was changed.
fn chained(lines: &[String]) -> String {
    let mut out = vec![lines[0].clone()];
    for l in &lines[1..] {
        let mut v: Value = serde_json::from_str(l).unwrap();
        let prev: String = Sha256::digest(out.last().unwrap().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        v["metadata"]["waymark"]["prev"] = prev.into();
        out.push(v.to_string());
    }
    out.join("\n") + "\n"
}

#[test]
fn the_ledger_as_written_is_authenticated() {
    let (p, _) = recorded();
    let (ok, said) = verify(&p);
    assert!(
        ok && said.contains("head authenticated: lines 1-3"),
        "{said}"
    );
}

#[test]
fn an_edit_re_chained_an_appended_or_a_replayed_record_breaks_the_head() {
    let (p, ledger) = recorded();
    let lines: Vec<String> = ledger.lines().map(str::to_string).collect();
    let edited: Vec<String> = lines
        .iter()
        .map(|l| l.replace("b.txt", "evil.txt"))
        .collect();
    p.write(LEDGER, &chained(&edited));
    let (ok, said) = verify(&p);
    assert!(
        said.contains("chain intact"),
        "the chain alone passes: {said}"
    );
    assert!(!ok && said.contains("head BROKEN"), "{said}");

    let mut more = lines.clone();
    more.push(lines[2].replace("c.txt", "forged.txt"));
    p.write(LEDGER, &chained(&more));
    let (ok, said) = verify(&p);
    assert!(
        !ok && said.contains("line 4 was not written by waymark here"),
        "{said}"
    );

    p.write(LEDGER, &format!("{ledger}{}\n", lines[1]));
    let (ok, said) = verify(&p);
    assert!(!ok && said.contains("head BROKEN"), "{said}");
}

#[test]
fn an_edited_head_is_caught_and_a_kill_before_the_line_is_not_tampering() {
    let (p, ledger) = recorded();
    let head = p.read(HEAD);
    p.write(HEAD, &head.replace("\"count\":3", "\"count\":2"));
    let (ok, said) = verify(&p);
    assert!(!ok && said.contains("MAC does not match"), "{said}");
    // The head names a line never written: a kill between the head and its line.
    p.write(HEAD, &head);
    let two: Vec<&str> = ledger.lines().take(2).collect();
    p.write(LEDGER, &(two.join("\n") + "\n"));
    let (ok, said) = verify(&p);
    assert!(
        ok && said.contains("an interrupted write, not tampering"),
        "{said}"
    );
}

#[test]
fn without_the_key_the_chain_is_checked_alone_and_says_so() {
    let (p, _) = recorded();
    std::fs::remove_dir_all(p.config.path().join("waymark/keys")).unwrap();
    let (ok, said) = verify(&p);
    assert!(
        ok && said.contains("without the key that made it"),
        "{said}"
    );
    std::fs::remove_file(p.path(HEAD)).unwrap();
    let (ok, said) = verify(&p);
    assert!(ok && said.contains("no head here"), "{said}");
}

#[test]
fn a_head_torn_by_a_kill_is_said_and_the_next_record_writes_it_whole() {
    let (p, _) = recorded();
    let head = p.read(HEAD);
    p.write(HEAD, &head[..head.len() / 2]);
    let (ok, said) = verify(&p);
    assert!(ok && said.contains("head unreadable"), "{said}");
    p.hook("PostToolUse", &p.write_event("d.txt", "x\n"));
    let (ok, said) = verify(&p);
    assert!(
        ok && said.contains("head authenticated: lines 1-4"),
        "{said}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(p.path(".orchestration"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
