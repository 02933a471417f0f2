//! `unixagent acp`: the Agent Client Protocol on stdin and stdout, for
//! editors (Zed, JetBrains, Neovim, Emacs) and other programs.
//!
//! The third front end of the same turn, beside the terminal and NDJSON.
//! Each ACP session is a `unixagent --json` session of its own, started in
//! the session's `cwd` as a child process: the user's shell in a PTY under
//! the kernel sandbox, its journal and the index, the same configuration,
//! policy and trace context. This process is only the front end: it
//! renders the session's `AgentEvent`s as ACP updates ([`render`]) and
//! turns ACP requests into the session's `Input`s (a prompt is an
//! instruction, an answered permission request an approval, a cancel a
//! cancel). It keeps no state of a session's turn.
//!
//! A process per session, not a thread: a session's shell, sandbox,
//! working directory, signals and exported variables are per process, and
//! a session that fails cannot take the others (or the protocol's stdout)
//! with it. Nothing but protocol messages reaches stdout: the sessions'
//! stdout is a pipe read here, and every diagnostic goes to stderr.
//!
//! | ACP | the session |
//! |---|---|
//! | `initialize` | protocol 1; load, resume, text and embedded context |
//! | `authenticate` | nothing to do (keys come from the configuration) |
//! | `session/new` | `unixagent --json` in `cwd` |
//! | `session/load`, `session/resume` | `unixagent --json --resume ID`; load replays the journal |
//! | `session/prompt` | `{"type":"instruction"}`; answered at `turn_end` |
//! | `session/request_permission` | sent for `approval_request`; the answer is `{"type":"approval"}`; withdrawn with `$/cancel_request` when the session stops waiting (its approval timeout, the turn's end) |
//! | `session/cancel` | `{"type":"cancel"}` |
//! | `session/close` | `{"type":"cancel"}`, then its stdin closed; answered when it has ended |

mod history;
mod render;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification, CloseSessionRequest,
    CloseSessionResponse, ContentBlock, EmbeddedResourceResource, Implementation, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse,
    PromptCapabilities, PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionId,
    SessionNotification, SessionResumeCapabilities, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, ErrorCode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use ua_protocol::agent::{AgentEvent, Approval, Input};

use render::{AcpFront, Out};

/// How the sessions are started.
#[derive(Debug)]
pub struct Options {
    /// This binary.
    pub program: PathBuf,
    /// Options every session gets (`--config`, `--backend`, `--model`,
    /// `--policy`, `--shell`), as given to `unixagent acp`.
    pub forward: Vec<OsString>,
}

/// A running session: where its inputs go, and the prompt waiting for its
/// turn to end.
#[derive(Debug)]
struct Running {
    input: mpsc::UnboundedSender<String>,
    turn: Mutex<Option<oneshot::Sender<Result<StopReason, String>>>>,
    /// `session/close`: the session's stdin is closed once what was sent
    /// to it is written, and it ends its run as at the end of its input.
    close: tokio::sync::Notify,
    /// Its run is over (its stdout closed).
    over: tokio::sync::watch::Sender<bool>,
    /// Permission requests the client has not answered, by tool call.
    asked: Mutex<HashMap<String, agent_client_protocol::RequestCancellationHandle>>,
}

/// The running sessions by id, and every session process started (each
/// waited for when the connection ends).
#[derive(Debug, Default)]
struct Shared {
    running: Mutex<HashMap<String, Arc<Running>>>,
    children: Mutex<Vec<tokio::process::Child>>,
}

type Sessions = Arc<Shared>;

/// How long a session gets to end its run once the client went away.
const END_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves the protocol until stdin closes; every session ends with it.
pub fn run(opts: Options) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(serve(Arc::new(opts)))?;
    Ok(0)
}

async fn serve(opts: Arc<Options>) -> anyhow::Result<()> {
    let sessions: Sessions = Arc::default();
    let transport = ByteStreams::new(tokio::io::stdout().compat_write(), tokio::io::stdin().compat());
    let (new_s, load_s, resume_s, prompt_s, cancel_s, close_s) =
        (sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone());
    let (new_o, load_o, resume_o) = (opts.clone(), opts.clone(), opts);
    Agent
        .v1()
        .name("unixagent")
        .on_receive_request(
            async |req: InitializeRequest, responder: Responder<InitializeResponse>, _cx| {
                responder.respond(initialize(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            // Nothing to log in to: the model's keys come from the
            // configuration. Clients that authenticate anyway are told yes.
            async |_req: AuthenticateRequest, responder: Responder<AuthenticateResponse>, _cx| {
                responder.respond(AuthenticateResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder: Responder<NewSessionResponse>, cx: ConnectionTo<Client>| {
                let (opts, sessions) = (new_o.clone(), new_s.clone());
                let conn = cx.clone();
                cx.spawn(async move {
                    match start(&opts, &req.cwd, None, sessions, conn).await {
                        Ok(id) => responder.respond(NewSessionResponse::new(id)),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let (opts, sessions) = (load_o.clone(), load_s.clone());
                let conn = cx.clone();
                cx.spawn(async move {
                    let id = req.session_id.0.to_string();
                    let replay = match journal_of(&id, &req.cwd) {
                        Ok(updates) => updates,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    // The history first, then the session that goes on.
                    for update in replay {
                        conn.send_notification(SessionNotification::new(req.session_id.clone(), update))?;
                    }
                    match start(&opts, &req.cwd, Some(&id), sessions, conn).await {
                        Ok(_) => responder.respond(LoadSessionResponse::new()),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest,
                        responder: Responder<ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let (opts, sessions) = (resume_o.clone(), resume_s.clone());
                let conn = cx.clone();
                cx.spawn(async move {
                    let id = req.session_id.0.to_string();
                    match start(&opts, &req.cwd, Some(&id), sessions, conn).await {
                        Ok(_) => responder.respond(ResumeSessionResponse::new()),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder: Responder<PromptResponse>, cx: ConnectionTo<Client>| {
                let Some(running) = find(&prompt_s, &req.session_id) else {
                    return responder.respond_with_error(not_found(&req.session_id));
                };
                let (tx, rx) = oneshot::channel();
                {
                    let mut turn = lock(&running.turn);
                    if turn.is_some() {
                        return responder.respond_with_error(Error::new(
                            ErrorCode::INVALID_REQUEST,
                            "a prompt is already running in this session; wait for it or cancel it first",
                        ));
                    }
                    *turn = Some(tx);
                }
                let text = instruction(&req.prompt);
                let _ = running.input.send(line(&Input::Instruction { text }));
                // Answered when the turn ends, off the dispatch loop so the
                // cancel and the permission answers still come in.
                cx.spawn(async move {
                    match rx.await {
                        Ok(Ok(stop)) => responder.respond(PromptResponse::new(stop)),
                        Ok(Err(message)) => {
                            responder.respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, message))
                        }
                        Err(_) => responder.respond_with_error(Error::new(
                            ErrorCode::INTERNAL_ERROR,
                            "the session ended before its turn did; start a new session",
                        )),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                if let Some(running) = find(&cancel_s, &n.session_id) {
                    let _ = running.input.send(line(&Input::Cancel));
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            // Its turn is cancelled and its input closed: the session ends
            // its run (journal, index, trace) and the answer comes once it
            // has, or after END_GRACE.
            async move |req: CloseSessionRequest, responder: Responder<CloseSessionResponse>, cx: ConnectionTo<Client>| {
                let Some(running) = find(&close_s, &req.session_id) else {
                    return responder.respond_with_error(not_found(&req.session_id));
                };
                // Gone for the client at once: a prompt after this is for
                // no session.
                lock(&close_s.running).remove(req.session_id.0.as_ref());
                let _ = running.input.send(line(&Input::Cancel));
                running.close.notify_one();
                let mut over = running.over.subscribe();
                cx.spawn(async move {
                    if tokio::time::timeout(END_GRACE, over.wait_for(|o| *o)).await.is_err() {
                        eprintln!(
                            "unixagent acp: session {} did not end within {} s of being closed; it ends with the connection.",
                            req.session_id.0,
                            END_GRACE.as_secs()
                        );
                    }
                    responder.respond(CloseSessionResponse::new())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await?;
    // The client went away: every session's stdin is closed with the
    // connection, so each ends its run as `--json` does at end of input
    // (a question waiting is denied, the journal and index hear the end).
    let children = std::mem::take(&mut *lock(&sessions.children));
    for mut child in children {
        if tokio::time::timeout(END_GRACE, child.wait()).await.is_err() {
            eprintln!(
                "unixagent acp: a session did not end within {} s of the client leaving; stopping it.",
                END_GRACE.as_secs()
            );
            let _ = child.kill().await;
        }
    }
    Ok(())
}

/// Version 1 whatever the client asked for: it is the only one there is
/// to speak, and a client that wanted a later one sees 1 and decides.
fn initialize(_req: &InitializeRequest) -> InitializeResponse {
    let caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
        .session_capabilities(
            SessionCapabilities::new().resume(SessionResumeCapabilities::new()).close(SessionCloseCapabilities::new()),
        );
    InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
        .agent_capabilities(caps)
        .agent_info(Implementation::new("unixagent", env!("CARGO_PKG_VERSION")))
}

fn find(sessions: &Sessions, id: &SessionId) -> Option<Arc<Running>> {
    lock(&sessions.running).get(id.0.as_ref()).cloned()
}

fn not_found(id: &SessionId) -> Error {
    Error::new(ErrorCode::RESOURCE_NOT_FOUND, format!("there is no session {} here; start one with session/new", id.0))
}

/// One input line for the session.
fn line(input: &Input) -> String {
    let mut s = serde_json::to_string(input).unwrap_or_default();
    s.push('\n');
    s
}

/// A prompt's content as one instruction: text as it is, a resource as
/// its text or its link.
fn instruction(prompt: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(l) => parts.push(format!("[{}]({})", l.name, l.uri)),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    parts.push(format!("{}:\n```\n{}\n```", t.uri, t.text));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => parts.push(format!("({} attached)", b.uri)),
                _ => {}
            },
            _ => {}
        }
    }
    parts.join("\n")
}

/// An earlier session's history as updates, for `session/load`.
fn journal_of(id: &str, _cwd: &Path) -> Result<Vec<agent_client_protocol::v1::schema::SessionUpdate>, Error> {
    let resume = crate::sessions::to_resume(false, false, Some(id))
        .map_err(|e| Error::new(ErrorCode::RESOURCE_NOT_FOUND, e))?
        .ok_or_else(|| Error::new(ErrorCode::RESOURCE_NOT_FOUND, format!("there is no session {id} to load")))?;
    let dir = ua_store::session::SessionDir::open(&resume.dir)
        .map_err(|e| Error::new(ErrorCode::RESOURCE_NOT_FOUND, format!("session {id} cannot be read ({e})")))?;
    let journal = ua_store::journal::read_journal(&dir.journal_path()).map_err(|e| {
        Error::new(ErrorCode::INTERNAL_ERROR, format!("the journal of session {id} cannot be read ({e})"))
    })?;
    Ok(history::replay(journal.entries()))
}

/// Starts a session's process in `cwd` (continuing `resume`), waits for
/// its `session` event and serves it from then on. Returns its id.
async fn start(
    opts: &Options,
    cwd: &Path,
    resume: Option<&str>,
    sessions: Sessions,
    cx: ConnectionTo<Client>,
) -> Result<String, Error> {
    let mut cmd = tokio::process::Command::new(&opts.program);
    cmd.arg("--json").args(&opts.forward);
    if let Some(id) = resume {
        cmd.arg("--resume").arg(id);
    }
    cmd.current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let failed = |e: std::io::Error| {
        Error::new(ErrorCode::INTERNAL_ERROR, format!("unixagent could not start a session in {} ({e})", cwd.display()))
    };
    let mut child = cmd.spawn().map_err(failed)?;
    let pipes = (child.stdin.take(), child.stdout.take());
    lock(&sessions.children).push(child);
    let (Some(mut stdin), Some(stdout)) = pipes else {
        return Err(Error::new(ErrorCode::INTERNAL_ERROR, "the session's pipes were not set up; try again"));
    };
    let mut lines = BufReader::new(stdout).lines();
    // The first event names the session; anything else first is why it
    // did not start (the sandbox cannot be applied, a broken resume).
    let mut why = None;
    let id = loop {
        match lines.next_line().await {
            Ok(Some(l)) => match serde_json::from_str::<AgentEvent>(&l) {
                Ok(AgentEvent::Session { id, .. }) => break id,
                Ok(AgentEvent::Error { message, .. }) => why = Some(message),
                _ => {}
            },
            _ => {
                let message = why.unwrap_or_else(|| "the session ended as it started; its message is on stderr".into());
                return Err(Error::new(ErrorCode::INTERNAL_ERROR, message));
            }
        }
    };
    let (input, mut queued) = mpsc::unbounded_channel::<String>();
    let running = Arc::new(Running {
        input,
        turn: Mutex::new(None),
        close: tokio::sync::Notify::new(),
        over: tokio::sync::watch::Sender::new(false),
        asked: Mutex::default(),
    });
    lock(&sessions.running).insert(id.clone(), running.clone());
    let writer = running.clone();
    cx.spawn(async move {
        loop {
            // What was queued first, so a close comes after the cancel
            // sent with it.
            let l = tokio::select! {
                biased;
                l = queued.recv() => l,
                () = writer.close.notified() => None,
            };
            let Some(l) = l else { break };
            if stdin.write_all(l.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
        Ok(())
    })?;
    let session = SessionId::new(id.clone());
    let conn = cx.clone();
    cx.spawn(async move {
        let mut front = AcpFront::default();
        while let Ok(Some(l)) = lines.next_line().await {
            let Ok(event) = serde_json::from_str::<AgentEvent>(&l) else {
                eprintln!("unixagent acp: session {} wrote a line that is not an event: {l}", session.0);
                continue;
            };
            withdraw(&running, &event);
            for out in front.event(&event) {
                deliver(out, &session, &running, &conn)?;
            }
        }
        // The run is over: a prompt still waiting hears so, and the
        // session is gone.
        lock(&running.turn).take();
        lock(&sessions.running).remove(session.0.as_ref());
        running.over.send_replace(true);
        Ok(())
    })?;
    Ok(id)
}

/// The session stopped waiting for an answer the client still holds: the
/// command's result came without it (the approval timeout denied it), or
/// the turn or the run ended. The client is told with `$/cancel_request`,
/// so an editor can take the question down.
fn withdraw(running: &Running, event: &AgentEvent) {
    let mut asked = lock(&running.asked);
    let gone: Vec<_> = match event {
        AgentEvent::CommandResult { id, .. } => asked.remove(id).into_iter().collect(),
        AgentEvent::TurnEnd { .. } | AgentEvent::Result { .. } => asked.drain().map(|(_, h)| h).collect(),
        _ => return,
    };
    for handle in gone {
        let _ = handle.cancel();
    }
}

/// A lock whose holder panicked is used as it was left.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Carries out what one event came to.
fn deliver(out: Out, session: &SessionId, running: &Arc<Running>, cx: &ConnectionTo<Client>) -> Result<(), Error> {
    match out {
        Out::Update(update) => cx.send_notification(SessionNotification::new(session.clone(), update)),
        Out::Ask { tool_call, options } => {
            let id = tool_call.tool_call_id.0.to_string();
            let request = cx.send_request(RequestPermissionRequest::new(session.clone(), tool_call, options));
            lock(&running.asked).insert(id.clone(), request.cancellation_handle());
            let (running, conn, session) = (running.clone(), cx.clone(), session.clone());
            // The answer is awaited off the dispatch loop. The session
            // itself denies the command if none comes before
            // `batch.approval_timeout_secs` (and the request is withdrawn,
            // see `withdraw`); an answer after that is ignored there.
            cx.spawn(async move {
                let outcome = request.block_task().await.map(|r| r.outcome);
                lock(&running.asked).remove(&id);
                let decision = match outcome {
                    Ok(RequestPermissionOutcome::Selected(s)) if s.option_id.0.as_ref() == render::ALLOW_ONCE => {
                        Approval::Allow
                    }
                    Ok(RequestPermissionOutcome::Selected(s)) if s.option_id.0.as_ref() == render::ALLOW_ALWAYS => {
                        Approval::AllowAlways
                    }
                    _ => Approval::Deny,
                };
                if decision != Approval::Deny {
                    conn.send_notification(SessionNotification::new(session, render::running(&id)))?;
                }
                let _ = running.input.send(line(&Input::Approval { id, decision }));
                Ok(())
            })
        }
        Out::TurnOver(answer) => {
            if let Some(tx) = lock(&running.turn).take() {
                let _ = tx.send(answer);
            }
            Ok(())
        }
        Out::Ended => {
            lock(&running.turn).take();
            Ok(())
        }
    }
}
