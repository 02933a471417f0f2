//! The PTY proxy: resize, full-screen programs, job control, signals, exit.

use crate::support::*;

#[test]
fn resize_reaches_the_shell() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        run(&mut t, "tput cols");
        t.wait_text("\n80\n");
        t.resize(100, 30);
        // The new size reaches the shell by signal (ours, then the
        // kernel's to the shell); a command typed at once may still run
        // before it lands, so ask until the shell's terminal reports it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let n = prompts(&t);
            run(&mut t, "echo size=$(stty size)");
            if t.with(|s| s.count(b"size=30 100")) > 0 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{shell}: the resize never reached the shell\n{}",
                t.screen_text()
            );
            assert!(prompts(&t) > n);
        }
        run(&mut t, "tput cols; tput lines");
        t.wait_text("\n100\n30\n");
    }
}

#[test]
fn ctrl_c_interrupts_and_job_control_works() {
    for shell in ["bash", "zsh"] {
        let home = Home::new();
        let mut t = home.start(shell);
        let n = prompts(&t);
        t.send("sleep 100\r");
        wait_foreground("sleep 100");
        t.send("\x03");
        wait_prompt(&t, n + 1);
        run(&mut t, "echo st=$?");
        t.wait_text("st=130");

        let n = prompts(&t);
        t.send("sleep 101\r");
        wait_foreground("sleep 101");
        t.send("\x1a");
        wait_prompt(&t, n + 1);
        run(&mut t, "jobs");
        t.wait_text("sleep 101");
        let n = prompts(&t);
        t.send("fg\r");
        wait_foreground("sleep 101");
        t.send("\x03");
        wait_prompt(&t, n + 1);
    }
}

#[test]
fn exit_status_propagates() {
    for (shell, line, want) in [("bash", "exit 3", 3), ("zsh", "exit 4", 4), ("fish", "exit 5", 5), ("bash", "\x04", 0)]
    {
        let home = Home::new();
        let mut t = home.start(shell);
        t.send(format!("{line}\r"));
        assert_eq!(t.wait_exit(), want, "{shell}");
    }
}

#[test]
fn terminal_is_restored_after_sigterm_and_exit() {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    let home = Home::new();
    let t = home.start("bash");
    // The test's PTY is unixagent's terminal; while it runs it is raw.
    let pid = nix::unistd::Pid::from_raw(t.pid() as i32);
    let flags = |t: &Term| tcgetattr(t.master_fd()).expect("tcgetattr").local_flags;
    assert!(!flags(&t).contains(LocalFlags::ICANON), "raw while running");
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut t = t;
    let code = t.wait_exit();
    assert_eq!(code, 129, "the shell was hung up");
    let f = flags(&t);
    assert!(f.contains(LocalFlags::ICANON) && f.contains(LocalFlags::ECHO), "restored: {f:?}");
}

/// A shell can miss a hang-up: bash catches SIGHUP in readline, and one
/// that lands just before its read for a key leaves that read waiting,
/// where a closing terminal would have ended it. This shell misses the
/// first one the same way (its handler only resets itself and the read
/// goes on); the second ends it as a hang-up, well before the kill.
#[test]
fn a_shell_that_misses_the_first_hang_up_gets_a_second() {
    let home = Home::new();
    home.write(
        "bin/slow-to-hang-up",
        "#!/usr/bin/python3\nimport os, signal, sys\n\
         signal.signal(signal.SIGHUP, lambda *_: signal.signal(signal.SIGHUP, signal.SIG_DFL))\n\
         sys.stdout.write('PS1-MARK> '); sys.stdout.flush()\n\
         while os.read(0, 1024): pass\n",
    );
    let shell = home.path().join("bin/slow-to-hang-up");
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut t = home.spawn(shell.to_str().unwrap()).start();
    t.wait_text("PS1-MARK> ");
    let pid = nix::unistd::Pid::from_raw(t.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(t.wait_exit(), 129, "hung up, not killed");
}

#[test]
fn nested_unixagent_says_so_and_runs_a_plain_shell() {
    let home = Home::new();
    let mut t = home.start("bash");
    t.send(format!("{} --shell /bin/bash\r", unixagent().display()));
    t.wait_text("already running inside unixagent");
    t.send("echo nested-$((2*3))\r");
    t.wait_text("nested-6");
    t.send("exit\r");
    wait_prompt(&t, 2);
}

/// Waits until a process running `cmdline` is the foreground job of its
/// terminal: only then does a typed Ctrl+C or Ctrl+Z reach it rather than
/// the shell that is still starting it.
pub fn wait_foreground(cmdline: &str) {
    let want = cmdline.replace(' ', "\0");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let dir = entry.path();
            let Ok(cmd) = std::fs::read_to_string(dir.join("cmdline")) else { continue };
            if cmd.trim_end_matches('\0') != want {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else { continue };
            // Fields after the ")" that ends the command name: state ppid
            // pgrp session tty_nr tpgid ...
            let f: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
            if f.len() > 5 && f[0] != "T" && f[2] == f[5] {
                return;
            }
        }
        assert!(std::time::Instant::now() < deadline, "{cmdline} never became the foreground job");
        std::thread::yield_now();
    }
}

/// Waits until the shell under `t` sleeps waiting for a key.
///
/// Bash 5.2's readline can leave a SIGINT pending when it arrives just
/// after a key was handled and before readline waits for the next one:
/// `^C` is echoed but the line is not dropped until another signal or
/// command comes (seen with plain bash in a pty, without unixagent, about
/// once in a hundred quick tries). A person is never that fast; a test
/// that types Ctrl+C at a prompt waits for this first.
pub fn wait_shell_reading(t: &Term) {
    let children = format!("/proc/{0}/task/{0}/children", t.pid());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let kids = std::fs::read_to_string(&children).unwrap_or_default();
        let shell = kids.split_whitespace().next().expect("the shell is a child of unixagent");
        let state = std::fs::read_to_string(format!("/proc/{shell}/stat")).unwrap_or_default();
        let sleeping = state.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('S'));
        let wchan = std::fs::read_to_string(format!("/proc/{shell}/wchan")).unwrap_or_default();
        // Where the kernel hides wchan it reads "0": the state is all there is.
        let waiting = wchan.is_empty() || wchan == "0" || wchan.contains("poll") || wchan.contains("select");
        if sleeping && waiting {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the shell never waited for a key ({wchan})");
        std::thread::yield_now();
    }
}

#[test]
fn ctrl_backslash_and_ctrl_d_reach_the_shell() {
    let home = Home::new();
    let mut t = home.start("bash");
    let n = prompts(&t);
    t.send("sleep 102\r");
    wait_foreground("sleep 102");
    t.send("\x1c");
    wait_prompt(&t, n + 1);
    run(&mut t, "echo st=$?");
    t.wait_text("st=131");
    // Ctrl+D at an empty prompt ends the shell, and unixagent with it.
    t.send("\x04");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn sighup_from_a_closed_terminal_ends_the_session() {
    let home = Home::new();
    let mut t = home.start("zsh");
    let pid = nix::unistd::Pid::from_raw(t.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    // An interactive zsh that is hung up exits with status 1 (bash dies of
    // the signal, 129): unixagent reports whatever its shell did.
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn started_as_a_login_shell_by_name() {
    // Login programs put a `-` in front of the shell's name.
    let home = Home::new();
    let script = format!(
        "exec -a -unixagent {} --shell /bin/bash -c 'shopt -q login_shell && echo is-login'",
        unixagent().display()
    );
    let out = std::process::Command::new("/bin/bash").arg("-c").arg(script).env("HOME", home.path()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "is-login\n", "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_large_burst_of_input_reaches_the_program_intact() {
    // More than one read's worth of keystrokes at once (a big paste): every
    // byte must arrive, in order, even while the shell's queue is full.
    let home = Home::new();
    let mut t = home.start("bash");
    let n = prompts(&t);
    t.send("stty -echo; head -c 60000 > burst.txt; stty echo\r");
    wait_foreground("head -c 60000");
    // Lines (the terminal is in canonical mode, which holds at most 4095
    // bytes per line), each a different rotation of the alphabet.
    let line: String = (0..600)
        .map(|l| {
            let mut s: String = (0..99).map(|i| char::from(b'a' + ((i + l) % 26) as u8)).collect();
            s.push('\n');
            s
        })
        .collect();
    for chunk in line.as_bytes().chunks(7000) {
        t.send(chunk);
    }
    wait_prompt(&t, n + 1);
    let got = std::fs::read(home.path().join("burst.txt")).unwrap();
    assert_eq!(got.len(), 60000);
    assert!(got == line.as_bytes(), "the input was reordered or changed");
}
