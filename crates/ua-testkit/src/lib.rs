//! Test kit for unixagent.
//!
//! - [`term`]: start a program (usually the real `unixagent` binary) inside a
//!   PTY that the test owns, type into it, and wait for conditions on the
//!   raw bytes or on the screen as a VT emulator renders it.
//! - [`provider`]: a fake LLM provider on 127.0.0.1 that speaks the
//!   Anthropic and OpenAI streaming formats, plays scripted turns from
//!   scenario files and records every request it received.
//!
//! ```no_run
//! use ua_testkit::provider::{FakeProvider, Scenario, Turn};
//! let server = FakeProvider::start(Scenario::new().turn(Turn::text("hi"))).unwrap();
//! // point the client at server.base_url() (Anthropic) or
//! // server.openai_base_url(), then:
//! let requests = server.wait_until(std::time::Duration::from_secs(5), |r| !r.is_empty());
//! ```
//!
//! It deliberately has no timing assertions: every wait is "until this
//! observable condition holds, or the deadline passes".

pub mod provider;
pub mod term;
