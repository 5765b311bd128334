//! The `KeyManager` of docs/design.md (Receipt format): where the master key comes from,
//! and the signer made from it. The key file's rules and the derivation are in
//! `master.rs`.

use std::path::{Path, PathBuf};

use super::master::{KeyError, MasterKey, create_key, read_key};
use super::signer::{Ed25519Signer, ReceiptSigner};
use waymark_core::config::KeyDerivation;

/// Master-key lifecycle (the `KeyManager` of docs/design.md): where the key comes from
/// and how a signer is made from it. Business logic depends on this trait, never on the
/// storage.
pub trait KeyManager {
    /// Loads the master key, creating it if there is none (for signing).
    fn load(&mut self) -> Result<(), KeyError>;
    /// Loads the master key if it exists; never creates one (for verifying: a missing key
    /// must be reported, not replaced by a new one that verifies nothing).
    fn load_existing(&mut self) -> Result<(), KeyError>;
    /// Whether a master key is there to load.
    fn exists(&self) -> bool;
    /// A signer over the loaded key.
    fn new_signer(&self) -> Result<Box<dyn ReceiptSigner>, KeyError>;
}

/// The master key in a file (see the module docs for the rules it keeps).
#[derive(Debug)]
pub struct FileKeyManager {
    path: Option<PathBuf>,
    derivation: KeyDerivation,
    key: Option<MasterKey>,
}

impl FileKeyManager {
    /// `path` None means there is nowhere to keep a key (no HOME): every load fails cleanly.
    pub fn new(path: Option<PathBuf>, derivation: KeyDerivation) -> FileKeyManager {
        FileKeyManager {
            path,
            derivation,
            key: None,
        }
    }

    /// The key file and derivation of a configuration.
    pub fn from_config(config: &waymark_core::config::Config) -> FileKeyManager {
        let path = crate::config::key_path(config);
        FileKeyManager::new(path, config.key_derivation.clone())
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The public key of the task key `key_path`, from the loaded master key (what `waymark
    /// key export` writes).
    pub fn public_key(&self, key_path: &str) -> Result<String, KeyError> {
        let key = self.key.clone().ok_or(KeyError::NotLoaded)?;
        Ok(Ed25519Signer::new(key, self.derivation.clone()).public_key(key_path))
    }

    fn require_path(&self) -> Result<PathBuf, KeyError> {
        self.path.clone().ok_or(KeyError::NoKeyPath)
    }
}

impl KeyManager for FileKeyManager {
    fn load(&mut self) -> Result<(), KeyError> {
        let path = self.require_path()?;
        let key = match read_key(&path) {
            Err(KeyError::Missing(_)) => create_key(&path)?,
            other => other?,
        };
        self.key = Some(key);
        Ok(())
    }

    fn load_existing(&mut self) -> Result<(), KeyError> {
        let path = self.require_path()?;
        self.key = Some(read_key(&path)?);
        Ok(())
    }

    fn exists(&self) -> bool {
        self.path.as_deref().is_some_and(|p| p.is_file())
    }

    fn new_signer(&self) -> Result<Box<dyn ReceiptSigner>, KeyError> {
        let key = self.key.clone().ok_or(KeyError::NotLoaded)?;
        Ok(Box::new(Ed25519Signer::new(key, self.derivation.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// The default path components, `m/44'/236'/0'/…`.
    fn derivation() -> KeyDerivation {
        waymark_core::config::Config::default().key_derivation
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_key_0600_in_dir_0700_and_reloads_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cfg/waymark/keys/master.key");
        let mut km = FileKeyManager::new(Some(path.clone()), derivation());
        assert!(!km.exists());
        km.load().unwrap();
        assert!(km.exists());
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim().len(), 64);
        // Loading again reads the same key rather than making a new one.
        let mut again = FileKeyManager::new(Some(path.clone()), derivation());
        again.load().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        assert_eq!(
            km.key.as_ref().unwrap().derive("m/1"),
            again.key.as_ref().unwrap().derive("m/1")
        );
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_a_key_others_can_read() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("master.key");
        FileKeyManager::new(Some(path.clone()), derivation())
            .load()
            .unwrap();
        for loose in [0o644, 0o640, 0o604] {
            fs::set_permissions(&path, fs::Permissions::from_mode(loose)).unwrap();
            let mut km = FileKeyManager::new(Some(path.clone()), derivation());
            let err = km.load().unwrap_err();
            assert!(
                matches!(err, KeyError::LoosePermissions { mode, .. } if mode == loose),
                "{err}"
            );
            assert!(err.to_string().contains("chmod 600"));
            assert!(km.load_existing().is_err());
            assert!(km.new_signer().is_err());
        }
        // The refused key is left as it was, not replaced.
        assert_eq!(mode(&path), 0o604);
    }

    #[test]
    fn load_existing_never_creates() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("keys/master.key");
        let mut km = FileKeyManager::new(Some(path.clone()), derivation());
        assert!(matches!(km.load_existing(), Err(KeyError::Missing(_))));
        assert!(!path.exists());
        assert!(matches!(km.new_signer(), Err(KeyError::NotLoaded)));
        let mut none = FileKeyManager::new(None, derivation());
        assert!(matches!(none.load(), Err(KeyError::NoKeyPath)));
    }

    #[test]
    fn malformed_key_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("master.key");
        fs::write(&path, "abcd\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let err = FileKeyManager::new(Some(path.clone()), derivation())
            .load()
            .unwrap_err();
        assert!(matches!(err, KeyError::Malformed { .. }), "{err}");
        // A malformed key is not overwritten by a fresh one.
        assert_eq!(fs::read_to_string(&path).unwrap(), "abcd\n");
    }
}
