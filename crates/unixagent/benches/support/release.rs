//! The unixagent binary a benchmark drives.

use std::path::{Path, PathBuf};

use anyhow::bail;

/// The release build of unixagent, which `make bench` has just built.
pub fn release_binary() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("UA_BENCH_BIN") {
        return Ok(PathBuf::from(bin));
    }
    // Cargo runs benchmarks in the package directory; a relative target
    // directory is relative to the workspace, where `make` runs cargo.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    };
    let bin = target.join("release").join("unixagent");
    if !bin.is_file() {
        bail!("{} does not exist; run `make bench`, or `cargo build --release -p unixagent` first", bin.display());
    }
    Ok(bin)
}
