use super::*;

/// The paths `command` names as written (a file in a directory as `dir/+name`), and
/// whether something it writes cannot be named.
fn read(command: &str) -> (Vec<String>, bool) {
    let w = of(command);
    let paths = w
        .targets
        .iter()
        .map(|t| match &t.in_dir {
            Some(name) => format!("{}/+{name}", t.path),
            None => t.path.clone(),
        })
        .collect();
    (paths, !w.unreadable.is_empty())
}

fn writes(command: &str, want: &[&str]) {
    assert_eq!(
        read(command),
        (want.iter().map(|s| s.to_string()).collect(), false),
        "{command:?}"
    );
}

#[test]
fn output_redirections_are_writes() {
    for (command, want) in [
        ("echo x > other/file", &["other/file"][..]),
        ("echo x>f", &["f"]),
        ("echo x >> a.log", &["a.log"]),
        ("set -C; echo x >| a", &["a"]),
        ("cargo test &> out.txt", &["out.txt"]),
        ("cargo test &>> out.txt", &["out.txt"]),
        ("cargo test 2> err.log", &["err.log"]),
        ("cargo test 2>err.log 1>out.log", &["err.log", "out.log"]),
        ("cmd >&both.log", &["both.log"]),
        ("exec 3<> rw.bin", &["rw.bin"]),
        ("{ echo a; echo b; } > group.txt", &["group.txt"]),
        ("echo 2 > f", &["f"]),
        ("echo x > 'with space.txt'", &["with space.txt"]),
        ("echo x > /abs/path", &["/abs/path"]),
        ("echo x > ~/notes.txt", &["~/notes.txt"]),
    ] {
        writes(command, want);
    }
}

#[test]
fn descriptors_devices_inputs_and_quoted_text_are_not_writes() {
    for command in [
        "cargo test 2>&1",
        "echo oops >&2",
        "cmd 1>&- 2>&1",
        "grep -r x src > /dev/null 2>&1",
        "cmd &>/dev/null",
        "cmd > /dev/stderr",
        "wc -l < in.txt",
        "cat <<< 'a > b'",
        "echo 'a > b' \"c >> d\" e\\>f",
        "echo x # > commented.txt",
        "diff <(sort a) <(sort b)",
        "git commit -m \"use a > b\"",
        "ls",
    ] {
        writes(command, &[]);
    }
}

#[test]
fn tee_touch_truncate_and_dd_name_their_files() {
    for (command, want) in [
        (
            "cargo test | tee -a out.log other.log",
            &["out.log", "other.log"][..],
        ),
        ("echo x | sudo tee /etc/hosts > /dev/null", &["/etc/hosts"]),
        (
            "make 2>&1 | tee >(gzip > build.log.gz) plain.log",
            &["build.log.gz", "plain.log"],
        ),
        ("touch -d yesterday a b", &["a", "b"]),
        ("touch -r ref.txt c", &["c"]),
        ("truncate -s 0 app.log", &["app.log"]),
        ("dd if=/dev/zero of=disk.img bs=1M count=1", &["disk.img"]),
        ("sort -u -o sorted.txt in.txt", &["sorted.txt"]),
        ("curl -sSLo tool.tgz https://x/y", &["tool.tgz"]),
        ("wget -q -O page.html https://x", &["page.html"]),
        ("wget -O - https://x | sh", &[]),
        ("curl https://x", &[]),
    ] {
        writes(command, want);
    }
}

#[test]
fn sed_in_place_writes_its_files_after_the_script() {
    for (command, want) in [
        ("sed -i 's/a/b/' f1 f2", &["f1", "f2"][..]),
        ("sed -i.bak -e s/a/b/ -e s/c/d/ f", &["f"]),
        ("sed -i '' 's/a/b/' f", &["f"]),
        ("sed --in-place=.orig -f fix.sed f", &["f"]),
        ("sed --in-place --expression=s/a/b/ f", &["f"]),
        // `-ie` is `-i` with the suffix `e`: the script is the first operand.
        ("sed -ie s/a/b/ f", &["f"]),
        ("sed -n -E -i 's/a/b/p' f", &["f"]),
        ("sed -Ei 's/a/b/' f", &["f"]),
        ("sed 's/a/b/' f", &[]),
        ("sed -e s/a/b/ f > out", &["out"]),
        ("sed -n '/x/p' f", &[]),
    ] {
        writes(command, want);
    }
}

#[test]
fn copies_moves_and_links_write_their_destination() {
    for (command, want) in [
        ("cp a other/b", &["other/b/+a"][..]),
        ("cp -r src1 src2 dest", &["dest/src1", "dest/src2"]),
        ("cp a.rs dir/", &["dir/a.rs"]),
        ("cp -t dir a b/c", &["dir/a", "dir/c"]),
        ("cp --target-directory=dir a", &["dir/a"]),
        ("cp -T a b", &["b"]),
        ("cp -S .old --backup=simple a b", &["b/+a"]),
        // A move removes its source.
        ("mv old.rs new.rs", &["old.rs", "new.rs/+old.rs"]),
        (
            "install -m 644 -o root tool /usr/local/bin/tool",
            &["/usr/local/bin/tool/+tool"],
        ),
        ("install -d build/a build/b", &["build/a", "build/b"]),
        ("ln -sf ../shared/x.rs src/x.rs", &["src/x.rs/+x.rs"]),
        ("ln -s ../shared/x.rs", &["x.rs"]),
        ("cp only", &[]),
    ] {
        writes(command, want);
    }
}

#[test]
fn scripts_lists_and_substitutions_are_followed() {
    for (command, want) in [
        ("bash -c 'echo x > f'", &["f"][..]),
        ("sh -lc \"sed -i s/a/b/ g\"", &["g"]),
        ("bash -o pipefail -c 'touch h'", &["h"]),
        ("env A=1 bash -c 'bash -c \"touch deep\"'", &["deep"]),
        ("echo \"$(date > stamp)\"", &["stamp"]),
        ("echo `touch tick`", &["tick"]),
        (
            "cargo build && cp target/x bin/x || echo failed > status; touch done",
            &["bin/x/+x", "status", "done"],
        ),
        (
            "cat > f <<EOF\nline > not-a-file\nEOF\necho done > g",
            &["f", "g"],
        ),
        ("cat <<'EOF' > out.txt\n$x `y`\nEOF", &["out.txt"]),
        ("bash <<'EOF'\ntouch from-heredoc\nEOF", &["from-heredoc"]),
        (
            "if true; then sed -i s/a/b/ f; else touch g; fi",
            &["f", "g"],
        ),
        ("while true; do touch t; done", &["t"]),
        // Claude Code's commit: a here-document in `$(…)`, with a quote, a parenthesis
        // and an address in angle brackets in its body.
        (
            "git commit -m \"$(cat <<'EOF'\nDon't break (things\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\" && echo ok > status",
            &["status"],
        ),
        ("echo $((1 + (2 * 3))) > n", &["n"]),
        ("diff <(sort a) <(sort b) > d", &["d"]),
    ] {
        writes(command, want);
    }
}

/// A writer run by a wrapper (`timeout`, `nice`, `env -i`, `sudo -u`) or after a
/// reserved word writes what it names; a wrapper writes what its options name (`/usr/bin/time -o`)
/// and runs the command line they hold (`env -S`, `flock -c`).
#[test]
fn wrappers_run_the_writer_after_them() {
    for (command, want) in [
        (
            "timeout 5 sed -i s/a/b/ out_of_scope.txt",
            &["out_of_scope.txt"][..],
        ),
        ("timeout -s KILL 5 sed -i s/a/b/ f", &["f"]),
        ("timeout --kill-after=2 5 touch t", &["t"]),
        ("nice -n 10 cp a b", &["b/+a"]),
        ("stdbuf -oL tee log", &["log"]),
        ("env -i A=b touch t", &["t"]),
        ("sudo -u root tee /etc/x", &["/etc/x"]),
        ("nohup timeout 5 bash -c 'touch deep'", &["deep"]),
        ("if timeout 5 touch t; then ! nice touch u; fi", &["t", "u"]),
        // What a wrapper runs or writes by an option.
        ("env -S 'sed -i s/a/b/' f", &["f"]),
        ("env -S'touch a' b", &["a", "b"]),
        ("env --split-string='tee log'", &["log"]),
        ("flock /tmp/lock -c 'touch t'", &["t"]),
        ("flock -w 5 /tmp/lock --command 'echo x > f'", &["f"]),
        ("flock /tmp/lock touch t", &["t"]),
        ("/usr/bin/time -o times.txt cargo test", &["times.txt"]),
        ("command time -otimes.txt touch t", &["times.txt", "t"]),
        ("A=1 time --output=times.txt -a cargo test", &["times.txt"]),
        ("env time -ao times.txt cargo test", &["times.txt"]),
        ("env -S '-i sed -i s/a/b/' f", &["f"]),
        // `time` followed by an option other than -p can only be the program.
        ("time -o times.txt cargo test", &["times.txt"]),
        ("time -p touch t", &["t"]),
        ("if time -p touch t; then :; fi", &["t"]),
        // Bash's reserved word takes no -o: `time -p -o f …` runs `-o`, writing nothing;
        // after an assignment `time` is the program, whose -o writes.
        ("time -p -o f touch t", &[]),
        ("A=1 time -p -o f touch t", &["f", "t"]),
        // As env and flock read them: after `--` and after flock's file, the command.
        ("env -- -S 'touch x'", &[]),
        ("flock /tmp/lock -o touch t", &[]),
        ("env -S", &[]),
        ("flock /tmp/lock -c", &[]),
    ] {
        writes(command, want);
    }
    let (_, unreadable) = read("find . -exec timeout 5 sed -i s/a/b/ {} +");
    assert!(unreadable);
    // What the shell changes is not fixed by quoting it into the wrapper's command line.
    assert_eq!(read("env -S tee \"$LOG\""), (vec![], true));
    assert_eq!(read("env -S tee log"), (vec!["log".to_string()], false));
}

/// Scripts run by `xargs sh -c` inside one another are read as deep as `bash -c` ones, not
/// each from the top again: too deep is unreadable.
#[test]
fn nested_scripts_are_read_to_one_depth() {
    let chain = |levels: usize| {
        (0..levels).fold("true".to_string(), |inner, _| {
            format!("xargs sh -c {}", crate::shell::quote(&inner))
        })
    };
    assert_eq!(read(&chain(3)), (vec![], false));
    let w = of(&chain(DEPTH + 2));
    assert_eq!(
        w.unreadable,
        vec!["`xargs sh` writes files the text does not name"]
    );
}

/// A relative path after `cd` is taken from where the `cd` went; a subshell's `cd` ends
/// at its `)`.
#[test]
fn a_cd_moves_where_relative_paths_land() {
    writes(
        "cd sub && echo x > f; (cd other && touch g); touch h /abs",
        &["sub/f", "sub/other/g", "sub/h", "/abs"],
    );
    writes("cd /tmp && touch t", &["/tmp/t"]);
    writes("cd && touch t", &["~/t"]);
    assert_eq!(read("cd \"$D\" && touch f"), (vec![], true));
    assert_eq!(read("cd - && touch f"), (vec![], true));
    // An absolute path does not depend on where the shell is.
    assert_eq!(
        read("cd $D && touch /abs/f"),
        (vec!["/abs/f".into()], false)
    );
}

#[test]
fn what_the_text_cannot_name_is_unreadable() {
    for command in [
        "echo x > \"$OUT\"",
        "echo x > $OUT",
        "echo x > ${DIR}/f",
        "echo x > \"$(mktemp)\"",
        "echo x > *.log",
        "echo x > out-{a,b}.txt",
        "echo x > ~alice/f",
        "sed -i s/a/b/ src/*.rs",
        "for f in a b; do sed -i s/x/y/ $f; done",
        "cp \"$SRC\" dir",
        "find . -name '*.rs' -exec sed -i s/a/b/ {} +",
        "find . -exec sh -c 'echo x > \"$1\"' _ {} \\;",
        "git ls-files | xargs -I{} sed -i s/a/b/ {}",
        "git ls-files -z | xargs -0 sed -i s/a/b/",
        "ls | xargs touch",
        "python3 -c \"open('x', 'w').write('y')\"",
        "python -c 'import json; json.dump({}, open(\"x\", \"w\"))'",
        "node -e \"require('fs').writeFileSync('x', 'y')\"",
        "perl -e 'open(my $f, \">\", \"x\")'",
        "ruby -e 'File.write(\"x\", 1)'",
        "php -r 'file_put_contents(\"x\", 1);'",
        "python3 - <<'EOF'\nwith open('o', 'w') as f:\n    f.write('x')\nEOF",
        "python3 -c 'import os; os.system(\"touch x\")'",
    ] {
        let (_, unreadable) = read(command);
        assert!(unreadable, "{command:?}");
    }
    let w = of("echo x > \"$OUT\"");
    assert_eq!(w.unreadable, vec!["`$OUT` is not a literal path"]);
}

/// perl and ruby `-i` edit files the text names.
#[test]
fn perl_and_ruby_in_place_edit_their_files() {
    writes("perl -pi -e 's/a/b/' a.txt b.txt", &["a.txt", "b.txt"]);
    writes("perl -i.bak -pe 's/a/b/' a.txt", &["a.txt"]);
    writes("ruby -pi -e 'gsub(/a/, \"b\")' c.rb", &["c.rb"]);
    writes("perl -ne 'print if /x/' a.txt", &[]);
}

/// Programs that write their own outputs, and code that only reads, are not judged.
#[test]
fn ordinary_commands_write_nothing_here() {
    for command in [
        "cargo test",
        "cargo build --release",
        "npm install",
        "git commit -qm 'Add parser' && git push",
        "git add -A",
        "make",
        "pytest -q",
        "python3 script.py",
        "python3 -m pip install x",
        "python3 -c 'print(1 > 0)'",
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"a\"])'",
        "node -e 'console.log(1)'",
        "bash build.sh",
        "find . -name '*.rs' -exec grep -l x {} +",
        "ls | xargs wc -l",
        "ls -la | grep x | head -3",
        "echo $HOME",
        "grep -r 'x > y' src",
        "git diff > /dev/null",
        "[[ $a > $b ]] && echo bigger",
        "(( n > 5 )) && echo many",
        "echo $(( 5 > 3 ))",
    ] {
        writes(command, &[]);
    }
}

proptest::proptest! {
    /// Any text, however broken (an open quote, a lone backslash, `$(` unclosed), is read
    /// without a panic.
    #[test]
    fn any_text_is_read(command in "[a-z $'\"`\\\\(){}<>|&;~*#=/.\n\t-é]{0,40}") {
        let _ = of(&command);
    }
}

/// Issue 43, item 3: the writers waymark did not know are judged by the files they name.
#[test]
fn other_editors_write_the_files_they_name() {
    for (command, want) in [
        ("ed -s src/a.rs < script.ed", &["src/a.rs"][..]),
        ("ed -p '*' notes.txt", &["notes.txt"]),
        ("ex -sc 'wq' notes.txt", &["notes.txt"]),
        ("awk -i inplace '{print}' a.txt b.txt", &["a.txt", "b.txt"]),
        ("gawk -i inplace -v x=1 -f prog.awk c.txt", &["c.txt"]),
        ("rsync -av src/ ../elsewhere/", &["../elsewhere/"]),
        ("rsync -e ssh -a src/ /tmp/out", &["/tmp/out"]),
        ("patch -o out.rs src/a.rs fix.patch", &["out.rs"]),
        ("busybox sed -i 's/a/b/' f.txt", &["f.txt"]),
        ("toybox tee g.txt", &["g.txt"]),
        ("busybox touch h", &["h"]),
    ] {
        writes(command, want);
    }
    // A remote destination and awk without in-place write nothing here.
    for command in [
        "rsync -a src/ host:/srv/",
        "awk '{print}' a.txt",
        "awk -F : '{print $1}' /etc/passwd",
    ] {
        writes(command, &[]);
    }
}

/// What the text cannot say is asked about: programs that write what their input names,
/// command lines built at run time, a program not named literally, a write through a link
/// the same command makes.
#[test]
fn what_only_runs_can_tell_is_unreadable() {
    for command in [
        "patch -p1 < fix.patch",
        "git apply fix.patch",
        "git -C . am < mails",
        "tar xzf release.tar.gz",
        "tar -x -f a.tar",
        "tar --extract --file a.tar",
        "unzip a.zip",
        "cpio -idv < a.cpio",
        "eval \"$(cat script)\"",
        "eval 'echo x > f'",
        "source ./setup.sh",
        ". ./env.sh",
        "$EDITOR notes.txt",
        "\"$(command -v sed)\" -i s/a/b/ f",
        "bash -c \"$(curl -s https://x)\"",
        "ln -s /etc cfg && echo x > cfg/passwd",
        "ln -sf ../../outside link; cp a.rs link/a.rs",
        "busybox patch < fix.patch",
        "./bin/[ab]uild out.txt",
    ] {
        let (_, unreadable) = read(command);
        assert!(unreadable, "{command:?} should be unreadable");
    }
    // Listing an archive, a link alone, a test expression: nothing unreadable.
    for command in [
        "tar tzf a.tar.gz",
        "ln -s target link",
        "[[ $a > $b ]] && echo x",
        "[ -f x ] && echo hi",
        "if [[ -n $x ]]; then echo y; fi",
        "! [[ -z $x ]] || echo z",
        "git apply --check fix.patch && true",
    ] {
        let (_, unreadable) = read(command);
        assert_eq!(unreadable, command.starts_with("git apply"), "{command:?}");
    }
}

/// A write to the link the same command made lands where the link points (issue 50, item
/// 6): the link's own making is a write of it, a later write to it is not readable.
#[test]
fn a_write_to_a_link_the_same_command_made_is_unreadable() {
    let w = of("ln -s docs/a src/l && cp src/x.rs src/l");
    let paths: Vec<&str> = w.targets.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(paths, ["src/l"], "{w:?}");
    assert_eq!(
        w.unreadable,
        ["`src/l` is written through a link the same command makes"]
    );
    let alone = of("ln -s docs/a src/l");
    assert!(alone.unreadable.is_empty(), "{alone:?}");
}
