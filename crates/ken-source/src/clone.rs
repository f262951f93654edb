//! Cloning (and later fetching) a remote repository by URL.
//!
//! A token for private repositories is handed to git through a credentials
//! callback: it never appears in the URL written to the clone's config, in
//! messages, or in logs.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::remote::CheckedRemote;
use crate::{SourceError, pin};

/// Does `s` name a remote repository rather than a local path?
pub fn is_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    ["https://", "http://", "ssh://", "git://", "file://"]
        .iter()
        .any(|p| lower.starts_with(p))
        || is_scp_like(s)
}

/// `git@github.com:owner/repo.git`
fn is_scp_like(s: &str) -> bool {
    match s.split_once(':') {
        Some((host, rest)) => {
            host.contains('@') && !host.contains('/') && !rest.starts_with("//") && !rest.is_empty()
        }
        None => false,
    }
}

/// The default index name for a URL: its last path component without `.git`.
pub fn repo_name_from_url(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    let name = last.strip_suffix(".git").unwrap_or(last);
    if name.is_empty() {
        "repo".to_string()
    } else {
        name.to_string()
    }
}

/// Remove `user:password@` from a URL before it is shown anywhere.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && !userinfo.contains('/')
    {
        return format!("{scheme}://***@{host}");
    }
    url.to_string()
}

/// Clone `remote` into `dest` (no checkout: files are read from the object
/// database), or fetch new commits if `dest` already holds the clone.
/// A checked remote is reached at the addresses it was checked at only
/// (see pin.rs). Returns the revision to index by default (the remote's HEAD).
pub fn clone_or_fetch(
    remote: &CheckedRemote,
    dest: &Path,
    token: Option<&str>,
) -> Result<String, SourceError> {
    let shown = redact(&remote.url);
    let fail = |e: &dyn std::fmt::Display| SourceError::Clone {
        url: shown.clone(),
        message: scrub(&e.to_string(), token),
    };
    let interrupt = AtomicBool::new(false);
    // over ssh the URL connected to names the checked address
    let ssh = pin::ssh_target(remote);
    let overrides: Vec<String> = ssh.iter().map(|(_, cmd)| cmd.clone()).collect();
    let url = ssh
        .as_ref()
        .map_or(remote.url.as_str(), |(u, _)| u.as_str());
    if dest.join(".git").exists() {
        let options = gix::open::Options::default().config_overrides(overrides.iter().cloned());
        let repo = gix::open_opts(dest, options).map_err(|e| fail(&e))?;
        let origin = match &ssh {
            None => repo.find_remote("origin").map_err(|e| fail(&e))?,
            Some((u, _)) => repo
                .remote_at(u.as_str())
                .and_then(|r| {
                    r.with_refspecs(
                        ["+refs/heads/*:refs/remotes/origin/*"],
                        gix::remote::Direction::Fetch,
                    )
                })
                .map_err(|e| fail(&e))?,
        };
        let mut conn = origin
            .connect(gix::remote::Direction::Fetch)
            .map_err(|e| fail(&e))?;
        if let Some(t) = token {
            conn.set_credentials(credentials(t.to_string()));
        }
        if let Some(options) = pin::transport_options(&repo, remote) {
            conn.set_transport_options(options);
        }
        conn.prepare_fetch(gix::progress::Discard, Default::default())
            .map_err(|e| fail(&e))?
            .receive(gix::progress::Discard, &interrupt)
            .map_err(|e| fail(&e))?;
    } else {
        private_dir(dest).map_err(|source| SourceError::Io {
            path: dest.to_path_buf(),
            source,
        })?;
        let mut prep = gix::prepare_clone(url, dest)
            .map_err(|e| fail(&e))?
            .with_in_memory_config_overrides(overrides.iter().cloned());
        let token = token.map(str::to_string);
        let pinned = remote.clone();
        prep = prep.configure_connection(move |c| {
            if let Some(t) = &token {
                c.set_credentials(credentials(t.clone()));
            }
            if let Some(options) = pin::transport_options(c.remote().repo(), &pinned) {
                c.set_transport_options(options);
            }
            Ok(())
        });
        let result = prep.fetch_only(gix::progress::Discard, &interrupt);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(dest);
            return Err(fail(&e));
        }
    }
    let repo = gix::open(dest).map_err(|e| fail(&e))?;
    for rev in ["refs/remotes/origin/HEAD", "HEAD"] {
        if repo.rev_parse_single(rev).is_ok() {
            return Ok(rev.to_string());
        }
    }
    Err(SourceError::EmptyRepository(shown))
}

/// Create `dir` and its missing parents readable by this user only (a
/// clone may hold private code).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn credentials(
    token: String,
) -> impl FnMut(
    gix::credentials::helper::Action,
) -> gix::Result<Option<gix::credentials::protocol::Outcome>> {
    move |action| match action {
        gix::credentials::helper::Action::Get(ctx) => {
            Ok(Some(gix::credentials::protocol::Outcome {
                identity: gix::sec::identity::Account {
                    username: "x-access-token".into(),
                    password: token.clone(),
                    oauth_refresh_token: None,
                },
                next: ctx.into(),
            }))
        }
        _ => Ok(None),
    }
}

fn scrub(message: &str, token: Option<&str>) -> String {
    match token {
        Some(t) if !t.is_empty() => message.replace(t, "***"),
        _ => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_names() {
        assert!(is_url("https://github.com/pallets/flask"));
        assert!(is_url("git@github.com:pallets/flask.git"));
        assert!(is_url("file:///tmp/x"));
        assert!(!is_url("/tmp/x"));
        assert!(!is_url("./flask"));
        assert!(!is_url("C:/repo"));
        assert_eq!(
            repo_name_from_url("https://github.com/pallets/flask.git"),
            "flask"
        );
        assert_eq!(
            repo_name_from_url("git@github.com:pallets/flask.git"),
            "flask"
        );
        assert_eq!(
            repo_name_from_url("https://github.com/pallets/flask/"),
            "flask"
        );
    }

    #[test]
    fn secrets_never_shown() {
        assert_eq!(
            redact("https://me:s3cret@github.com/x/y"),
            "https://***@github.com/x/y"
        );
        assert_eq!(redact("https://github.com/x/y"), "https://github.com/x/y");
        assert_eq!(
            scrub("auth failed for s3cret", Some("s3cret")),
            "auth failed for ***"
        );
    }
}
