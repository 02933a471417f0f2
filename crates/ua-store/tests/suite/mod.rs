mod files;
pub mod long_session;
mod reconstruct;
mod resume;
