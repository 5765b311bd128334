//! What the plugin's launcher and fetch trust (issue 43, item 5), each promise tried with
//! a family of cases, not one: the fetch installs only a regular file named `waymark`
//! and touches nothing outside the data directory whatever the archive holds; no
//! program it runs comes from an empty or relative PATH entry (the project's own files);
//! the launcher runs no binary another user could have planted or changed; and events
//! at once download the release once, even when the download is quick.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::fetch::{Installed, Server, archive, release, right_sum, write_sum};
use super::launcher::{Checkout, OutputWith, script};
use crate::util::Project;

/// One member of a hand-made tar archive.
enum Member<'a> {
    File(&'a [u8]),
    Dir,
    Symlink(&'a str),
    HardLink(&'a str),
}

/// A ustar header block for `name`.
fn header(name: &str, member: &Member, size: usize) -> [u8; 512] {
    let mut h = [0u8; 512];
    let put =
        |h: &mut [u8; 512], at: usize, text: &[u8]| h[at..at + text.len()].copy_from_slice(text);
    put(&mut h, 0, name.as_bytes());
    let (kind, mode, link) = match member {
        Member::File(_) => (b'0', "0000755", ""),
        Member::Dir => (b'5', "0000755", ""),
        Member::Symlink(to) => (b'2', "0000777", *to),
        Member::HardLink(to) => (b'1', "0000755", *to),
    };
    put(&mut h, 100, mode.as_bytes());
    put(&mut h, 108, b"0000000");
    put(&mut h, 116, b"0000000");
    put(&mut h, 124, format!("{size:011o}").as_bytes());
    put(&mut h, 136, b"14000000000");
    h[156] = kind;
    put(&mut h, 157, link.as_bytes());
    put(&mut h, 257, b"ustar\x0000");
    put(&mut h, 148, b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    put(&mut h, 148, format!("{sum:06o}\0 ").as_bytes());
    h
}

/// The release archive in `site` made of `members` (gzipped by gzip), with its right sum.
fn crafted(site: &Path, members: &[(&str, Member)]) {
    let mut tar = Vec::new();
    for (name, member) in members {
        let body: &[u8] = match member {
            Member::File(body) => body,
            _ => b"",
        };
        tar.extend_from_slice(&header(name, member, body.len()));
        tar.extend_from_slice(body);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.resize(tar.len() + 1024, 0);
    let raw = site.join("raw.tar");
    fs::write(&raw, tar).unwrap();
    let out = Command::new("gzip").arg("-c").arg(&raw).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    fs::write(site.join(archive()), out.stdout).unwrap();
    write_sum(site, &right_sum(site));
}

/// Every name under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            names.push(path.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                todo.push(path);
            }
        }
    }
    names.sort();
    names
}

#[test]
fn only_a_regular_file_named_waymark_is_installed_and_nothing_outside_the_data_dir_is_touched() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    fs::write(&victim, "mine\n").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
    let marker = outside.path().join("ran");
    let planted = format!("#!/bin/sh\necho ran >> '{}'\n", marker.display());
    let v = victim.to_str().unwrap();
    let absolute = format!("{}/planted", outside.path().display());
    let family: Vec<(&str, Vec<(&str, Member)>)> = vec![
        ("a symlink", vec![("waymark", Member::Symlink(v))]),
        (
            "a relative symlink",
            vec![("waymark", Member::Symlink("../../../../victim"))],
        ),
        ("a hard link", vec![("waymark", Member::HardLink(v))]),
        (
            "a ../ hard link",
            vec![("waymark", Member::HardLink("../../../waymark-fetch.log"))],
        ),
        (
            "a directory",
            vec![
                ("waymark/", Member::Dir),
                ("waymark/waymark", Member::File(planted.as_bytes())),
            ],
        ),
        (
            "a directory without its slash",
            vec![("waymark", Member::Dir)],
        ),
        (
            "a ../ member",
            vec![("../../waymark", Member::File(planted.as_bytes()))],
        ),
        (
            "an absolute member",
            vec![(absolute.as_str(), Member::File(planted.as_bytes()))],
        ),
        (
            "a file, then a symlink over it",
            vec![
                ("waymark", Member::File(planted.as_bytes())),
                ("waymark", Member::Symlink(v)),
            ],
        ),
        (
            "a file and another",
            vec![
                ("waymark", Member::File(planted.as_bytes())),
                ("README", Member::File(b"hi\n")),
            ],
        ),
    ];
    for (what, members) in family {
        let p = Project::new();
        let site = tempfile::tempdir().unwrap();
        crafted(site.path(), &members);
        let server = Server::start(site.path());
        let plugin = Installed::new(&p, &server);
        let (err, _) = plugin.event(&p, "Stop", "{}");
        assert!(err.contains("fetching the waymark binary"), "{what}: {err}");
        plugin.wait_for_the_fetch();
        let log = plugin.log();
        assert!(log.contains("nothing installed"), "{what}: {log}");
        assert!(
            !plugin.bin().exists() && plugin.bin().symlink_metadata().is_err(),
            "{what}"
        );
        assert_eq!(
            tree(&plugin.data),
            ["bin", "bin/.fetch-failed", "waymark-fetch.log"],
            "{what}: {log}"
        );
        let mode = fs::metadata(&victim).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{what}: the file outside keeps its mode");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "mine\n", "{what}");
        assert_eq!(
            tree(outside.path()),
            ["victim"],
            "{what}: nothing made outside, nothing run"
        );
        assert_eq!(fs::metadata(&victim).unwrap().nlink(), 1, "{what}");
    }
}

use std::os::unix::fs::MetadataExt;

/// Fakes of every program the launcher and the fetch run (but `sh`, which the test's own
/// `sh -c` looks up as Claude Code's does), each noting its run in `marker` and failing.
fn plant(dir: &Path, marker: &Path) {
    for tool in [
        "curl",
        "wget",
        "tar",
        "gzip",
        "sha256sum",
        "shasum",
        "openssl",
        "find",
        "ls",
        "cat",
        "sed",
        "mkdir",
        "date",
        "uname",
        "head",
        "tr",
        "rm",
        "mv",
        "chmod",
        "git",
        "dirname",
        "touch",
        "cargo",
    ] {
        script(
            &dir.join(tool),
            &format!("echo \"{tool} $*\" >> '{}'\nexit 1", marker.display()),
        );
    }
}

#[test]
fn no_program_is_run_from_an_empty_or_relative_path_entry() {
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    for shape in [
        ":{bin}:/usr/bin:/bin",
        "{bin}::/usr/bin:/bin",
        "{bin}:/usr/bin:/bin:",
        "bin:{bin}:/usr/bin:/bin",
        ".:{bin}:/usr/bin:/bin",
        "./bin:{bin}:/usr/bin:/bin",
    ] {
        let p = Project::new();
        let plugin = Installed::new(&p, &server);
        let marker = p.config.path().join("planted-ran");
        plant(p.root(), &marker);
        plant(&p.root().join("bin"), &marker);
        let path = shape.replace("{bin}", &plugin.co.path("plugin/bin").display().to_string());
        let out = plugin.hook(&p, "Stop").env("PATH", &path).output_with("{}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.contains("fetching the waymark binary"),
            "{shape}: {err}"
        );
        plugin.wait_for_the_fetch();
        assert!(
            plugin.bin().exists(),
            "{shape}: the system's tools fetched it: {}",
            plugin.log()
        );
        // The next event runs it; the launcher checks it (ls) from a trusted PATH too.
        let out = plugin
            .hook(&p, "PostToolUse")
            .env("PATH", &path)
            .output_with(&p.write_event("a.txt", "a\n"));
        assert!(out.status.success(), "{shape}: {out:?}");
        assert!(
            p.path(".orchestration/hook.json").exists(),
            "{shape}: the hook ran"
        );
        let which = plugin
            .launcher(&p, &["--which"])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(which.status.success(), "{shape}: {which:?}");
        assert!(
            !marker.exists(),
            "{shape}: planted programs ran: {}",
            fs::read_to_string(&marker).unwrap()
        );
    }
}

#[test]
fn twelve_events_at_once_download_the_release_once() {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);
    let events = plugin.at_once(&p, 12);
    for (err, _) in &events {
        assert!(
            err.contains("fetching the waymark binary")
                || err.contains("still being fetched")
                || err.contains("was just fetched"),
            "{err}"
        );
    }
    plugin.wait_for_the_fetch();
    assert!(plugin.bin().exists(), "{}", plugin.log());
    // An event whose launcher found no binary just before it arrived, whose fetch takes
    // the lock just after the download released it: it downloads nothing.
    let fetch = plugin.co.path("plugin/hooks/fetch-waymark");
    let mut late = Command::new("sh");
    late.arg(fetch).arg(plugin.co.path("plugin"));
    let late = plugin
        .installed(plugin.co.as_plugin(late, &p, "waymark-waymark"))
        .output_with("");
    let said = String::from_utf8_lossy(&late.stderr);
    assert!(
        late.status.success() && said.contains("was just fetched"),
        "{said}"
    );
    assert_eq!(server.archive_asked(), 1, "{events:?}\n{}", plugin.log());
    assert_eq!(
        plugin.log().matches("fetching http").count(),
        1,
        "{}",
        plugin.log()
    );
}

/// Whether this test runs as root (it can give a file to another user).
fn root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// `--which` of the checkout's launcher with the installed waymark on PATH: the binary,
/// why, and what it said on stderr.
fn which_of(p: &Project, co: &Checkout) -> (String, String, String) {
    let out = co
        .launcher(p, "waymark-waymark", &["--which"])
        .env("PATH", co.search_path(true))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = said.lines().map(str::to_string);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
        err,
    )
}

#[test]
fn a_binary_another_user_could_have_planted_or_changed_is_not_run() {
    let p = Project::new();
    let co = Checkout::new();
    let file = co.installed.clone();
    let dir = file.parent().unwrap().to_path_buf();
    let mode = |f: &Path, m: u32| fs::set_permissions(f, fs::Permissions::from_mode(m)).unwrap();
    let (bin, how, _) = which_of(&p, &co);
    assert_eq!(
        (Path::new(&bin), how.as_str()),
        (file.canonicalize().unwrap().as_path(), "waymark on PATH")
    );

    let mut family: Vec<(&str, Box<dyn Fn()>, Box<dyn Fn()>)> = vec![
        (
            "may be written by any user",
            Box::new(|| mode(&file, 0o777)),
            Box::new(|| mode(&file, 0o755)),
        ),
        (
            "a directory any user may write",
            Box::new(|| mode(&dir, 0o777)),
            Box::new(|| mode(&dir, 0o755)),
        ),
        (
            "a directory any user may write",
            Box::new(|| mode(&file, 0o757)),
            Box::new(|| mode(&file, 0o755)),
        ),
    ];
    // (The third: a file others may not write but its directory they may.)
    family[2].1 = Box::new(|| mode(&dir, 0o773));
    family[2].2 = Box::new(|| mode(&dir, 0o755));
    if root() {
        let owner = |uid| std::os::unix::fs::chown(&file, Some(uid), None).unwrap();
        family.push((
            "owned by another user (uid 65534)",
            Box::new(move || owner(65534)),
            Box::new(move || owner(0)),
        ));
    } else {
        eprintln!("not root: the other owner's case is skipped");
    }
    for (why, break_it, mend) in &family {
        break_it();
        let (bin, how, err) = which_of(&p, &co);
        assert!(err.contains("not run") && err.contains(why), "{why}: {err}");
        assert!(
            bin.ends_with("release/waymark") && how.contains("no waymark installed"),
            "{why}: {bin} {how}"
        );
        let out = co
            .registered(&p, "waymark-waymark", "Stop")
            .env("PATH", co.search_path(true))
            .output_with("{}");
        assert!(out.status.success(), "{out:?}");
        assert!(
            !co.notes().contains("installed"),
            "{why}: it ran: {}",
            co.notes()
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{why}: {out:?}"
        );
        mend();
    }
    // A directory others may write but not replace in (the sticky bit, as /tmp): run.
    mode(&dir, 0o1777);
    let (_, how, err) = which_of(&p, &co);
    assert_eq!(how, "waymark on PATH", "{err}");
    mode(&dir, 0o755);

    // Every candidate passes the same check: the plugin's own bin/waymark.bin first.
    let own = co.path("plugin/bin/waymark.bin");
    script(&own, "exit 0");
    let (bin, how, _) = which_of(&p, &co);
    assert!(
        bin.ends_with("waymark.bin") && how.contains("plugin's own"),
        "{bin}"
    );
    mode(&own, 0o666 | 0o111);
    let (bin, how, err) = which_of(&p, &co);
    assert!(
        err.contains("waymark.bin may be written by any user"),
        "{err}"
    );
    assert_eq!(how, "waymark on PATH", "{bin}");
}
