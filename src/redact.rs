//! Redaction of obvious secrets in text copied from tool output (DESIGN.md rule 4).
//!
//! Applied to everything waymark copies out of a session into its files: command output
//! tails, the last assistant message, prompts, lesson text. It errs on the side of hiding:
//! a false positive costs a few characters of context, a miss leaks a credential into a
//! ledger that is meant to be committed.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

const MASK: &str = "[REDACTED]";

struct Rules {
    quick: RegexSet,
    rules: Vec<(Regex, &'static str)>,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let specs: &[(&str, &str)] = &[
            // PEM private keys, whole block (or to the end when cut).
            (r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)", MASK),
            // A key block whose BEGIN line was cut off (text taken from the end of an
            // output): everything from the start of the text to its END line.
            (r"\A(?s:.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----", MASK),
            // Provider keys with recognizable prefixes.
            (r"\bsk-(ant-)?[A-Za-z0-9_\-]{16,}", MASK),
            (r"\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}", MASK),
            (r"\b(xox[abprs]-[A-Za-z0-9\-]{10,})", MASK),
            (r"\bAKIA[0-9A-Z]{16}\b", MASK),
            (r"\bAIza[0-9A-Za-z_\-]{35}\b", MASK),
            (r"\bglpat-[A-Za-z0-9_\-]{20,}", MASK),
            (r"\bnpm_[A-Za-z0-9]{36}\b", MASK),
            // JWTs.
            (r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", MASK),
            // Authorization headers.
            (r"(?i)\b(authorization:\s*(bearer|basic|token)\s+)[A-Za-z0-9._~+/=\-]{8,}", "${1}[REDACTED]"),
            (r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{16,}", "${1}[REDACTED]"),
            // key=value and key: value pairs whose key names a secret.
            (
                r#"(?i)\b([A-Za-z0-9_\-]*(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth)[A-Za-z0-9_\-]*)(["']?\s*[:=]\s*["']?)([^\s"'&,;]{3,})"#,
                "${1}${3}[REDACTED]",
            ),
            // Credentials in URLs.
            (r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+@", "${1}[REDACTED]@"),
        ];
        let quick = RegexSet::new(specs.iter().map(|(p, _)| *p)).expect("redaction patterns compile");
        let rules = specs
            .iter()
            .map(|(p, r)| (Regex::new(p).expect("redaction pattern compiles"), *r))
            .collect();
        Rules { quick, rules }
    })
}

/// Returns `text` with secrets replaced by `[REDACTED]`.
pub fn redact(text: &str) -> String {
    let r = rules();
    let hits = r.quick.matches(text);
    if !hits.matched_any() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for i in hits.iter() {
        let (re, rep) = &r.rules[i];
        out = re.replace_all(&out, *rep).into_owned();
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
    fn leaves_ordinary_text_alone() {
        let t = "test result: FAILED. 1 passed; 1 failed\nsrc/parser.rs:3: tokens parsed";
        assert_eq!(redact(t), t);
    }
}
