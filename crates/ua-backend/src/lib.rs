//! LLM backends for unixagent.
//!
//! - [`provider::Provider`]: what the agent needs of a model — a streaming
//!   call, a whole-answer call, the context window, a token estimate.
//! - [`provider::HttpProvider`]: the implementation for both wire formats,
//!   Anthropic Messages ([`anthropic`]) and OpenAI Chat Completions
//!   ([`openai`], also ollama, llama.cpp, vLLM, LM Studio, OpenRouter).
//! - [`provider::Fallback`]: the configured backends in order, moving on
//!   when one is unreachable.
//! - [`sse`]: SSE framing glue and the decoder interface; each provider's
//!   decoder is a pure state machine ([`anthropic::decode`],
//!   [`openai::decode`]) that tests and fuzzers drive directly.
//! - [`config`]: `[backend]` in config.toml, environment conventions and
//!   the choice of backend; [`key`]: API keys that never print.
//! - [`transport`]: the HTTP client, timeouts, retries with backoff before
//!   the first event ([`retry`]).
//! - [`probe`]: whether an endpoint answers and takes the key, without
//!   spending tokens (`unixagent doctor`).
//! - [`tokens`]: token estimate, context windows, session budget.
//! - [`limits`]: what a server says when a request does not fit (the
//!   prompt, or the output asked for), and the retry that follows.
//! - [`error::BackendError`]: every failure as one sentence and a kind.
//!
//! It deliberately does not manage the conversation (trimming, journal),
//! render anything, or decide what to do with tool calls: it moves a
//! [`provider::Request`] to a model and canonical events back.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use ua_backend::config::{BackendSection, Overrides, ollama_answers};
//! use ua_backend::provider::{Provider, Request, build_chain};
//! use ua_backend::transport::{Transport, TransportOptions};
//! use ua_protocol::conversation::Message;
//! use ua_protocol::event::StreamEvent;
//! use ua_protocol::tool::shell_tool;
//!
//! # async fn demo() -> Result<(), ua_backend::error::BackendError> {
//! let section = BackendSection::default(); // usually from config.toml
//! let env = |k: &str| std::env::var(k).ok();
//! let specs = section.resolve(&Overrides::default(), &env, &mut || {
//!     ollama_answers(std::time::Duration::from_millis(300))
//! })?;
//! let transport = Transport::new(&TransportOptions::from_section(&section))?;
//! let (provider, _skipped) = build_chain(&specs, &transport, &env)?;
//! let request = Request {
//!     system: "You are a shell assistant.".into(),
//!     messages: vec![Message::user_text("what's in /tmp")],
//!     tools: vec![shell_tool()],
//!     max_tokens: None,
//! };
//! let mut events = provider.stream(&request);
//! while let Some(event) = events.next().await {
//!     if let StreamEvent::TextDelta(text) = event? {
//!         print!("{text}");
//!     }
//! }
//! # Ok(())
//! # }
//! ```

pub mod anthropic;
pub mod config;
pub mod error;
pub mod key;
pub mod limits;
pub mod openai;
pub mod probe;
pub mod provider;
pub mod retry;
pub mod sse;
pub mod tokens;
pub mod transport;
