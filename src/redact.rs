//! Redaction of obvious secrets in text copied from tool output (DESIGN.md rule 4).
//!
//! Applied to everything waymark copies out of a session into its files: command output
//! tails, the last assistant message, prompts, lesson text. It errs on the side of hiding:
//! a false positive costs a few characters of context, a miss leaks a credential into a
//! ledger that is meant to be committed.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

const MASK: &str = "[REDACTED]";

/// The rules: a pattern and its replacement.
const SPECS: &[(&str, &str)] = &[
    // PEM private keys, whole block (or to the end when cut).
    (
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        MASK,
    ),
    // A key block whose BEGIN line was cut off (text taken from the end of an output):
    // everything from the start of the text to its END line.
    (r"\A(?s:.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----", MASK),
    // Provider keys with recognizable prefixes.
    (r"\bsk-(ant-)?[A-Za-z0-9_\-]{16,}", MASK),
    (
        r"\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}",
        MASK,
    ),
    (r"\b(xox[abprs]-[A-Za-z0-9\-]{10,})", MASK),
    (r"\bAKIA[0-9A-Z]{16}\b", MASK),
    (r"\bAIza[0-9A-Za-z_\-]{35}\b", MASK),
    (r"\bglpat-[A-Za-z0-9_\-]{20,}", MASK),
    (r"\bnpm_[A-Za-z0-9]{36}\b", MASK),
    // JWTs.
    (
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        MASK,
    ),
    // Authorization headers.
    (
        r"(?i)\b(authorization:\s*(bearer|basic|token)\s+)[A-Za-z0-9._~+/=\-]{8,}",
        "${1}[REDACTED]",
    ),
    (
        r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{16,}",
        "${1}[REDACTED]",
    ),
    // key=value and key: value pairs whose key names a secret.
    (
        r#"(?i)\b([A-Za-z0-9_\-]*(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth)[A-Za-z0-9_\-]*)(["']?\s*[:=]\s*["']?)([^\s"'&,;]{3,})"#,
        "${1}${3}[REDACTED]",
    ),
    // Credentials in URLs.
    (
        r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+@",
        "${1}[REDACTED]@",
    ),
];

/// Which rules match, compiled on first need.
fn quick() -> &'static RegexSet {
    static QUICK: OnceLock<RegexSet> = OnceLock::new();
    QUICK.get_or_init(|| {
        RegexSet::new(SPECS.iter().map(|(p, _)| *p)).expect("redaction patterns compile")
    })
}

/// Rule `i`, compiled on first need (most texts that match any rule match one).
fn rule(i: usize) -> &'static Regex {
    static RULES: [OnceLock<Regex>; SPECS.len()] = [const { OnceLock::new() }; SPECS.len()];
    RULES[i].get_or_init(|| Regex::new(SPECS[i].0).expect("redaction pattern compiles"))
}

/// Characters outside ASCII that case-insensitive matching folds onto an ASCII letter
/// (KELVIN SIGN onto k, LONG S onto s); a test checks the list is complete.
const FOLDS_ONTO_ASCII: &[char] = &['\u{212A}', '\u{17F}'];

/// False when no rule can match `text`, because it lacks a literal that every match of
/// every rule contains. Compiling the rules costs more than all the rest of an event, and
/// most texts (a last message, a short command output) need none of them.
fn may_hold_secret(text: &str) -> bool {
    // Needed as written by the case-sensitive rules (and "://" + "@" by the URL rule).
    const EXACT: &[&str] = &[
        "-----BEGIN ",
        "-----END ",
        "sk-",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "xox",
        "AKIA",
        "AIza",
        "glpat-",
        "npm_",
        "eyJ",
    ];
    // Needed in any case by the case-insensitive rules: "bearer" alone, a secret's key
    // name together with `:` or `=`.
    const KEY_NAMES: &[&str] = &[
        "passw", "pwd", "secret", "token", "api", "access", "private", "auth",
    ];
    if text.contains(FOLDS_ONTO_ASCII) || EXACT.iter().any(|l| text.contains(l)) {
        return true;
    }
    if text.contains("://") && text.contains('@') {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    lower.contains("bearer")
        || (text.contains([':', '=']) && KEY_NAMES.iter().any(|k| lower.contains(k)))
}

/// Returns `text` with secrets replaced by `[REDACTED]`.
pub fn redact(text: &str) -> String {
    if !may_hold_secret(text) {
        return text.to_string();
    }
    let hits = quick().matches(text);
    if !hits.matched_any() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for i in hits.iter() {
        out = rule(i).replace_all(&out, SPECS[i].1).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_common_secrets() {
        let cases = [
            "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "aws AKIAABCDEFGHIJKLMNOP",
            "password=hunter22",
            "Authorization: Bearer abcdefghijklmnop.qrstuv",
            "db postgres://admin:s3cr3tpw@db.local/app",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "\"client_secret\": \"abc123def456\"",
        ];
        for c in cases {
            let r = redact(c);
            assert!(r.contains("[REDACTED]"), "{c} -> {r}");
            for secret in [
                "abcdefghijklmnopqrstuvwxyz",
                "hunter22",
                "s3cr3tpw",
                "b3BlbnNzaC1rZXktdjEAAAAA",
                "abc123def456",
                "AKIAABCDEFGHIJKLMNOP",
            ] {
                assert!(!r.contains(secret), "{c} -> {r}");
            }
        }
    }

    #[test]
    fn a_key_block_cut_at_its_start_is_hidden_too() {
        let cut = "b3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACB\n-----END OPENSSH PRIVATE KEY-----\nok";
        let r = redact(cut);
        assert!(
            !r.contains("b3BlbnNzaC1rZXktdjEAAAAA") && !r.contains("QyNTUxOQAAACB"),
            "{r}"
        );
        assert!(r.ends_with("\nok"), "{r}");
    }

    #[test]
    fn the_prefilter_never_hides_a_match() {
        // Every text some rule matches must pass the prefilter, including case variants
        // and the non-ASCII letters that fold onto ASCII ones.
        let cases = [
            "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "AUTHORIZATION: BEARER abcdefghijklmnop",
            "bEaReR abcdefghijklmnopqrstuv",
            "PassWord: hunter22",
            "my_api-KEY = 'abcdef'",
            "\u{17F}ecret=abcdef",
            "api_\u{212A}ey: abcdef",
            "HTTPS://user:pw@example.com",
            "xoxb-1234567890-abcdef",
            "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK",
        ];
        for c in cases {
            assert!(quick().is_match(c), "rule should match {c}");
            assert!(may_hold_secret(c), "prefilter dropped {c}");
        }
        for plain in [
            "done",
            "bash-ok",
            "test result: ok. 3 passed",
            "Edited src/lib.rs",
        ] {
            assert!(!may_hold_secret(plain), "{plain}");
        }
    }

    #[test]
    fn only_the_listed_characters_fold_onto_ascii_letters() {
        let letter = Regex::new("(?i)^[a-z]$").unwrap();
        let folding: Vec<char> = (0x80..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| letter.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(
            folding,
            FOLDS_ONTO_ASCII.iter().rev().copied().collect::<Vec<_>>()
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let t = "test result: FAILED. 1 passed; 1 failed\nsrc/parser.rs:3: tokens parsed";
        assert_eq!(redact(t), t);
    }
}
