//! placeholder
pub mod audit;
pub mod cedar;
pub mod classify;
pub mod deny;
pub mod error;
pub mod explain;
pub mod gate;
pub mod grants;
pub mod hooks;
pub mod judge;
pub mod parse;
pub mod paths;
pub mod policy_toml;
pub mod risk;
