//! Journal lines sealed by this machine: a kept event (`pending.jsonl`) or a held Codex
//! call (`codex-bash.jsonl`) carries a MAC under a key derived from the master key, which
//! never leaves this machine. A journal a repository carries in (committed, or planted
//! with a rollout saying "Process exited with code 0") has no valid seal and is never
//! applied: applied, it would become a passing receipt signed with the key of whoever
//! cloned and worked (docs/guarantees.md).

use waymark_core::config::Config;
use waymark_redact::Clean;

/// The field that holds the seal, last on the line.
const FIELD: &str = "seal";
/// What the MAC's key is derived for.
const PURPOSE: &str = "journal";

/// `line` (one JSON object) with its seal; as it is when no key can be had (it will then
/// not be applied: the caller logs why).
pub fn seal(config: &Config, line: Clean) -> Result<Clean, super::KeyError> {
    let mac = super::signer(config)?.mac(PURPOSE, line.as_bytes());
    Ok(line.with_hex_field(FIELD, &mac))
}

/// Whether `line` carries a seal this machine made of the rest of it.
pub fn sealed_here(config: &Config, line: &[u8]) -> bool {
    let Some((body, mac)) = split(line) else {
        return false;
    };
    let Ok(signer) = super::existing_signer(config) else {
        return false;
    };
    let expected = signer.mac(PURPOSE, &body);
    // Equal length hex strings compared whole: no early exit on the first difference.
    expected.len() == mac.len()
        && expected
            .bytes()
            .zip(mac.bytes())
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0
}

/// The line as it was before its seal, and the seal.
fn split(line: &[u8]) -> Option<(Vec<u8>, &str)> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    let marker = format!(",\"{FIELD}\":\"");
    let at = text.rfind(&marker)?;
    let mac = text[at + marker.len()..].strip_suffix("\"}")?;
    if mac.is_empty() || !mac.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut body = text.as_bytes()[..at].to_vec();
    body.push(b'}');
    Some((body, mac))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &std::path::Path) -> Config {
        Config {
            key_file: dir.join("keys/master.key").to_string_lossy().into_owned(),
            ..Config::default()
        }
    }

    /// A line sealed here is recognized; one edited, one unsealed, one sealed under another
    /// machine's key, are not.
    #[test]
    fn only_a_line_this_machine_sealed_is_its_own() {
        let (here, there) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (here, there) = (config(here.path()), config(there.path()));
        let line = Clean::json(&serde_json::json!({"event": "PostToolUse", "n": 1}));
        let sealed = seal(&here, line.clone()).unwrap();
        assert!(sealed.as_str().ends_with("\"}") && sealed.as_str().contains(",\"seal\":\""));
        let v: serde_json::Value = serde_json::from_str(sealed.as_str()).unwrap();
        assert_eq!(v["n"], 1);
        assert!(sealed_here(&here, sealed.as_bytes()));
        assert!(sealed_here(&here, sealed.clone().with_newline().as_bytes()));
        assert!(!sealed_here(&here, line.as_bytes()));
        let edited = sealed.as_str().replace("\"n\":1", "\"n\":2");
        assert!(!sealed_here(&here, edited.as_bytes()));
        let theirs = seal(&there, line).unwrap();
        assert!(!sealed_here(&here, theirs.as_bytes()));
    }
}
