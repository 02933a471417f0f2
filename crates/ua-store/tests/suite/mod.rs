mod files;
mod index;
pub mod long_session;
mod reconstruct;
mod resume;
