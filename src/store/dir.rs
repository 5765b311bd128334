//! Making waymark's directories. The state directory is made on first use, by whichever
//! write comes first, so this is the one place that knows it was just made: it then says
//! what of it belongs in git ([`crate::store::project::GIT_FILES`], docs/git.md).

use std::fs;
use std::io;
use std::path::Path;

use crate::store::project::STATE_DIR;

/// `create_dir_all`, and when that makes the state directory, its `.gitignore` and
/// `.gitattributes` too (a failure to write those is not one to make the caller's write
/// fail over).
pub fn make_dir(dir: &Path) -> io::Result<()> {
    // Nearly always there already: one stat, then nothing.
    if dir.is_dir() {
        return Ok(());
    }
    let made = dir
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == STATE_DIR))
        .filter(|state| !state.exists());
    fs::create_dir_all(dir)?;
    if let Some(state) = made {
        crate::store::project::write_git_files(state);
    }
    Ok(())
}
