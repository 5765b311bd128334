//! The release workflow's own steps, run here as it runs them (GitHub Actions never runs
//! in this repository's CI): `.github/release-check`, which refuses a tag the plugin would
//! not fetch, and `.github/release-archive`, which packs each binary (its archive is the
//! one tests/install/fetch.rs serves and installs).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The checkout's root.
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `.github/release-check TAG OWNER/REPO` in `dir`.
fn check(dir: &Path, tag: &str, repository: &str) -> Output {
    std::process::Command::new(repo().join(".github/release-check"))
        .args([tag, repository])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The files release-check reads, copied to a scratch checkout.
fn manifests() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "Cargo.toml",
        "plugin/.claude-plugin/plugin.json",
        ".claude-plugin/marketplace.json",
    ] {
        let to = dir.path().join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(repo().join(rel), to).unwrap();
    }
    let plugin = dir.path().join("plugin/.claude-plugin/plugin.json");
    (dir, plugin)
}

#[test]
fn the_workflow_runs_the_scripts_tested_here() {
    let workflow = fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    assert!(workflow.contains(r#".github/release-check "$GITHUB_REF_NAME" "$GITHUB_REPOSITORY""#));
    assert!(workflow.contains(".github/release-archive target/${{ matrix.target }}/release/waymark ${{ matrix.target }} dist"));
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(workflow.contains(&format!("target: {target}")), "{target}");
        // The launcher's name for the same machine.
        let fetch = fs::read_to_string(repo().join("plugin/hooks/fetch-waymark")).unwrap();
        assert!(fetch.contains(&format!("target={target}")), "{target}");
    }
}

/// A tag is released only when it is `v` and the version Cargo.toml, plugin.json and the
/// marketplace name: the version the launcher fetches. A `repository` in plugin.json must
/// be the repository releasing (none is: the launcher then fetches from where the plugin
/// was installed).
#[test]
fn only_a_tag_the_plugin_would_fetch_is_released() {
    let version = env!("CARGO_PKG_VERSION");
    let (dir, plugin) = manifests();
    let ok = check(dir.path(), &format!("v{version}"), "someone/waymark");
    assert!(ok.status.success(), "{ok:?}");

    let other = check(dir.path(), "v9.9.9", "someone/waymark");
    assert_eq!(other.status.code(), Some(1));
    let said = String::from_utf8_lossy(&other.stdout);
    for file in ["Cargo.toml", "plugin.json", "marketplace.json"] {
        let line = format!("::error::{file} says version {version}, the tag v9.9.9 says 9.9.9");
        assert!(said.contains(&line), "{said}");
    }
    let bare = check(dir.path(), version, "someone/waymark");
    assert_eq!(bare.status.code(), Some(1), "{bare:?}");

    let text = fs::read_to_string(&plugin).unwrap();
    let named = text.replacen(
        "\"version\":",
        // Written as the launcher still reads it: a tab, a space before the colon, `.git`.
        "\t\"repository\" : \"https://github.com/publisher/waymark.git\",\n  \"version\":",
        1,
    );
    fs::write(&plugin, named).unwrap();
    let fork = check(dir.path(), &format!("v{version}"), "someone/waymark");
    assert_eq!(fork.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&fork.stdout)
            .contains("must be https://github.com/someone/waymark")
    );
    let publisher = check(dir.path(), &format!("v{version}"), "publisher/waymark");
    assert!(publisher.status.success(), "{publisher:?}");
}
