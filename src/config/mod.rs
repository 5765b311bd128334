//! Configuration: built-in defaults < user config < project `waymark.json` < environment.
//!
//! - `waymark_core::config` (re-exported here): the effective [`Config`], the types of its
//!   values, the table of keys and the parsing of one value;
//! - [`load`]: the layers (files, environment), where each value came from, what was wrong;
//! - this file: where the files are.
//!
//! The rule of this room: one bad value costs only its key. It is named in an error (for
//! `waymark doctor` and the CLI) and its default is used (for hooks, which must keep
//! working).

mod load;

use std::env;
use std::path::{Path, PathBuf};

pub use load::{ConfigError, Loaded, Origin, check, env_name, load};
pub use waymark_core::config::*;

/// The user config file: `$XDG_CONFIG_HOME/waymark/config.json` (`~/.config` when unset).
pub fn user_config_dir() -> Option<PathBuf> {
    env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("waymark"))
}

/// The master key file: `key_file` when set, else `$XDG_CONFIG_HOME/waymark/keys/master.key`.
pub fn key_path(config: &Config) -> Option<PathBuf> {
    if !config.key_file.is_empty() {
        return Some(PathBuf::from(&config.key_file));
    }
    user_config_dir().map(|d| d.join("keys").join("master.key"))
}

pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(crate::store::project::STATE_DIR)
        .join("waymark.json")
}
