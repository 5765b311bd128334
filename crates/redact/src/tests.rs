//! The rule table's own checks (every rule hides its case, leaves its near miss, needs its
//! keywords) and the formats the issue named, each as a case.

use super::rules::{MASK, RULES};
use super::*;
use std::collections::HashSet;

/// The redactor's answer as an owned string (the tests compare and keep it).
fn redact(text: &str) -> String {
    super::redact(text).into_owned()
}

fn lower_has(hay: &str, kw: &str) -> bool {
    hay.to_ascii_lowercase().contains(kw)
}

#[test]
fn every_pattern_compiles() {
    let bad: Vec<String> = RULES
        .iter()
        .filter_map(|r| {
            regex_lite::Regex::new(r.pattern)
                .err()
                .map(|e| format!("{}: {e}", r.id))
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ids_are_unique() {
    let mut seen = HashSet::new();
    for r in RULES {
        assert!(seen.insert(r.id), "duplicate id {}", r.id);
    }
}

#[test]
fn keywords_are_lowercase_and_cannot_come_from_the_mask() {
    for r in RULES {
        assert!(!r.keywords.is_empty(), "{} has no keyword", r.id);
        for k in r.keywords {
            assert!(
                !k.is_empty() && *k == k.to_ascii_lowercase(),
                "{}: {k:?}",
                r.id
            );
            // A keyword that a replacement could create would make keyword look-up on the
            // original text miss a rule that the redacted text needs.
            assert!(
                !lower_has(MASK, k) && !k.contains(['[', ']']),
                "{}: {k:?} can come from the mask",
                r.id
            );
        }
    }
}

#[test]
fn every_hit_is_redacted() {
    let mut fails = Vec::new();
    for r in RULES {
        assert!(r.hit.contains(r.secret), "{}: secret not in hit", r.id);
        let out = redact(r.hit);
        if out.contains(r.secret) || !out.contains(MASK) {
            fails.push(format!("{}: {:?} -> {:?}", r.id, r.hit, out));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn no_rule_changes_a_miss() {
    let mut fails = Vec::new();
    for r in RULES {
        // Through the redactor, and through every rule regardless of keywords.
        let out = redact(r.miss);
        if out != r.miss {
            fails.push(format!("{}: {:?} -> {:?}", r.id, r.miss, out));
        }
        for (j, other) in RULES.iter().enumerate() {
            if regex(j).replace_all(r.miss, other.replace) != r.miss {
                fails.push(format!("{}'s miss changed by {}", r.id, other.id));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn every_rule_matches_its_own_hit() {
    let fails: Vec<&str> = RULES
        .iter()
        .enumerate()
        .filter(|(i, r)| !regex(*i).is_match(r.hit))
        .map(|(_, r)| r.id)
        .collect();
    assert!(fails.is_empty(), "{fails:?}");
}

#[test]
fn every_rule_changes_its_own_hit() {
    // Not a requirement for every rule (several waymark rules overlap gitleaks ones),
    // but the replacement must at least change the hit.
    for (i, r) in RULES.iter().enumerate() {
        let out = regex(i).replace_all(r.hit, r.replace);
        assert!(out.contains(MASK), "{}: {out}", r.id);
    }
}

#[test]
fn every_match_in_a_hit_holds_a_keyword() {
    let mut fails = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        for m in regex(i).find_iter(r.hit) {
            if !r.keywords.iter().any(|k| lower_has(m.as_str(), k)) {
                fails.push(format!("{}: {:?}", r.id, m.as_str()));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// `text` with every occurrence of every keyword of `rule` broken by a control character.
fn break_keywords(text: &str, keywords: &[&'static str]) -> String {
    // The table's scanner finds every keyword; only this rule's are broken.
    let mut insert_after = HashSet::new();
    SCANNER.scan(text.as_bytes(), |_, start, end| {
        let found = &text.as_bytes()[start..end];
        if keywords
            .iter()
            .any(|k| found.eq_ignore_ascii_case(k.as_bytes()))
        {
            insert_after.insert(start + 1);
        }
    });
    let mut out = String::new();
    for (i, c) in text.char_indices() {
        if insert_after.contains(&i) {
            out.push('\u{1}');
        }
        out.push(c);
    }
    out
}

#[test]
fn without_its_keywords_a_hit_no_longer_matches() {
    // Any match left once the keywords are broken would be a match without a keyword.
    let mut fails = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        let broken = break_keywords(r.hit, r.keywords);
        if let Some(m) = regex(i).find(&broken) {
            fails.push(format!("{}: {:?}", r.id, m.as_str()));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn redaction_is_stable() {
    // A replacement must not give a later rule (or a second pass) something to mangle.
    let mut fails = Vec::new();
    for r in RULES {
        let once = redact(r.hit);
        let twice = redact(&once);
        if once != twice {
            fails.push(format!("{}: {once:?} -> {twice:?}", r.id));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

fn hides(text: &str, secret: &str) {
    let out = redact(text);
    assert!(out.contains(MASK), "{text:?} -> {out:?}");
    assert!(!out.contains(secret), "{text:?} -> {out:?}");
}

fn keeps(text: &str) {
    assert_eq!(redact(text), text);
}

// ----- the cases of waymark's current redactor -----

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
fn a_key_block_cut_at_its_end_is_hidden_too() {
    let r = redact("key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nMIIEpQIBAAKCAQ");
    assert_eq!(r, "key:\n[REDACTED]");
}

#[test]
fn the_prefilter_never_hides_a_match() {
    // Case variants (ASCII: `(?i)` here folds ASCII letters only).
    let cases = [
        "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
        "AUTHORIZATION: BEARER abcdefghijklmnop",
        "bEaReR abcdefghijklmnopqrstuv",
        "PassWord: hunter22",
        "my_api-KEY = 'abcdef'",
        "HTTPS://user:pw@example.com",
        "xoxb-1234567890-abcdef",
        "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK",
    ];
    for c in cases {
        assert_ne!(redact(c), c, "nothing hidden in {c}");
    }
}

#[test]
fn leaves_ordinary_text_alone() {
    for plain in [
        "done",
        "bash-ok",
        "test result: ok. 3 passed",
        "Edited src/lib.rs",
        "test result: FAILED. 1 passed; 1 failed\nsrc/parser.rs:3: tokens parsed",
        "Author: Jane Doe <jane@example.com>",
        "{\"input_tokens\": 1234, \"cache_read_input_tokens\": 0, \"max_tokens\": 4096}",
        "warning: unused variable `token`\n  --> src/auth.rs:12:9",
        "PATH=/usr/local/bin:/usr/bin LD_LIBRARY_PATH=/opt/lib cargo test",
        "http://localhost:3000/@vite/client",
        "see https://github.com/gitleaks/gitleaks@v8.28.0",
        "mysql -u root -p shop",
        "ls -pX /tmp && grep -pattern file",
        "const stripe = Stripe(\"pk_live_51HqLyjWDarjtT1zdp7dcXYZ\");",
        "commit 2f1e4c7d9a8b6c5d4e3f2a1b0c9d8e7f6a5b4c3d",
        "[REDACTED]",
        "password=[REDACTED]",
        "test auth::jwt ... FAILED",
        "  --> src/secret_store.rs:10:5",
        "`tests/reliability/secrets.rs::secrets_are_redacted_in_the_trace`",
        "error[E0425]: cannot find value `api_key` in this scope",
    ] {
        keeps(plain);
    }
}

// ----- the formats waymark missed -----

#[test]
fn pgp_private_key_blocks() {
    hides(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF4HmjYBEADtest\n=ABCD\n-----END PGP PRIVATE KEY BLOCK-----\nnext",
        "lQdGBF4HmjYBEADtest",
    );
    assert!(redact("x\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nabc\n-----END PGP PRIVATE KEY BLOCK-----\nnext").ends_with("]\nnext"));
    // cut at its start
    hides(
        "lQdGBF4HmjYBEADtest\n-----END PGP PRIVATE KEY BLOCK-----\nok",
        "lQdGBF4HmjYBEADtest",
    );
}

#[test]
fn url_passwords_holding_at_or_slash() {
    assert_eq!(
        redact("https://user:p@ss/w0rd@host/x"),
        "https://user:[REDACTED]@host/x"
    );
    assert_eq!(
        redact("git clone https://bot:a/b@c@github.com/o/r.git done"),
        "git clone https://bot:[REDACTED]@github.com/o/r.git done"
    );
    assert_eq!(
        redact("redis://:pa@ss@cache:6379/0"),
        "redis://:[REDACTED]@cache:6379/0"
    );
}

#[test]
fn curl_user_and_password() {
    for (text, kept) in [
        (
            "curl -u user:pass https://x.example",
            "curl -u user:[REDACTED] https://x.example",
        ),
        (
            "curl --user user:pass https://x.example",
            "curl --user user:[REDACTED] https://x.example",
        ),
        (
            "curl --user=user:pass https://x.example",
            "curl --user=user:[REDACTED] https://x.example",
        ),
        (
            "curl -uuser:pass https://x.example",
            "curl -uuser:[REDACTED] https://x.example",
        ),
        (
            "curl -u 'user:pa ss' https://x.example",
            "curl -u 'user:[REDACTED]' https://x.example",
        ),
        (
            "curl -X POST \\\n  -u user:pass https://x.example",
            "curl -X POST \\\n  -u user:[REDACTED] https://x.example",
        ),
    ] {
        assert_eq!(redact(text), kept);
    }
    keeps("curl -u user https://x.example");
    keeps("curl --user-agent 'probe:1' https://x.example");
}

#[test]
fn mysql_passwords() {
    for (text, kept) in [
        (
            "mysql -u root --password secret1 shop",
            "mysql -u root --password [REDACTED] shop",
        ),
        (
            "mysql -u root --password=secret1 shop",
            "mysql -u root --password=[REDACTED] shop",
        ),
        (
            "mysql -u root -psecret1 shop",
            "mysql -u root -p[REDACTED] shop",
        ),
        (
            "mysqldump -uroot -p'se cret' shop > s.sql",
            "mysqldump -uroot -p[REDACTED] shop > s.sql",
        ),
        (
            "mysqladmin -u root -psecret1 status",
            "mysqladmin -u root -p[REDACTED] status",
        ),
    ] {
        assert_eq!(redact(text), kept);
    }
    keeps("mysql -u root -p shop");
    keeps("mkdir -pv build; rsync -pX a b");
}

#[test]
fn quoted_env_values_with_spaces() {
    assert_eq!(
        redact("export DB_PASSWORD='a b c'"),
        "export DB_PASSWORD='[REDACTED]'"
    );
    assert_eq!(
        redact("DB_PASSWORD=\"a b \\\"c\\\"\" ./run.sh"),
        "DB_PASSWORD=\"[REDACTED]\" ./run.sh"
    );
    keeps("export DB_HOST='a b c'");
}

#[test]
fn quoted_values_with_spaces_after_a_secret_key() {
    for (text, kept) in [
        ("password = \"a b c\"", "password = \"[REDACTED]\""),
        (
            "{\"password\": \"a b c\", \"user\": \"x\"}",
            "{\"password\": \"[REDACTED]\", \"user\": \"x\"}",
        ),
        (
            "db:\n  password: 'a b c'\n",
            "db:\n  password: '[REDACTED]'\n",
        ),
        (
            "[db]\nclient_secret = \"a b c\"",
            "[db]\nclient_secret = \"[REDACTED]\"",
        ),
        ("api_key: \"a b c\"", "api_key: \"[REDACTED]\""),
    ] {
        assert_eq!(redact(text), kept);
    }
    keeps("username = \"a b c\"");
}

#[test]
fn aws_configure_set() {
    for name in [
        "aws_secret_access_key",
        "aws_access_key_id",
        "aws_session_token",
    ] {
        let text = format!("aws configure set {name} V4lu3xyz --profile dev");
        assert_eq!(
            redact(&text),
            format!("aws configure set {name} [REDACTED] --profile dev")
        );
    }
}

#[test]
fn stripe_keys() {
    for prefix in ["sk_live_", "rk_live_", "sk_test_", "rk_test_"] {
        hides(
            &format!("STRIPE={prefix}51HqLyjWDarjtT1zdp7dc"),
            "51HqLyjWDarjtT1zdp7dc",
        );
    }
    keeps("pk_live_51HqLyjWDarjtT1zdp7dc");
    keeps("pk_test_51HqLyjWDarjtT1zdp7dc");
}

#[test]
fn bare_aws_secret_after_its_key_id() {
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    hides(&format!("AKIAIOSFODNN7EXAMPLE {secret}"), secret);
    hides(&format!("AKIAIOSFODNN7EXAMPLE,{secret}\n"), secret);
    hides(&format!("aws_secret_access_key {secret}"), secret);
    hides(&format!("aws_secret_access_key = {secret}"), secret);
    hides(&format!("\"SecretAccessKey\": \"{secret}\""), secret);
    let r = redact(&format!("AKIAIOSFODNN7EXAMPLE {secret}"));
    assert_eq!(r, "[REDACTED] [REDACTED]");
}

#[test]
fn secret_env_prefix_on_a_command_line() {
    let r = redact("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 cargo test");
    assert_eq!(r, "GITHUB_TOKEN=[REDACTED] cargo test");
    let r = redact("GITHUB_TOKEN=abc123 cargo test");
    assert_eq!(r, "GITHUB_TOKEN=[REDACTED] cargo test");
    keeps("GITHUB_TOKEN=$(gh auth token) cargo test");
}

#[test]
fn what_follows_a_hidden_value_stays() {
    assert_eq!(
        redact("https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r"),
        "https://x-access-token:[REDACTED]@github.com/o/r"
    );
    assert_eq!(
        redact(
            "my key is sk_live_51HqLyjWDarjtT1zdp7dcXYZabc. (and dapi0123456789abcdef0123456789abcdef)"
        ),
        "my key is [REDACTED]. (and [REDACTED])"
    );
}

#[test]
fn key_names_are_kept() {
    assert_eq!(
        redact("set `ANTHROPIC_API_KEY=sk-test` for the fake API"),
        "set `ANTHROPIC_API_KEY=[REDACTED]` for the fake API"
    );
    assert_eq!(
        redact("HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef"),
        "HEROKU_API_KEY=[REDACTED]"
    );
    assert_eq!(
        redact("Authorization: Bearer abcdefghijklmnop.qrstuv"),
        "Authorization: Bearer [REDACTED]"
    );
    assert_eq!(
        redact("token ghp_abcdefghijklmnopqrstuvwxyz0123456789\nnext"),
        "token [REDACTED]\nnext"
    );
}

#[test]
fn gcp_service_account_json() {
    let json = "{\"type\": \"service_account\", \"private_key_id\": \"0123abcd\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"a@b.iam.gserviceaccount.com\"}";
    hides(json, "MIIEvQIBADANBgkqhkiG9w0B");
    assert!(redact(json).contains("a@b.iam.gserviceaccount.com"));
}

#[test]
fn every_confirm_is_met_by_its_rules_own_case_and_breaking_it_stops_the_rule() {
    for (id, confirm) in CONFIRMS {
        let i = RULES
            .iter()
            .position(|r| r.id == *id)
            .unwrap_or_else(|| panic!("{id}"));
        let rule = &RULES[i];
        assert_eq!(CONFIRM[i], Some(*confirm), "{id}");
        // Every match in the rule's own case holds a keyword that meets the condition.
        for m in regex(i).find_iter(rule.hit) {
            let text = m.as_str().as_bytes();
            let (hay, base) = (rule.hit.as_bytes(), m.start());
            let met = rule.keywords.iter().any(|kw| {
                (0..text.len())
                    .filter(|&s| {
                        text[s..].len() >= kw.len()
                            && text[s..s + kw.len()].eq_ignore_ascii_case(kw.as_bytes())
                    })
                    .any(|s| holds(*confirm, hay, base + s, base + s + kw.len()))
            });
            assert!(
                met,
                "{id}: the match {:?} meets no {confirm:?} keyword",
                m.as_str()
            );
        }
        // And with the condition broken, the case is no longer a secret for the rule.
        let broken = match confirm {
            Confirm::Prefix(_) => rule.keywords.iter().fold(rule.hit.to_string(), |t, kw| {
                t.replace(kw, &format!("x{kw}")).replace(
                    &kw.to_ascii_uppercase(),
                    &format!("x{}", kw.to_ascii_uppercase()),
                )
            }),
            Confirm::Assigned => rule.hit.replace(['=', ':'], " "),
            Confirm::EnvAssigned => rule.hit.to_ascii_lowercase(),
            Confirm::AfterDigits => rule.hit.replace(|c: char| c.is_ascii_digit(), "x"),
            Confirm::Userinfo => rule.hit.replace('@', " "),
            Confirm::Credential(_) => rule.hit.replace(rule.secret, MASK),
            Confirm::Flag => rule.hit.replace('-', ""),
            Confirm::SpaceQuoted => rule.hit.replace(['"', '\''], ""),
            Confirm::Command => rule.hit.replace([' ', '\t'], "_"),
            Confirm::BlockScalar
            | Confirm::TableHeader
            | Confirm::NameSpaced
            | Confirm::Netrc
            | Confirm::SplitJson => {
                unreachable!("{id}: a context rule's condition")
            }
        };
        assert!(
            !regex(i).is_match(&broken),
            "{id}: still matches {broken:?}"
        );
    }
}

#[test]
fn what_waymark_writes_every_event_makes_no_rule_due() {
    // The words of a task's state and HOOK.md: ids, paths, tables, percentages, test
    // names, prose about tokens and APIs. None may cost a rule's compilation.
    let ordinary = r#"{"task_id": "task-20261123-104258", "checkpoint_id": "ckpt-e9fd44da",
        "receipt_id": "rcpt-dc12770a", "file_path": "src/api/auth.rs", "next_step": "s2",
        "receipts": ["rcpt-e5eaaa66", "rcpt-04b1dacc"], "session_id": "5c1e90a3-77b2-4f1e-acca-eaac4b1d0001",
        "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08eaaa4b1dacca1f2e",
        "working_on": "Implementing the API client: refresh the auth token before it expires",
        "last_output": "test_parser_handles_tokens ... ok", "context_percent": 45}
    | Step | Status | Attempt |
    | --- | --- | --- |
    | Implement the parser | in_progress | 1 of 3 |
    Context: 45% used. Session s1 (task) at path src/gen/module_12.rs; ask the user.
    {"url": "file:///home/me/.claude/projects/p/s1.jsonl", "docs": "https://docs.rs/x:1/@y", "service": "http://localhost:8080/v1"}
    private fn access(&self) -> Secret; the password prompt; passing test_live_reload
    claude --max --tokens 4096; git --token --help; the passwords' list; gzip -9 big.log
    {"at": "2026-11-26T14:59:13.123456787Z", "dir": "docs/Dockerfile.helm", "zip": "a.tar.gzip", "Horas": 1}"#;
    let due = due(ordinary);
    assert!(due.is_empty(), "rules made due by ordinary text: {due:?}");
}

/// The rules whose keywords count in `text` (each would be compiled and run on it).
fn due(text: &str) -> Vec<&'static str> {
    hits(text)
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.is_empty())
        .map(|(i, _)| RULES[i].id)
        .collect()
}

/// What waymark stores keeps the assignments it masked (a last output, a command), and a
/// masked value must not make its rule due on every later save: the rule would only put
/// the mask back. A value that is more than the mask still counts.
#[test]
fn an_assignment_already_masked_makes_no_rule_due_and_more_than_the_mask_still_counts() {
    for masked in [
        "export API_KEY=[REDACTED] && make test",
        "token := [REDACTED]",
        "api_key => [REDACTED]",
        "secret ?= [REDACTED]",
        "DB_PASSWORD='[REDACTED]' psql",
        r#"GITHUB_TOKEN="[REDACTED]""#,
        r#"password = "[REDACTED]""#,
        r#"{"api_key": "[REDACTED]", "n": 1}"#,
        "Authorization: Bearer [REDACTED]",
        "login ok, password=[REDACTED]",
    ] {
        assert_eq!(due(masked), Vec::<&str>::new(), "{masked}");
        assert_eq!(redact(masked), masked);
    }
    for (text, secret) in [
        (
            r#"password = "[REDACTED] correct horse battery""#,
            "correct horse battery",
        ),
        (
            r#"token: "Bearer [REDACTED]" and token: "sk_live_51HcD2""#,
            "sk_live_51HcD2",
        ),
        (
            "API_KEY=[REDACTED] OPENAI_KEY=abc123def456ghi789",
            "abc123def456ghi789",
        ),
        ("DB_PASSWORD='[REDACTED]x' psql", "[REDACTED]x'"),
    ] {
        let out = redact(text);
        assert!(!out.contains(secret), "{text} -> {out}");
    }
}

// ----- context rules, and the channels of issue 32 -----

#[test]
fn every_context_rule_hides_its_hit_itself_and_keeps_its_miss() {
    let mut ids: HashSet<&str> = RULES.iter().map(|r| r.id).collect();
    for (k, rule) in CONTEXT.iter().enumerate() {
        assert!(ids.insert(rule.id), "{} repeats an id", rule.id);
        hides(rule.hit, rule.secret);
        keeps(rule.miss);
        // The context rule is what hides it: its keywords count, and it alone changes it.
        let at = &hits(rule.hit)[RULES.len() + k];
        assert!(!at.is_empty(), "{}: its keywords do not count", rule.id);
        let alone = apply_context(rule, rule.hit, at).expect("changes its hit");
        assert!(!alone.contains(rule.secret), "{}: {alone:?}", rule.id);
        for r in RULES {
            assert!(
                !regex_lite::Regex::new(r.pattern)
                    .unwrap()
                    .is_match(rule.hit)
                    || {
                        let once = regex_lite::Regex::new(r.pattern).unwrap();
                        once.replace_all(rule.hit, r.replace).contains(rule.secret)
                    },
                "{}: table rule {} hides it already",
                rule.id,
                r.id
            );
        }
    }
}

#[test]
fn a_name_is_a_credential_by_its_last_word() {
    for name in [
        "password",
        "DB_PASSWORD",
        "clientSecret",
        "api_key",
        "API key",
        "access-token",
        "Password",
        "x-auth",
        "signingKey",
        "passwords",
        "privateKey",
        "aws.secret",
    ] {
        assert!(is_credential_name(name), "{name}");
    }
    for name in [
        "token_count",
        "password_file",
        "max_tokens",
        "key",
        "public_key",
        "user",
        "secret_name",
        "passwordHash",
        "keyboard",
        "author",
        "",
        "description",
    ] {
        assert!(!is_credential_name(name), "{name}");
    }
}

/// Secrets that only their context gives away, in every channel waymark stores: command
/// lines, encoded URLs, continued lines, YAML, tables, prose, commit subjects.
#[test]
fn hides_secrets_by_their_context() {
    let cases: &[&str] = &[
        "sshpass -p Hunter2pw ssh deploy@host",
        "then ran `docker login -u bob -p Hunter2pw registry.io` and sshpass -p Hunter2pw ssh x",
        "redis-cli -h cache -a Hunter2pw ping",
        "openssl enc -aes-256-cbc -pass pass:Hunter2pw -in a",
        "openssl pkcs12 -export -passout pass:Hunter2pw -out x.p12",
        "ldapsearch -x -D cn=admin -w Hunter2pw -b dc=x",
        "zip -P Hunter2pw secret.zip a.txt",
        "htpasswd -b -c .htpasswd admin Hunter2pw",
        "htpasswd -nb admin Hunter2pw",
        "docker login -u bob -p Hunter2pw registry.io",
        "docker login --password Hunter2pw registry.io",
        "podman login --password=Hunter2pw quay.io",
        "keytool -list -keystore k.jks -storepass Hunter2pw",
        "jarsigner -keystore k.jks -storepass Hunter2pw -keypass Hunter2pw app.jar alias",
        "deploy --api-key Hunter2pw --env prod",
        "curl 'https://x.io/api?q=%7B%22password%22%3A%22Hunter2pw%22%7D'",
        "curl 'https://x.io/cb?next=%2Flogin%3Fpassword%3DHunter2pw%26u%3Db'",
        "export DB_PASSWORD=\\\n  Hunter2pw\n",
        "export DB_PASSWORD=\\\n  'Hunter2pw'\n",
        "db:\n  password: |\n    Hunter2pw\n  host: x\n",
        "- api_key: >-\n    Hunter2pw\n    more\n",
        "db:\n  \"password\": |  # from the vault\n    Hunter2pw\n",
        "db:\r\n  password: |\r\n    Hunter2pw\r\n",
        "https://acct.blob.core.windows.net/c?sv=2021-08-06&ss=b&sp=r&sig=abcDEF123ghiJKL456mnoPQR789stu%3D",
        "assertion failed: {\n  \"password\":\n    \"Hunter2pw\"\n}",
        "assertion failed: {\n  password:\n    Hunter2pw\n}",
        "The user set password \"Hunter2pw\" for the db",
        "| user | password |\n|------|----------|\n| bob  | Hunter2pw |\n",
        "user | API key\n--- | ---\nbob | Hunter2pw\n",
        "| user | password |\n|---|---|\nbob | Hunter2pw\n",
        "| user | password |\n| --- | --- |\n| a\\|b | Hunter2pw |\n",
        "db:\n  password: |\n    >Hunter2pw\n",
        "fix: set DB_PASSWORD Hunter2pw in staging",
        "rotated GITHUB_PAT Hunter2pw and DEPLOY_KEY Hunter2pw",
        // Quoted in Markdown, as HOOK.md and AGENT.md quote an output.
        "Its output ended:\n  > | user | password |\n  > | --- | --- |\n  > | bob | Hunter2pw |\n",
        "Its output ended:\n  > db:\n  >   password: |\n  >     Hunter2pw\n  >\n  >     more\n",
    ];
    for c in cases {
        hides(c, "Hunter2pw");
        assert_eq!(redact(&redact(c)), redact(c), "stable: {c}");
    }
}

#[test]
fn context_leaves_what_only_looks_like_it_alone() {
    for c in [
        "docker login -u bob --password-stdin registry.io",
        "vault kv get --token-file ~/.vault-token secret/app",
        "DB_PASSWORD is required; set it with `waymark config`",
        "echo $DB_PASSWORD | wc -c",
        "psql --host db $DB_PASSWORD mydb",
        "unset DB_PASSWORD API_TOKEN",
        "the _KEY suffix and KEY value stay",
        "| step | token count |\n| --- | --- |\n| parse | 1200 |\n",
        "notes: |\n  the password is rotated\nnext: 1\n",
        "password: > see the vault\n  next: 1\n",
        "password:\n  - rotate monthly\n",
        "cmd | grep password | wc -l\necho a | b\nx | Hunter | z\n",
        "| user | password |\n| a-b | c |\n| x | y |\n",
        "> token: |\n>   [REDACTED]\n    not part of it\n",
        "keytool -list -storepass:env KS_PASS",
        "openssl req -passin env:KEY_PASS -new",
        "7z a -mhe=on backup.7z data/",
        "the password field is required",
    ] {
        keeps(c);
    }
}

#[test]
fn a_yaml_block_ends_where_its_indentation_or_its_quote_does() {
    let quoted =
        "> db:\n>   token: |\n>     Tk1a2b3c\n>   host: db.internal\n> port: 5432\nafter\n";
    let out = redact(quoted);
    assert!(!out.contains("Tk1a2b3c"), "{out}");
    assert!(
        out.contains(">   host: db.internal\n> port: 5432\nafter\n"),
        "{out}"
    );
    let text =
        "db:\n  password: |\n    line one\n\n    line two\n  host: db.internal\nport: 5432\n";
    let out = redact(text);
    assert!(
        !out.contains("line one") && !out.contains("line two"),
        "{out}"
    );
    assert!(out.contains("  host: db.internal\nport: 5432\n"), "{out}");
    assert!(
        out.contains("[REDACTED]\n\n    [REDACTED]"),
        "a blank line stays blank: {out}"
    );
}

#[test]
fn a_table_hides_only_its_credential_columns_to_the_table_s_end() {
    let text = "| user | token | note |\n| --- | --- | --- |\n| bob | Tk1a2b3c | hi |\n| eve | Tk9z8y7x | yo |\n\nafter | Tkzzzz\n";
    let out = redact(text);
    assert!(
        !out.contains("Tk1a2b3c") && !out.contains("Tk9z8y7x"),
        "{out}"
    );
    assert!(out.contains("| bob | [REDACTED] | hi |"), "{out}");
    assert!(
        out.contains("| --- | --- | --- |\n"),
        "the separator row stays: {out}"
    );
    assert!(out.contains("after | Tkzzzz"), "{out}");
}

/// docs/redaction-rules.md: every rule with one case it hides and one it leaves, as the
/// table holds them. `WAYMARK_BLESS=1 cargo test -p waymark-redact` writes it anew.
#[test]
fn the_documented_table_is_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/redaction-rules.md");
    let want = rules_doc();
    if std::env::var_os("WAYMARK_BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/redaction-rules.md is not the table: run `WAYMARK_BLESS=1 cargo test -p waymark-redact`"
    );
}

fn rules_doc() -> String {
    // A case in a code span: JSON-quoted (newlines seen as \n), pipes escaped for the table.
    let case = |s: &str| {
        format!(
            "`` {} ``",
            serde_json::to_string(s).unwrap().replace('|', "\\|")
        )
    };
    let mut out = String::from(
        "# Redaction rules\n\n\
         Generated from `crates/redact/src/rules.jsonl` and `crates/redact/src/context.rs` \
         (`WAYMARK_BLESS=1 cargo test -p waymark-redact`; a test fails when this file is not \
         the table). Each rule with a case it hides (the secret in it must not survive) and a \
         case no rule may change; the tests hold every rule to both. How the rules are \
         applied: [redaction.md](redaction.md).\n\n\
         ## Context rules\n\n\
         Run after the table, on what it left.\n\n\
         | rule | what it hides | hides | leaves alone |\n| --- | --- | --- | --- |\n",
    );
    for r in CONTEXT {
        let what = r.what.replace('|', "\\|");
        out += &format!(
            "| `{}` | {what} | {} | {} |\n",
            r.id,
            case(r.hit),
            case(r.miss)
        );
    }
    out += "\n## The table, in the order it runs\n\n| rule | keywords | hides | leaves alone |\n| --- | --- | --- | --- |\n";
    for r in RULES {
        let keywords = r
            .keywords
            .iter()
            .map(|k| case(k))
            .collect::<Vec<_>>()
            .join(" ");
        out += &format!(
            "| `{}` | {keywords} | {} | {} |\n",
            r.id,
            case(r.hit),
            case(r.miss)
        );
    }
    out
}

#[test]
fn holds_secret_says_whether_a_rule_would_hide_something() {
    assert!(holds_secret("DB_PASSWORD=hunter22"));
    assert!(holds_secret(
        "| user | password |\n| --- | --- |\n| bob | Hunter2pw |\n"
    ));
    assert!(!holds_secret("cargo test --release"));
    assert!(!holds_secret("password = [REDACTED]"));
}

/// A YAML key is looked for on a line of up to 4 KiB, whatever is before it; a longer
/// line is not a block's key.
#[test]
fn a_block_key_is_read_on_a_line_up_to_its_bound() {
    let with_indent = |n: usize| {
        let key = format!("{}token: |", " ".repeat(n));
        format!("db:\n{key}\n{}Tk1a2b3c\n", " ".repeat(n + 2))
    };
    let longest = 4096 - "token: |".len();
    assert!(!redact(&with_indent(longest)).contains("Tk1a2b3c"));
    assert!(redact(&with_indent(longest + 1)).contains("Tk1a2b3c"));
}

/// Issue 43: a `.netrc` entry's password, in the shapes `cat ~/.netrc`, curl's verbose
/// output and a command's echo print it, is hidden; prose about passwords is not touched.
#[test]
fn a_netrc_password_is_hidden_in_each_of_its_shapes() {
    for (text, secret) in [
        (
            "machine api.example.com login bob password hunter2xyz",
            "hunter2xyz",
        ),
        (
            "machine api.example.com login bob password hunter2xyz\n",
            "hunter2xyz",
        ),
        ("password s3cr3tvalue", "s3cr3tvalue"),
        ("password s3cr3tvalue\n", "s3cr3tvalue"),
        (
            "machine h\n  login bob\n  password s3cr3tvalue\n",
            "s3cr3tvalue",
        ),
        ("\tpassword s3cr3tvalue  \n", "s3cr3tvalue"),
        (
            "default login anonymous password guest@example.org",
            "guest@example.org",
        ),
        ("machine h login bob password p4ss account acct1", "p4ss"),
        ("machine h password hunter2xyz login bob", "hunter2xyz"),
        ("> machine h login bob password hunter2xyz", "hunter2xyz"),
        (
            "$ cat ~/.netrc\nmachine h login bob password Hunter2pw\n$ ",
            "Hunter2pw",
        ),
        ("MACHINE h LOGIN bob PASSWORD hunter2xyz", "hunter2xyz"),
        (
            "deploy with machine h login bob password hunter2xyz",
            "hunter2xyz",
        ),
        (
            "echo 'machine h login bob password hunter2xyz' >> ~/.netrc",
            "hunter2xyz",
        ),
        ("login bob password hunter2xyz", "hunter2xyz"),
    ] {
        hides(text, secret);
    }
    for text in [
        "the password you gave for api.example.com is wrong",
        "Enter the password below.",
        "password:",
        "password: [REDACTED]",
        "a password reset was sent",
        "login failed: password expired for bob",
        "passwords match",
        "machine h login bob password [REDACTED]",
        "the machine asks for a password on boot",
        "machine h login bob then password reset failed",
    ] {
        keeps(text);
    }
}
