//! A home holds token hashes, jobs and everyone's code: its directories are
//! created readable by their owner only (0700), and `server.sqlite` 0600
//! (SQLite gives its `-wal` and `-shm` files the database's mode).

use std::path::Path;

/// Create `dir` and any missing parents with mode 0700.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Make sure `file` exists with mode 0600 (an existing one is narrowed to it).
pub fn own_file(file: &Path) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let f = o.open(file)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if f.metadata()?.permissions().mode() & 0o077 != 0 {
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn directories_and_files_are_the_owners() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("a/home");
        create_dir(&home).unwrap();
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&t.path().join("a")), 0o700);
        let f = home.join("server.sqlite");
        own_file(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        own_file(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
    }
}
