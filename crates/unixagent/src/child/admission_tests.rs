use super::*;

fn ancestor(pid: i32, comm: &str) -> Ancestor {
    Ancestor { pid, comm: comm.into(), start: 100 + u64::try_from(pid).unwrap() }
}

const LIMITS: Limits = Limits { max_depth: 3, max_children: 2 };

#[test]
fn stat_lines_parse_whatever_the_name() {
    let text = "4242 (a (b) c) S 4000 4242 4000 34816 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3";
    let (a, ppid) = parse_stat(text).unwrap();
    assert_eq!((a.pid, a.comm.as_str(), a.start, ppid), (4242, "a (b) c", 987_654, 4000));
    assert!(parse_stat("garbage").is_none());
    // This process's own ancestry ends before init and includes its parent.
    let mine = ancestors();
    assert!(!mine.is_empty() && mine.iter().all(|a| a.pid > 1), "{mine:?}");
}

#[test]
fn the_depth_is_the_deeper_of_the_environment_and_the_process_tree() {
    // unixagent → bash → unixagent → bash → (this one): two above.
    let tree = [ancestor(50, "bash"), ancestor(40, "unixagent"), ancestor(30, "bash"), ancestor(20, "unixagent")];
    let l = Lineage::find(1, Some("s-2"), &tree, "unixagent");
    assert_eq!(l.depth, 2, "the environment said less than the tree shows");
    assert_eq!(l.root, "20-120", "the topmost unixagent is the root");
    assert!(l.child);
    assert_eq!(Lineage::find(3, Some("s"), &tree, "unixagent").depth, 3);
    // Not started from a session and no unixagent above: a root.
    let root = Lineage::find(0, None, &[ancestor(9, "bash")], "unixagent");
    assert!(!root.child && root.depth == 0);
}

#[test]
fn too_deep_is_refused_with_one_line_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let l = Lineage { depth: 4, root: "r".into(), child: true };
    let r = admit(&l, LIMITS, dir.path()).unwrap_err();
    assert_eq!(r, Refusal::Depth { depth: 4, max: 3 });
    assert_eq!(r.exit_code(), DEPTH_REFUSED);
    let line = r.line();
    assert!(line.contains("agent.max_depth") && line.contains("4 deep") && !line.contains('\n'), "{line}");
    // No slot was taken for a refused child.
    assert!(!dir.path().join(format!("unixagent-{}", nix::unistd::getuid())).exists());
    let ok = Lineage { depth: 3, ..l };
    assert!(admit(&ok, LIMITS, dir.path()).unwrap().is_some());
}

#[test]
fn fan_out_counts_running_children_of_one_root() {
    let dir = tempfile::tempdir().unwrap();
    let l = Lineage { depth: 1, root: "root-a".into(), child: true };
    let first = admit(&l, LIMITS, dir.path()).unwrap().unwrap();
    let _second = admit(&l, LIMITS, dir.path()).unwrap().unwrap();
    let r = admit(&l, LIMITS, dir.path()).unwrap_err();
    assert_eq!(r, Refusal::FanOut { max: 2 });
    assert!(r.line().contains("agent.max_children"), "{}", r.line());
    // Another root counts on its own.
    let other = Lineage { root: "root-b".into(), ..l.clone() };
    assert!(admit(&other, LIMITS, dir.path()).unwrap().is_some());
    // A child that ends frees its slot.
    drop(first);
    assert!(admit(&l, LIMITS, dir.path()).unwrap().is_some());
    // A root takes none.
    let root = Lineage { depth: 0, root: "root-a".into(), child: false };
    assert!(admit(&root, LIMITS, dir.path()).unwrap().is_none());
}

#[test]
fn a_killed_holder_frees_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let l = Lineage { depth: 1, root: "root-k".into(), child: true };
    let one = Limits { max_children: 1, ..LIMITS };
    // Make the directory, then let another process hold slot-0 as a child does.
    drop(admit(&l, one, dir.path()).unwrap());
    let slot = dir.path().join(format!("unixagent-{}/children-root-k/slot-0", nix::unistd::getuid()));
    let mut holder = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec 9>>'{}' && flock 9 && echo held && exec sleep 60", slot.display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.take().unwrap()), &mut line).unwrap();
    assert_eq!(line, "held\n");
    assert_eq!(admit(&l, one, dir.path()).unwrap_err(), Refusal::FanOut { max: 1 });
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(admit(&l, one, dir.path()).unwrap().is_some(), "kill -9 released the lock");
}

#[test]
fn a_slot_directory_that_is_not_private_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join(format!("unixagent-{}", nix::unistd::getuid()));
    std::fs::create_dir(&user).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o777)).unwrap();
    let l = Lineage { depth: 1, root: "r".into(), child: true };
    let Err(Refusal::Slots(why)) = admit(&l, LIMITS, dir.path()) else { panic!("refused") };
    assert!(why.contains("not a private directory"), "{why}");
}
