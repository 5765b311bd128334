//! What the plugin's launcher and fetch trust (issue 43, item 5), each promise tried with
//! a family of cases, not one: the fetch installs only a regular file named `waymark`
//! and touches nothing outside the data directory whatever the archive holds; no
//! program it runs comes from an empty or relative PATH entry (the project's own files);
//! the launcher runs no binary another user could have planted or changed; and events
//! at once download the release once, even when the download is quick.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
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

/// The archives the fetch must refuse, each named: `victim` a file outside the data
/// directory, `planted` a program noting its run.
fn refused_archives<'a>(
    victim: &'a str,
    planted: &'a [u8],
    absolute: &'a str,
) -> Vec<(&'static str, Vec<(&'a str, Member<'a>)>)> {
    vec![
        ("a symlink", vec![("waymark", Member::Symlink(victim))]),
        (
            "a relative symlink",
            vec![("waymark", Member::Symlink("../../../../victim"))],
        ),
        ("a hard link", vec![("waymark", Member::HardLink(victim))]),
        (
            "a ../ hard link",
            vec![("waymark", Member::HardLink("../../../waymark-fetch.log"))],
        ),
        (
            "a directory",
            vec![
                ("waymark/", Member::Dir),
                ("waymark/waymark", Member::File(planted)),
            ],
        ),
        (
            "a directory without its slash",
            vec![("waymark", Member::Dir)],
        ),
        (
            "a ../ member",
            vec![("../../waymark", Member::File(planted))],
        ),
        (
            "an absolute member",
            vec![(absolute, Member::File(planted))],
        ),
        (
            "a file, then a symlink over it",
            vec![
                ("waymark", Member::File(planted)),
                ("waymark", Member::Symlink(victim)),
            ],
        ),
        (
            "a file and another",
            vec![
                ("waymark", Member::File(planted)),
                ("README", Member::File(b"hi\n")),
            ],
        ),
    ]
}

/// The fetch of a release whose archive holds `members`: it installs nothing and leaves
/// only its note of the failure and its log in the data directory.
fn fetch_refuses(what: &str, members: &[(&str, Member)]) {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    crafted(site.path(), members);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);
    let (err, _) = plugin.event(&p, "Stop", "{}");
    assert!(err.contains("fetching the waymark binary"), "{what}: {err}");
    plugin.wait_for_the_fetch();
    let log = plugin.log();
    assert!(log.contains("nothing installed"), "{what}: {log}");
    assert!(plugin.bin().symlink_metadata().is_err(), "{what}");
    assert_eq!(
        tree(&plugin.data),
        ["bin", "bin/.fetch-failed", "waymark-fetch.log"],
        "{what}: {log}"
    );
}

#[test]
fn only_a_regular_file_named_waymark_is_installed_and_nothing_outside_the_data_dir_is_touched() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    fs::write(&victim, "mine\n").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
    let marker = outside.path().join("ran");
    let planted = format!("#!/bin/sh\necho ran >> '{}'\n", marker.display());
    let absolute = format!("{}/planted", outside.path().display());
    let v = victim.to_str().unwrap();
    for (what, members) in refused_archives(v, planted.as_bytes(), &absolute) {
        fetch_refuses(what, &members);
        let mode = fs::metadata(&victim).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{what}: the file outside keeps its mode");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "mine\n", "{what}");
        assert_eq!(fs::metadata(&victim).unwrap().nlink(), 1, "{what}");
        assert_eq!(
            tree(outside.path()),
            ["victim"],
            "{what}: nothing made outside, nothing run"
        );
    }
}

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

/// A change that makes a binary one another user could have planted or changed.
#[derive(Clone, Copy)]
enum Change {
    FileMode(u32),
    DirMode(u32),
    Owner(u32),
}

/// Applies `change` to the binary `file`.
fn change(file: &Path, change: Change) {
    let mode = |f: &Path, m: u32| fs::set_permissions(f, fs::Permissions::from_mode(m)).unwrap();
    match change {
        Change::FileMode(m) => mode(file, m),
        Change::DirMode(m) => mode(file.parent().unwrap(), m),
        Change::Owner(uid) => std::os::unix::fs::chown(file, Some(uid), None).unwrap(),
    }
}

/// Applies `broken` to `file`, then writes it as another user could now have (the same
/// bytes, a new time): what the launcher's kept verdict sees.
fn changed_by_another(file: &Path, broken: Change) {
    change(file, broken);
    let bytes = fs::read(file).unwrap();
    let at = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
    fs::write(file, bytes).unwrap();
    let f = fs::File::options().write(true).open(file).unwrap();
    f.set_modified(at).unwrap();
}

#[test]
fn a_binary_another_user_could_have_planted_or_changed_is_not_run() {
    let p = Project::new();
    let co = Checkout::new();
    let file = co.installed.clone();
    let (bin, how, _) = which_of(&p, &co);
    assert_eq!(
        (Path::new(&bin), how.as_str()),
        (file.canonicalize().unwrap().as_path(), "waymark on PATH")
    );
    let mut family = vec![
        ("may be written by any user", Change::FileMode(0o777)),
        ("may be written by any user", Change::FileMode(0o757)),
        ("a directory any user may write", Change::DirMode(0o777)),
        ("a directory any user may write", Change::DirMode(0o773)),
    ];
    if root() {
        family.push(("owned by another user (uid 65534)", Change::Owner(65534)));
    } else {
        eprintln!("not root: the other owner's case is skipped");
    }
    for (why, broken) in family {
        changed_by_another(&file, broken);
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
        assert!(!co.notes().contains("installed"), "{why}: {}", co.notes());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{why}: {err}");
        for mend in [
            Change::FileMode(0o755),
            Change::DirMode(0o755),
            Change::Owner(0),
        ] {
            change(&file, mend);
        }
    }
    // A directory others may write but not replace in (the sticky bit, as /tmp): run.
    change(&file, Change::DirMode(0o1777));
    let (_, how, err) = which_of(&p, &co);
    assert_eq!(how, "waymark on PATH", "{err}");
}

/// The check is the one every candidate passes: the plugin's own bin/waymark.bin, the
/// binary kept in the data directory, waymark on PATH.
#[test]
fn every_candidate_binary_passes_the_same_check() {
    let p = Project::new();
    let co = Checkout::new();
    let own = co.path("plugin/bin/waymark.bin");
    let kept = p.config.path().join("waymark-waymark/bin/waymark");
    for (candidate, how) in [
        (&own, "the plugin's own bin/waymark.bin"),
        (&kept, "the binary kept in the plugin's data directory"),
    ] {
        script(candidate, "exit 0");
        let (bin, said, _) = which_of(&p, &co);
        assert!(bin.ends_with(candidate.file_name().unwrap().to_str().unwrap()));
        assert_eq!(said, how);
        changed_by_another(candidate, Change::FileMode(0o777));
        let (_, said, err) = which_of(&p, &co);
        assert!(err.contains("may be written by any user"), "{err}");
        assert_ne!(said, how, "{err}");
    }
    let (_, how, err) = which_of(&p, &co);
    assert!(
        err.contains("waymark.bin may be written") || err.contains("bin/waymark may be written"),
        "{err}"
    );
    assert_eq!(how, "waymark on PATH");
}

/// A binary kept in the data directory that another user could have changed is refused,
/// and the release is fetched again in its place (it used to be taken for one just
/// fetched, and never replaced).
#[test]
fn a_refused_binary_in_the_data_directory_is_fetched_again() {
    let p = Project::new();
    let site = tempfile::tempdir().unwrap();
    release(site.path(), None);
    let server = Server::start(site.path());
    let plugin = Installed::new(&p, &server);
    plugin.at_once(&p, 1);
    plugin.wait_for_the_fetch();
    assert!(plugin.bin().exists(), "{}", plugin.log());
    change(&plugin.bin(), Change::FileMode(0o777));
    let out = plugin
        .hook(&p, "PostToolUse")
        .output_with(&p.write_event("b.txt", "b\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        err.contains("may be written by any user") && err.contains("fetching the waymark binary"),
        "{err}"
    );
    plugin.wait_for_the_fetch();
    assert_eq!(server.archive_asked(), 2, "{}", plugin.log());
    let mode = fs::metadata(plugin.bin()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the fetched binary replaced the refused one");
    assert!(plugin.bin().with_file_name("waymark.refused").exists());
}

/// The check's verdict is kept: an event whose binary and its directory are unchanged
/// runs no `ls` (it cost each event a fork and an exec); writing the binary, or its
/// directory gaining a file, makes the next event check again, and a binary made
/// writable by others and written is refused as before.
#[test]
fn the_verdict_is_kept_until_the_binary_or_its_directory_changes() {
    let p = Project::new();
    let co = Checkout::new();
    let spy = tempfile::tempdir().unwrap();
    let calls = spy.path().join("calls");
    let ls = spy.path().join("ls");
    fs::write(
        &ls,
        format!(
            "#!/bin/sh\necho ls >> {}\nexec /bin/ls \"$@\"\n",
            calls.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&ls, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", spy.path().display(), co.search_path(true));
    let which = || {
        let out = co
            .launcher(&p, "waymark-waymark", &["--which"])
            .env("PATH", &path)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (said, err)
    };
    let checks = || {
        fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let (said, _) = which();
    assert!(said.contains("waymark on PATH"), "{said}");
    assert_eq!(checks(), 1, "the first event checks");
    for _ in 0..3 {
        assert!(which().0.contains("waymark on PATH"));
    }
    assert_eq!(checks(), 1, "unchanged: no ls");
    // Time passes, the binary is written (rebuilt, or by someone else): checked again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let bin = co.installed.clone();
    let bytes = fs::read(&bin).unwrap();
    fs::write(&bin, bytes).unwrap();
    assert!(which().0.contains("waymark on PATH"));
    assert_eq!(checks(), 2, "written: checked again");
    // Its directory gains a file: checked again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    fs::write(bin.with_file_name("other"), "x").unwrap();
    which();
    assert_eq!(checks(), 3, "its directory changed: checked again");
    // Made writable by any user, then written: refused.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    change(&bin, Change::FileMode(0o777));
    let bytes = fs::read(&bin).unwrap();
    fs::write(&bin, bytes).unwrap();
    let (said, err) = which();
    assert!(
        err.contains("may be written by any user") && !said.contains("waymark on PATH"),
        "{said}\n{err}"
    );
}
