//! A clone connects only to the addresses its remote was checked at
//! ([`crate::check_remote`]), so that a DNS answer that changes after the
//! check (rebinding) cannot point it at a private address.
//!
//! - https: the HTTP client is told the checked addresses of the host,
//!   resolves any other name (a redirect's) through [`PublicResolver`], which
//!   refuses private answers, and sends a request to a private address
//!   literal nowhere ([`REFUSED_HOST`]).
//! - ssh: the URL names the checked address itself, and `ssh` looks the host
//!   key up under the host's name (`HostKeyAlias`).

use std::any::Any;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use gix::protocol::transport::client::blocking_io::http;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::remote::{CheckedRemote, host_span, is_public, public_addrs};

/// A name no resolver answers: where a request to a private address literal is sent.
pub const REFUSED_HOST: &str = "private-address-refused.invalid";

/// Resolves names to their addresses only when every one is public.
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicResolver;

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            if host == REFUSED_HOST {
                return Err("refused: the URL names a private address".into());
            }
            // the port is the URL's; 0 here is replaced by the client
            match public_addrs(&host, 0) {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                Err(why) => Err(format!("refused: {why}").into()),
            }
        })
    }
}

/// Where a request goes when its URL names a private address literal
/// (a redirect's target): to a proxy that cannot be resolved.
fn refused_literal(url: &reqwest::Url) -> Option<String> {
    let host = url.host_str()?;
    let ip: IpAddr = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()?;
    (!is_public(ip)).then(|| format!("http://{REFUSED_HOST}:9"))
}

/// The HTTP client settings of a pinned remote.
pub(crate) fn pin_client(
    builder: reqwest::blocking::ClientBuilder,
    host: &str,
    addrs: &[SocketAddr],
) -> reqwest::blocking::ClientBuilder {
    builder
        .resolve_to_addrs(host, addrs)
        .dns_resolver(Arc::new(PublicResolver))
        .proxy(reqwest::Proxy::custom(refused_literal))
}

/// The transport options for a connection to `remote`: the repository's
/// own (from its git configuration) with the HTTP client pinned. None when
/// the remote is not pinned or not https.
pub fn transport_options(repo: &gix::Repository, remote: &CheckedRemote) -> Option<Box<dyn Any>> {
    if !remote.pinned() || !remote.url.to_ascii_lowercase().starts_with("https://") {
        return None;
    }
    let configured = repo
        .transport_options(remote.url.as_str(), None)
        .ok()
        .flatten()
        .and_then(|o| o.downcast::<http::Options>().ok());
    let mut options = configured.map(|o| *o).unwrap_or_default();
    let (host, addrs) = (remote.host.clone(), remote.addrs.clone());
    let backend = http::reqwest::Options {
        configure_client: Some(Box::new(move |b| {
            Ok::<_, gix::Error>(pin_client(b, &host, &addrs))
        })),
        configure_request: None,
    };
    options.backend = Some(Arc::new(Mutex::new(backend)));
    Some(Box::new(options))
}

/// An ssh remote as connected to: the URL with the checked address for the
/// host, and the `core.sshCommand` that checks the host key under the
/// host's name. None when the remote is not pinned or not ssh.
pub fn ssh_target(remote: &CheckedRemote) -> Option<(String, String)> {
    if !remote.pinned() || remote.url.to_ascii_lowercase().starts_with("https://") {
        return None;
    }
    let ip = remote.addrs.first()?.ip();
    let literal = match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    let url = replace_host(&remote.url, &remote.host, &literal)?;
    let alias: String = remote
        .host
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect();
    Some((url, format!("core.sshCommand=ssh -o HostKeyAlias={alias}")))
}

/// `url` with its host ([`host_span`]) written as `with`; None unless that
/// host is `host`.
fn replace_host(url: &str, host: &str, with: &str) -> Option<String> {
    let (span, _) = host_span(url).ok()?;
    let found = url[span.clone()].to_ascii_lowercase();
    if found.trim_end_matches('.') != host {
        return None;
    }
    // an IPv6 literal's brackets stay in the URL around the span
    let with = with.trim_start_matches('[').trim_end_matches(']');
    let bracketed = url[..span.start].ends_with('[');
    let with = if bracketed || !with.contains(':') {
        with.to_string()
    } else {
        format!("[{with}]")
    };
    Some(format!(
        "{}{}{}",
        &url[..span.start],
        with,
        &url[span.end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(url: &str, addr: &str) -> CheckedRemote {
        let a: SocketAddr = addr.parse().unwrap();
        let host = crate::remote::host_of(url).unwrap().0;
        CheckedRemote {
            url: url.into(),
            host,
            port: a.port(),
            addrs: vec![a],
        }
    }

    #[test]
    fn ssh_connects_to_the_checked_address_under_the_host_key_of_its_name() {
        let (url, cmd) = ssh_target(&checked(
            "ssh://git@git.example.org:2222/team/repo.git",
            "140.82.112.3:2222",
        ))
        .unwrap();
        assert_eq!(url, "ssh://git@140.82.112.3:2222/team/repo.git");
        assert_eq!(cmd, "core.sshCommand=ssh -o HostKeyAlias=git.example.org");
        let (url, _) =
            ssh_target(&checked("git@github.com:team/repo.git", "140.82.112.3:22")).unwrap();
        assert_eq!(url, "git@140.82.112.3:team/repo.git");
        let (url, _) = ssh_target(&checked(
            "git@github.com:team/repo.git",
            "[2606:4700::1]:22",
        ))
        .unwrap();
        assert_eq!(url, "git@[2606:4700::1]:team/repo.git");
        assert!(ssh_target(&checked("https://github.com/a/b", "140.82.112.3:443")).is_none());
        assert!(ssh_target(&CheckedRemote::unchecked("git@10.0.0.1:a/b")).is_none());
    }

    #[test]
    fn the_resolver_refuses_private_answers() {
        let rt = tokio_free_block_on(PublicResolver.resolve("localhost".parse().unwrap()));
        let err = rt.err().expect("localhost is refused").to_string();
        assert!(err.contains("refused"), "{err}");
        let rt = tokio_free_block_on(PublicResolver.resolve(REFUSED_HOST.parse().unwrap()));
        assert!(rt.is_err());
    }

    #[test]
    fn requests_to_private_literals_go_nowhere() {
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        for private in [
            "https://127.0.0.1/x",
            "https://169.254.169.254/latest",
            "https://[::ffff:10.0.0.1]/x",
            "https://[2002:a9fe:a9fe::1]/x",
        ] {
            assert!(refused_literal(&url(private)).is_some(), "{private}");
        }
        assert!(refused_literal(&url("https://140.82.112.3/x")).is_none());
        assert!(refused_literal(&url("https://github.com/x")).is_none());
    }

    /// The resolver's future does no I/O of its own that needs a runtime.
    fn tokio_free_block_on<F: std::future::Future>(f: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }
}
