//! How fast the agent's loop reacts, end to end, with the real binary.
//!
//! A small Anthropic-format SSE server in this process plays the model, one
//! event at a time on cue, and unixagent runs bash in a terminal this
//! program owns. Two latencies are measured, each from the moment this
//! program hands the bytes to its socket:
//!
//! - **text chunk → screen**: a `text_delta` with a unique token, until the
//!   token is read back from the terminal;
//! - **text chunk → NDJSON line** (`--json`): the same `text_delta`, until
//!   its `text` event is read from unixagent's stdout;
//! - **text chunk → ACP notification** (`unixagent acp`): the same
//!   `text_delta`, until its `agent_message_chunk` is read from the
//!   protocol's stdout;
//! - **instruction → first NDJSON text line** and **prompt → first
//!   `agent_message_chunk`**: from writing the instruction (or the
//!   `session/prompt` request) until the answer's first text arrives, with
//!   the server sending its first chunk as soon as the call arrives;
//! - **tool call → typed into the shell**: the end of an answer whose tool
//!   call is `: < FIFO` (read-only, so the default policy runs it without a
//!   question; the judge is off), until the shell opens the FIFO. This
//!   includes the whole pipeline (parse, classify, deny list, Cedar, grants),
//!   typing the line into the PTY, and bash reading and running a builtin,
//!   so it is an upper bound on "typed into the PTY".
//!
//! A chunk is timed from when it is written into an answer that is already
//! streaming: the server says when each turn's model call has arrived, and
//! the first chunk waits for that.
//!
//! It prints one table and asserts nothing. `make bench` builds the release
//! binary first; this program takes it from `$UA_BENCH_BIN`, else
//! `$CARGO_TARGET_DIR/release`, else the workspace's `target/release`.
//! `UA_BENCH_QUICK=1` runs a short version that only shows the benchmark
//! works.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ua_testkit::term::{Spawn, Term};

const PROMPT: &str = "UA-AGENT> ";
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent benchmark: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What the server is told to write next.
enum Cue {
    /// One text delta with this token.
    Text(String),
    /// The rest of the answer: a tool call to `command`, then the stop.
    ToolCall(String),
}

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("UA_BENCH_BIN") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("release/unixagent")
}

fn run() -> anyhow::Result<()> {
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some();
    let (rounds, chunks) = if quick { (3, 5) } else { (40, 25) };
    let bin = binary();
    if !bin.is_file() {
        bail!("{} is missing; run `make bench`, which builds it first", bin.display());
    }

    let home = tempfile::tempdir()?;
    std::fs::write(home.path().join(".bashrc"), format!("PS1='{PROMPT}'\nHISTFILE=/dev/null\n"))?;
    std::fs::create_dir_all(home.path().join(".config/unixagent"))?;
    std::fs::write(home.path().join(".config/unixagent/config.toml"), "[judge]\nmode = \"off\"\n")?;
    let fifo = home.path().join("typed.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))?;

    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    let (cue_tx, cue_rx) = mpsc::channel::<Cue>();
    // Each turn's first model call, once its answer has started: a chunk
    // is timed from when it is sent into a stream that is already open.
    let (ready_tx, ready) = mpsc::channel::<()>();
    std::thread::spawn(move || serve(&listener, &cue_rx, &ready_tx));

    let t = Spawn::new(&bin)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "bench")
        .env("OPENAI_API_KEY", "")
        .env("SHELL", "/bin/bash")
        .cwd(home.path())
        .args(["--shell", "/bin/bash"])
        .start();
    let mut t = t;
    wait_prompts(&t, 1)?;

    let mut text_us = Vec::new();
    let mut tool_us = Vec::new();
    let command = format!(": < {}", fifo.display());
    for round in 0..rounds {
        let prompts = count(&t, PROMPT.as_bytes());
        t.send(format!("# round {round}\r"));
        ready.recv_timeout(STEP_TIMEOUT).context("the model was never called")?;
        for i in 0..chunks {
            let token = format!("<r{round}c{i}>");
            let seen = count(&t, token.as_bytes());
            let start = Instant::now();
            cue_tx.send(Cue::Text(format!("{token} ")))?;
            wait_count(&t, token.as_bytes(), seen + 1)?;
            text_us.push(start.elapsed().as_secs_f64() * 1e6);
        }
        // The shell opening the FIFO for reading unblocks this open.
        let (opened_tx, opened_rx) = mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let f = std::fs::OpenOptions::new().write(true).open(&path);
            let _ = opened_tx.send((Instant::now(), f.is_ok()));
        });
        let start = Instant::now();
        cue_tx.send(Cue::ToolCall(command.clone()))?;
        let (opened, ok) = opened_rx.recv_timeout(STEP_TIMEOUT).context("the tool call never ran in the shell")?;
        if !ok {
            bail!("opening the FIFO failed");
        }
        tool_us.push(opened.duration_since(start).as_secs_f64() * 1e6);
        wait_count(&t, PROMPT.as_bytes(), prompts + 1)?;
    }

    drop(t);
    let (json_us, json_first) = json_rounds(&bin, home.path(), &url, (&cue_tx, &ready), &fifo, rounds, chunks)?;
    let (acp_us, acp_first) = acp_rounds(&bin, home.path(), &url, (&cue_tx, &ready), &fifo, rounds, chunks)?;

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "agent loop latency, {rounds} turns ({} text chunks, {} tool calls); load {}",
        text_us.len(),
        tool_us.len(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!("{:<34} {:>10} {:>10} {:>10} {:>10}", "", "p50 µs", "p99 µs", "max µs", "target");
    row("SSE text chunk → on screen", &mut text_us, "< 2000");
    let mut json_us = json_us;
    row("SSE text chunk → NDJSON line", &mut json_us, "< 1000");
    let mut acp_us = acp_us;
    row("SSE text chunk → ACP notification", &mut acp_us, "< 1000");
    let (mut json_first, mut acp_first) = (json_first, acp_first);
    row("instruction → first NDJSON text", &mut json_first, "");
    row("prompt → first agent_message_chunk", &mut acp_first, "");
    row("tool call → typed and running", &mut tool_us, "< 5000");
    Ok(())
}

/// `bin ARGS` in `home` against the benchmark's model server, with its
/// stdin to write to and its stdout's lines, each stamped when read.
#[allow(clippy::type_complexity, reason = "a child, its stdin and its stamped lines, used once each")]
fn start_lines(
    bin: &Path,
    args: &[&str],
    home: &Path,
    url: &str,
) -> anyhow::Result<(std::process::Child, std::process::ChildStdin, mpsc::Receiver<(Instant, String)>)> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "bench")
        .env("OPENAI_API_KEY", "")
        .env_remove("UNIXAGENT_SESSION")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting unixagent {}", args.join(" ")))?;
    let stdin = child.stdin.take().context("stdin")?;
    let stdout = child.stdout.take().context("stdout")?;
    let (line_tx, lines) = mpsc::channel::<(Instant, String)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line_tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    Ok((child, stdin, lines))
}

/// Batch mode: the same text chunks, each until its `text` line is read
/// from `unixagent --json`'s stdout.
fn json_rounds(
    bin: &Path,
    home: &Path,
    url: &str,
    (cue_tx, ready): (&mpsc::Sender<Cue>, &mpsc::Receiver<()>),
    fifo: &Path,
    rounds: usize,
    chunks: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut child, mut stdin, lines) = start_lines(bin, &["--shell", "/bin/bash", "--json"], home, url)?;
    let until = |pred: &dyn Fn(&str) -> bool| -> anyhow::Result<Instant> {
        loop {
            let (at, line) = lines.recv_timeout(STEP_TIMEOUT).context("no NDJSON line in time")?;
            if pred(&line) {
                return Ok(at);
            }
        }
    };
    let (mut us, mut first) = (Vec::new(), Vec::new());
    let command = format!(": < {}", fifo.display());
    for round in 0..rounds {
        let asked = Instant::now();
        writeln!(stdin, "# round {round}")?;
        stdin.flush()?;
        ready.recv_timeout(STEP_TIMEOUT).context("the model was never called")?;
        for i in 0..chunks {
            let token = format!("<j{round}c{i}>");
            let start = Instant::now();
            cue_tx.send(Cue::Text(format!("{token} ")))?;
            let at = until(&|l: &str| l.contains("\"type\":\"text\"") && l.contains(&token))?;
            us.push(at.duration_since(start).as_secs_f64() * 1e6);
            if i == 0 {
                first.push(at.duration_since(asked).as_secs_f64() * 1e6);
            }
        }
        let path = fifo.to_path_buf();
        std::thread::spawn(move || {
            let _ = std::fs::OpenOptions::new().write(true).open(&path);
        });
        cue_tx.send(Cue::ToolCall(command.clone()))?;
        until(&|l: &str| l.contains("\"type\":\"command_result\""))?;
        // The turn's last answer: the next instruction starts a new turn
        // only after it, as the next `#` does at a terminal.
        until(&|l: &str| l.contains("\"type\":\"text\"") && l.contains("done"))?;
    }
    drop(stdin);
    until(&|l: &str| l.contains("\"type\":\"result\""))?;
    let _ = child.wait();
    Ok((us, first))
}

/// `unixagent acp`: the same turns as ACP prompts, each chunk until its
/// `agent_message_chunk` notification is read. The client is these few
/// hand-written JSON-RPC lines, so only unixagent's side is timed.
fn acp_rounds(
    bin: &Path,
    home: &Path,
    url: &str,
    (cue_tx, ready): (&mpsc::Sender<Cue>, &mpsc::Receiver<()>),
    fifo: &Path,
    rounds: usize,
    chunks: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut child, mut stdin, lines) = start_lines(bin, &["acp", "--shell", "/bin/bash"], home, url)?;
    let until = |pred: &dyn Fn(&str) -> bool| -> anyhow::Result<(Instant, String)> {
        loop {
            let (at, line) = lines.recv_timeout(STEP_TIMEOUT).context("no ACP message in time")?;
            if pred(&line) {
                return Ok((at, line));
            }
        }
    };
    let mut send = |v: serde_json::Value| -> anyhow::Result<()> {
        writeln!(stdin, "{v}")?;
        Ok(stdin.flush()?)
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}))?;
    until(&|l: &str| l.contains("\"id\":0"))?;
    send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": {"cwd": home, "mcpServers": []}}))?;
    let (_, created) = until(&|l: &str| l.contains("\"id\":1"))?;
    let created: serde_json::Value = serde_json::from_str(&created)?;
    let session = created["result"]["sessionId"].as_str().context("session/new gave no session")?.to_string();
    let (mut us, mut first) = (Vec::new(), Vec::new());
    let command = format!(": < {}", fifo.display());
    for round in 0..rounds {
        let id = round + 2;
        let asked = Instant::now();
        send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": format!("round {round}")}]}}))?;
        ready.recv_timeout(STEP_TIMEOUT).context("the model was never called")?;
        for i in 0..chunks {
            let token = format!("<a{round}c{i}>");
            let start = Instant::now();
            cue_tx.send(Cue::Text(format!("{token} ")))?;
            let (at, _) = until(&|l: &str| l.contains("agent_message_chunk") && l.contains(&token))?;
            us.push(at.duration_since(start).as_secs_f64() * 1e6);
            if i == 0 {
                first.push(at.duration_since(asked).as_secs_f64() * 1e6);
            }
        }
        let path = fifo.to_path_buf();
        std::thread::spawn(move || {
            let _ = std::fs::OpenOptions::new().write(true).open(&path);
        });
        cue_tx.send(Cue::ToolCall(command.clone()))?;
        let answered = format!("\"id\":{id},");
        until(&|l: &str| l.contains(&answered) && l.contains("stopReason"))?;
    }
    // Closing stdin ends the connection, and with it the session.
    drop(stdin);
    let _ = child.wait();
    Ok((us, first))
}

fn row(name: &str, v: &mut [f64], target: &str) {
    v.sort_by(f64::total_cmp);
    let pct = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    println!("{name:<34} {:>10.0} {:>10.0} {:>10.0} {:>10}", pct(0.5), pct(0.99), v[v.len() - 1], target);
}

fn count(t: &Term, needle: &[u8]) -> usize {
    t.with(|s| s.count(needle))
}

fn wait_count(t: &Term, needle: &[u8], n: usize) -> anyhow::Result<()> {
    let what = String::from_utf8_lossy(needle).to_string();
    let t0 = Instant::now();
    // Term::wait_for panics on its own timeout; keep ours shorter.
    while count(t, needle) < n {
        if t0.elapsed() > STEP_TIMEOUT {
            bail!("timed out waiting for {what:?}");
        }
        t.wait_for(&what, |s| s.count(needle) >= n);
    }
    Ok(())
}

fn wait_prompts(t: &Term, n: usize) -> anyhow::Result<()> {
    wait_count(t, PROMPT.as_bytes(), n)
}

/// Serves model calls: the first call of each turn streams the text and
/// the tool call on cue; the call that carries the tool result gets a
/// short answer that ends the turn.
fn serve(listener: &TcpListener, cues: &mpsc::Receiver<Cue>, ready: &mpsc::Sender<()>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let Ok(body) = read_request(&mut stream) else { continue };
        let result =
            if answers_a_tool_call(&body) { answer_done(&mut stream) } else { answer_on_cue(&mut stream, cues, ready) };
        if result.is_err() {
            continue;
        }
    }
}

/// Whether the request's last message carries a tool result.
fn answers_a_tool_call(body: &str) -> bool {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    v["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn event(stream: &mut TcpStream, name: &str, data: &serde_json::Value) -> std::io::Result<()> {
    stream.write_all(format!("event: {name}\ndata: {data}\n\n").as_bytes())?;
    stream.flush()
}

fn start(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")?;
    stream.set_nodelay(true)?;
    let message = serde_json::json!({
        "type": "message_start",
        "message": {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench", "content": [],
                    "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}
    });
    event(stream, "message_start", &message)?;
    event(
        stream,
        "content_block_start",
        &serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    )
}

fn text(stream: &mut TcpStream, text: &str) -> std::io::Result<()> {
    let delta =
        serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}});
    event(stream, "content_block_delta", &delta)
}

fn stop(stream: &mut TcpStream, reason: &str) -> std::io::Result<()> {
    let delta = serde_json::json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
                                   "usage": {"output_tokens": 5}});
    event(stream, "message_delta", &delta)?;
    event(stream, "message_stop", &serde_json::json!({"type": "message_stop"}))
}

fn answer_on_cue(stream: &mut TcpStream, cues: &mpsc::Receiver<Cue>, ready: &mpsc::Sender<()>) -> std::io::Result<()> {
    start(stream)?;
    let _ = ready.send(());
    loop {
        let Ok(cue) = cues.recv() else { return Ok(()) };
        match cue {
            Cue::Text(t) => text(stream, &t)?,
            Cue::ToolCall(command) => {
                event(stream, "content_block_stop", &serde_json::json!({"type": "content_block_stop", "index": 0}))?;
                let block = serde_json::json!({"type": "content_block_start", "index": 1,
                    "content_block": {"type": "tool_use", "id": "toolu_bench", "name": "shell", "input": {}}});
                event(stream, "content_block_start", &block)?;
                let input = serde_json::json!({"command": command}).to_string();
                let delta = serde_json::json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": input}});
                event(stream, "content_block_delta", &delta)?;
                event(stream, "content_block_stop", &serde_json::json!({"type": "content_block_stop", "index": 1}))?;
                stop(stream, "tool_use")?;
                return stream.shutdown(std::net::Shutdown::Write);
            }
        }
    }
}

fn answer_done(stream: &mut TcpStream) -> std::io::Result<()> {
    start(stream)?;
    text(stream, "done")?;
    event(stream, "content_block_stop", &serde_json::json!({"type": "content_block_stop", "index": 0}))?;
    stop(stream, "end_turn")?;
    stream.shutdown(std::net::Shutdown::Write)
}
