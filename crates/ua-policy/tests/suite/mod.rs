mod audit;
mod cascade;
mod classify_corpus;
mod classify_props;
mod differential;
mod explain;
mod git_repos;
mod grants;
mod hooks;
mod judge;
mod policy_toml;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use ua_policy::gate::{Gate, PolicyConfig, Request};

/// A throwaway home with unixagent's config and data directories.
pub struct Env {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub cfg: PolicyConfig,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let config = home.join(".config/unixagent");
        let data = home.join(".local/share/unixagent");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(home.join("project")).unwrap();
        let cfg = PolicyConfig::new(&config, &data, &home);
        Env { _dir: dir, home, cfg }
    }

    /// Writes a file under the config dir.
    pub fn config_file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.cfg.config_dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Writes an executable script (a hook) under the config dir.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.config_file(name, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    pub fn gate(&self) -> Gate {
        Gate::load(&self.cfg).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn cwd(&self) -> String {
        self.home.join("project").to_string_lossy().into_owned()
    }

    pub fn request(&self, command: &str) -> Request {
        Request {
            command: command.to_string(),
            cwd: self.cwd(),
            session: "test-session".into(),
            depth: 0,
            human_attached: true,
            instruction: Some("tidy up the project".into()),
        }
    }
}
