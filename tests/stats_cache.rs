//! End-to-end tests of `familiar stats`'s cache of files read (`src/cmd/stats/cache.rs`): a
//! second run answers from it what has not changed, and gives exactly what reading every file
//! gives; whatever is wrong with the cache costs one line and no answer.

mod common;

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};

use common::{Test, fixture, real_fixture};

/// A project's files, copied where the test may change them, and one cache folder for every
/// run of the test.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new(files: &[(&str, &Path)]) -> Tree {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("work")).expect("work dir");
        for (name, from) in files {
            std::fs::copy(from, dir.path().join("work").join(name)).expect("copy a fixture");
        }
        Tree { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join("work").join(name)
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// `familiar ARGS` with this tree's cache folder.
    fn stats<S: AsRef<std::ffi::OsStr>>(&self, args: impl IntoIterator<Item = S>) -> Test {
        Test::new()
            .env("XDG_CACHE_HOME", self.cache())
            .current_dir(self.dir.path().join("work"))
            .args(args)
    }

    /// `familiar stats --json FILES` as a plain child process with this tree's cache folder,
    /// for what the builder does not do (several at once, a deadline, limits); its output
    /// piped.
    fn command(&self, files: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"));
        command
            .args(["stats", "--json"])
            .args(files)
            .current_dir(self.dir.path().join("work"))
            .env("HOME", self.dir.path())
            .env("XDG_CACHE_HOME", self.cache())
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command
    }

    fn stdout(&self, args: &[&str]) -> String {
        let output = self.stats(args).run();
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// `-v stats --json FILES`: its stdout, and the number of inputs it took from the cache.
    fn run(&self, files: &[&str]) -> (String, usize) {
        let output = self
            .stats(["-v", "stats", "--json"].iter().chain(files))
            .run();
        let stderr = String::from_utf8_lossy(&output.stderr);
        // ` INFO 2 of 3 inputs unchanged since a run kept them: ...`
        let unchanged = stderr
            .lines()
            .filter(|line| line.contains(" inputs unchanged since a run kept them"))
            .find_map(|line| line.split(" of ").next()?.split_whitespace().last())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("no count of unchanged inputs in\n{stderr}"));
        (String::from_utf8(output.stdout).expect("UTF-8"), unchanged)
    }
}

fn three_files() -> Tree {
    Tree::new(&[
        ("a.jsonl", &fixture("usage-1h-cache.jsonl")),
        ("b.jsonl", &fixture("usage-copied-messages.jsonl")),
        (
            "real.jsonl",
            &real_fixture("v2.1.59-erk-local-command-progress.jsonl"),
        ),
    ])
}

#[test]
fn a_second_run_reads_nothing_unchanged_and_answers_the_same() {
    let tree = three_files();
    let files = ["a.jsonl", "b.jsonl", "real.jsonl"];
    let (first, unchanged) = tree.run(&files);
    assert_eq!(unchanged, 0);
    let (second, unchanged) = tree.run(&files);
    assert_eq!(unchanged, 3);
    assert_eq!(second, first);
    // And what reading every file gives, readable form and total included.
    let mut args = vec!["stats", "--json", "--no-cache"];
    args.extend(files);
    assert_eq!(tree.stdout(&args), first);
    let readable = tree.stdout(&["stats", "a.jsonl", "b.jsonl", "real.jsonl"]);
    let read = tree.stdout(&["stats", "--no-cache", "a.jsonl", "b.jsonl", "real.jsonl"]);
    assert_eq!(readable, read);
    assert!(readable.contains("total  3 files"), "{readable}");
}

/// A message of a file kept by an earlier run, copied into a file read now, counts once: the
/// kept ledgers' message hashes are taken under the cache's own key.
#[test]
fn a_message_copied_into_a_new_file_counts_once_against_a_kept_one() {
    let tree = three_files();
    tree.run(&["a.jsonl"]);
    let (both, unchanged) = tree.run(&["a.jsonl", "b.jsonl"]);
    assert_eq!(unchanged, 1);
    let costs: Vec<f64> = both
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).expect("JSON");
            row["cost_usd"].as_f64().expect("a cost")
        })
        .collect();
    // As in tests/stats.rs, read at once: msg_A counts for the first file, the copy adds msg_C.
    assert_eq!(costs, [0.1576, 0.0313]);
    // Kept the other way round: the earlier input still keeps the message.
    let (swapped, unchanged) = tree.run(&["b.jsonl", "a.jsonl"]);
    assert_eq!(unchanged, 2);
    assert_eq!(
        swapped,
        tree.stdout(&["stats", "--json", "--no-cache", "b.jsonl", "a.jsonl"])
    );
}

/// A file that grew is read again (a live session), and only it.
#[test]
fn a_file_written_since_is_read_again() {
    let tree = three_files();
    let files = ["a.jsonl", "b.jsonl", "real.jsonl"];
    tree.run(&files);
    let line = std::fs::read_to_string(fixture("usage-copied-messages.jsonl"))
        .expect("fixture")
        .lines()
        .find(|line| line.contains("msg_C"))
        .expect("a line of msg_C")
        .replace("msg_C", "msg_D");
    let mut text = std::fs::read_to_string(tree.file("a.jsonl")).expect("read");
    text.push_str(&line);
    text.push('\n');
    std::fs::write(tree.file("a.jsonl"), text).expect("append");
    let (after, unchanged) = tree.run(&files);
    assert_eq!(unchanged, 2);
    let mut args = vec!["stats", "--json", "--no-cache"];
    args.extend(files);
    assert_eq!(after, tree.stdout(&args));
    let first: serde_json::Value =
        serde_json::from_str(after.lines().next().expect("a row")).expect("JSON");
    assert_eq!(first["tokens"]["output"], 100 + 200 + 50);
}

/// A kept file's summary and warnings name it as this run was given it.
#[test]
fn a_file_named_another_way_is_named_as_given() {
    let tree = Tree::new(&[("bad.jsonl", &fixture("malformed-line.jsonl"))]);
    let absolute = tree.file("bad.jsonl");
    let absolute = absolute.to_str().expect("UTF-8 path");
    tree.run(&[absolute]);
    for _ in 0..2 {
        let output = tree.stats(["stats", "--json", "bad.jsonl"]).run();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(r#""file":"bad.jsonl""#), "{stdout}");
        // The skipped lines are told on every run, kept or not.
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "familiar: bad.jsonl:2: malformed JSON: EOF while parsing a string at line 1 \
             column 58\n\
             familiar: bad.jsonl:3: not a JSON object\n\
             familiar: bad.jsonl:4: not a JSON object\n"
        );
    }
}

#[test]
fn no_cache_reads_every_file_and_keeps_nothing() {
    let tree = three_files();
    tree.stats(["stats", "--no-cache", "a.jsonl"])
        .stderr("")
        .run();
    assert!(!tree.cache().exists());
    // Nor does reading stdin alone.
    let text = std::fs::read(tree.file("a.jsonl")).expect("read");
    tree.stats(["stats", "-"]).stdin(text).stderr("").run();
    assert!(!tree.cache().exists());
}

/// The cache is the user's alone: it holds the key its message hashes are taken under.
#[test]
fn the_cache_is_readable_by_its_user_alone() {
    use std::os::unix::fs::PermissionsExt as _;
    let tree = three_files();
    tree.run(&["a.jsonl"]);
    let mode = |path: PathBuf| {
        std::fs::metadata(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(tree.cache().join("familiar")), 0o700);
    assert_eq!(mode(tree.cache().join("familiar/stats.sqlite3")), 0o600);
}

/// A damaged cache is said once and made anew; the answer is the files'.
#[test]
fn a_damaged_cache_is_made_anew() {
    let tree = three_files();
    let (first, _) = tree.run(&["a.jsonl", "b.jsonl"]);
    let database = tree.cache().join("familiar/stats.sqlite3");
    std::fs::write(&database, vec![b'x'; 8192]).expect("damage the cache");
    let output = tree
        .stats(["stats", "--json", "a.jsonl", "b.jsonl"])
        .stderr(format!(
            "familiar: {}: file is not a database (SQLite error 26): made anew\n",
            database.display()
        ))
        .run();
    assert_eq!(String::from_utf8_lossy(&output.stdout), first);
    let (again, unchanged) = tree.run(&["a.jsonl", "b.jsonl"]);
    assert_eq!((again, unchanged), (first, 2));
}

/// A cache folder that cannot be made is said once; the answer is the files'.
#[test]
fn a_cache_that_cannot_be_made_costs_a_line_not_the_answer() {
    let tree = three_files();
    // The cache folder's parent is a file.
    std::fs::write(tree.cache(), "not a folder").expect("write");
    let read = tree.stdout(&["stats", "--json", "--no-cache", "a.jsonl"]);
    let output = tree
        .stats(["stats", "--json", "a.jsonl"])
        .stderr_contains("familiar: the cache of files read before cannot be used (cannot make ")
        .stderr_contains(
            "): reading every file (--no-cache reads them without it, and without this warning)\n",
        )
        .run();
    assert_eq!(String::from_utf8_lossy(&output.stdout), read);
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
}

/// Rows of files that are gone (Claude Code deletes old transcripts) go at the next run that
/// keeps a file.
#[test]
fn a_deleted_file_leaves_the_cache() {
    let tree = three_files();
    tree.run(&["a.jsonl", "b.jsonl"]);
    let database = tree.cache().join("familiar/stats.sqlite3");
    let rows = || {
        let conn = rusqlite::Connection::open(&database).expect("open the cache");
        conn.query_row("SELECT count(*) FROM files", [], |row| row.get::<_, i64>(0))
            .expect("count rows")
    };
    assert_eq!(rows(), 2);
    std::fs::remove_file(tree.file("b.jsonl")).expect("delete");
    tree.run(&["real.jsonl"]);
    assert_eq!(rows(), 2, "a.jsonl and real.jsonl");
}

/// Two `stats` at once, both filling the cache (a status bar's and the user's): both answer
/// in full, with nothing to say, and the cache holds every file after.
#[test]
fn two_runs_at_once_both_answer() {
    let tree = three_files();
    let start = || {
        tree.command(&["a.jsonl", "b.jsonl", "real.jsonl"])
            .spawn()
            .expect("spawn familiar")
    };
    let runs: Vec<_> = (0..4).map(|_| start()).collect();
    let expected = tree.stdout(&[
        "stats",
        "--json",
        "--no-cache",
        "a.jsonl",
        "b.jsonl",
        "real.jsonl",
    ]);
    for run in runs {
        let output = run.wait_with_output().expect("wait");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "");
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
    }
    let (again, unchanged) = tree.run(&["a.jsonl", "b.jsonl", "real.jsonl"]);
    assert_eq!((again, unchanged), (expected, 3));
}

/// A cache damaged past its first pages (its tables' own pages) is found so only when rows are
/// looked up: said once, and made anew by the next run; the answer is the files'.
#[test]
fn a_cache_damaged_inside_is_made_anew_by_the_next_run() {
    let tree = three_files();
    let files = ["a.jsonl", "b.jsonl"];
    let (first, _) = tree.run(&files);
    let database = tree.cache().join("familiar/stats.sqlite3");
    let mut bytes = std::fs::read(&database).expect("read the cache");
    assert!(bytes.len() > 4 * 4096, "{} bytes", bytes.len());
    // Pages 1 to 3 (the schema, `meta` and its index) stay; the rest is noise.
    for byte in &mut bytes[3 * 4096..] {
        *byte = 0x55;
    }
    std::fs::write(&database, bytes).expect("damage the cache");
    let output = tree
        .stats(["stats", "--json", "a.jsonl", "b.jsonl"])
        .stderr_contains("familiar: the cache of files read before cannot be read (")
        .stderr_contains("): reading the files; it is made anew\n")
        .run();
    assert_eq!(String::from_utf8_lossy(&output.stdout), first);
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
    let (again, unchanged) = tree.run(&files);
    assert_eq!((again, unchanged), (first.clone(), 0));
    let (kept, unchanged) = tree.run(&files);
    assert_eq!((kept, unchanged), (first, 2));
}

/// A cache that is not a regular file (a FIFO: opening it to write would wait for a reader for
/// ever) is said once and left alone; the answer is the files'.
#[test]
fn a_cache_that_is_a_fifo_costs_a_line_not_a_hang() {
    let tree = three_files();
    let folder = tree.cache().join("familiar");
    std::fs::create_dir_all(&folder).expect("cache folder");
    let fifo = folder.join("stats.sqlite3");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut child = tree.command(&["a.jsonl"]).spawn().expect("spawn familiar");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("familiar stats hung on a FIFO as its cache");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("stats.sqlite3 is not a regular file): reading every file"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        tree.stdout(&["stats", "--json", "--no-cache", "a.jsonl"])
    );
    assert!(
        std::fs::metadata(&fifo)
            .expect("still there")
            .file_type()
            .is_fifo(),
        "the FIFO is left as it was"
    );
}

/// A disk that fills while the cache is written (here: a file size limit on the process,
/// `RLIMIT_FSIZE`, with `SIGXFSZ` ignored, so that a write past it fails as on a full disk)
/// is said once; the answer is the files', and a later run with room answers the same.
#[test]
fn a_full_disk_while_keeping_costs_a_line_not_the_answer() {
    use std::os::unix::process::CommandExt as _;
    // Twenty real transcripts: rows of more than the limit, which SQLite's shared-memory
    // index (32 KiB) and the tables' first pages are not.
    let real = real_fixture("v2.1.59-erk-local-command-progress.jsonl");
    let names: Vec<String> = (0..20).map(|n| format!("real-{n}.jsonl")).collect();
    let copies: Vec<(&str, &Path)> = names
        .iter()
        .map(|name| (name.as_str(), real.as_path()))
        .collect();
    let tree = Tree::new(&copies);
    let files: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut args = vec!["stats", "--json", "--no-cache"];
    args.extend(&files);
    let expected = tree.stdout(&args);
    let mut command = tree.command(&files);
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit).
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 40 * 1024,
                rlim_max: 40 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().expect("run familiar");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
    let database = tree.cache().join("familiar/stats.sqlite3");
    assert_eq!(
        stderr,
        format!(
            "familiar: the files read could not be kept for the next run ({}: disk I/O error \
             (SQLite error 778))\n",
            database.display()
        )
    );
    // With room again: the same answer, and kept.
    let (again, _) = tree.run(&files);
    assert_eq!(again, expected);
    let (kept, unchanged) = tree.run(&files);
    assert_eq!((kept, unchanged), (expected, 20));
}

/// A kept row whose summary is not JSON (damaged bytes in a row SQLite cannot check) is a
/// file to read again, not an error when the answer is printed.
#[test]
fn a_kept_summary_that_is_not_json_is_read_again() {
    let tree = three_files();
    let files = ["a.jsonl", "b.jsonl", "real.jsonl"];
    let (first, _) = tree.run(&files);
    let database = tree.cache().join("familiar/stats.sqlite3");
    let conn = rusqlite::Connection::open(&database).expect("open the cache");
    let changed = conn
        .execute(
            "UPDATE files SET summary = '{\"file\": \"b.jsonl\", \"ses' WHERE name = 'b.jsonl'",
            [],
        )
        .expect("damage a row");
    assert_eq!(changed, 1);
    drop(conn);
    let output = tree
        .stats(["-v", "stats", "--json"].iter().chain(&files))
        .run();
    assert_eq!(String::from_utf8_lossy(&output.stdout), first);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(" 2 of 3 inputs unchanged"), "{stderr}");
    assert!(!stderr.contains("familiar:"), "{stderr}");
    let (again, unchanged) = tree.run(&files);
    assert_eq!((again, unchanged), (first, 3));
}

/// `familiar doctor` in this tree's cache folder, with no session bus, display or sound
/// server to probe: its `stats cache` line.
fn doctor_line(tree: &Tree) -> String {
    doctor_line_in(tree, &tree.cache())
}

/// [`doctor_line`] with the cache folder `cache`, shown as `[CACHE]`.
fn doctor_line_in(tree: &Tree, cache: &Path) -> String {
    let output = tree
        .stats(["doctor"])
        .env("XDG_CACHE_HOME", cache)
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("XDG_RUNTIME_DIR", "/nonexistent/familiar-test-runtime")
        .env_remove("PULSE_SERVER")
        .run();
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let line = stdout
        .lines()
        .find(|line| line.contains("stats cache: "))
        .unwrap_or_else(|| panic!("no stats cache line in\n{stdout}"));
    line.replace(&cache.display().to_string(), "[CACHE]")
}

/// What is in a folder, by name.
fn names_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("read the folder")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// `doctor` says where the cache is and how many files it keeps, or what is wrong with it,
/// and never writes it: before the first `stats`, after it, and once it is damaged.
#[test]
fn doctor_says_what_the_cache_holds_without_writing_it() {
    let tree = three_files();
    assert_eq!(
        doctor_line(&tree),
        "[ok] stats cache: none yet (`familiar stats` keeps what it reads in \
         [CACHE]/familiar/stats.sqlite3)"
    );
    assert!(!tree.cache().exists(), "doctor made the cache folder");
    tree.run(&["a.jsonl", "b.jsonl", "real.jsonl"]);
    let path = tree.cache().join("familiar/stats.sqlite3");
    let line = doctor_line(&tree);
    let size = std::fs::metadata(&path).expect("the cache").len();
    let log = std::fs::metadata(tree.cache().join("familiar/stats.sqlite3-wal"))
        .map_or(0, |log| log.len());
    assert!(
        line.starts_with("[ok] stats cache: [CACHE]/familiar/stats.sqlite3: 3 files kept, ")
            && line.contains(&familiar_model::words::bytes(size + log)),
        "{line}"
    );
    // Read without a trace: no SQLite log or shared memory left beside it.
    assert_eq!(names_in(&tree.cache().join("familiar")), ["stats.sqlite3"]);
    let damaged = b"not a database, not even its header".repeat(200);
    std::fs::write(&path, &damaged).expect("damage the cache");
    assert_eq!(
        doctor_line(&tree),
        "[!!] stats cache: [CACHE]/familiar/stats.sqlite3: file is not a database (SQLite \
         error 26): the next `familiar stats` makes it anew"
    );
    assert_eq!(std::fs::read(&path).expect("the cache"), damaged);
}

/// A cache folder whose name a URI would read otherwise (a space, `?`, `#`, `%`) is read
/// as it is named.
#[test]
fn doctor_reads_a_cache_in_a_folder_with_odd_characters() {
    let tree = three_files();
    let odd = tree.cache().join("a b?c#d%20e");
    tree.stats(["stats", "--json", "a.jsonl", "b.jsonl"])
        .env("XDG_CACHE_HOME", &odd)
        .run();
    let line = doctor_line_in(&tree, &odd);
    assert!(
        line.starts_with("[ok] stats cache: [CACHE]/familiar/stats.sqlite3: 2 files kept, "),
        "{line}"
    );
    assert_eq!(names_in(&odd.join("familiar")), ["stats.sqlite3"]);
}
