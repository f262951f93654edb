//! Which remote URLs may be cloned or fetched.
//!
//! A server clones URLs that its callers send, so a URL is a way to make it
//! connect somewhere: to its own loopback services, a cloud metadata
//! endpoint (169.254.169.254), or hosts of a private network (SSRF). By
//! default only `https://` and `ssh://` (or `user@host:path`) URLs whose host
//! resolves to public addresses only are accepted; the operator can allow
//! everything (`allow_private_urls`), e.g. for a self-hosted git server on
//! the local network.
//!
//! The check resolves the host before git does, so a DNS answer that changes
//! between the two (rebinding) is not caught here; the host must also be a
//! name whose every address is public at the time of the check.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use crate::SourceError;

/// What the operator allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemotePolicy {
    /// Any scheme (file://, http://, git://) and any address.
    pub allow_private: bool,
}

/// Refuse `url` unless the policy allows it (see the module docs).
pub fn check_remote(url: &str, policy: RemotePolicy) -> Result<(), SourceError> {
    if policy.allow_private {
        return Ok(());
    }
    let shown = crate::redact(url);
    let refuse = |why: String| SourceError::RefusedUrl {
        url: shown.clone(),
        why,
    };
    let (host, port) = host_of(url).map_err(refuse)?;
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| refuse(format!("cannot resolve {host}: {e}")))?
            .map(|a| a.ip())
            .collect(),
    };
    if addrs.is_empty() {
        return Err(refuse(format!("{host} has no address")));
    }
    if let Some(ip) = addrs.iter().find(|ip| !is_public(**ip)) {
        return Err(refuse(format!(
            "{host} is a private, loopback or link-local address ({ip})"
        )));
    }
    Ok(())
}

/// The host and port of an https, ssh or scp-like URL.
fn host_of(url: &str) -> Result<(String, u16), String> {
    let lower = url.to_ascii_lowercase();
    let (rest, default_port) = if let Some(r) = lower.strip_prefix("https://") {
        (r, 443)
    } else if let Some(r) = lower.strip_prefix("ssh://") {
        (r, 22)
    } else if lower.contains("://") {
        let scheme = lower.split("://").next().unwrap_or("");
        return Err(format!(
            "only https:// and ssh:// remotes are allowed, not {scheme}://"
        ));
    } else if let Some((userhost, _path)) = lower.split_once(':') {
        // scp-like: user@host:path
        let host = userhost.rsplit('@').next().unwrap_or(userhost);
        return valid_host(host).map(|h| (h, 22));
    } else {
        return Err("not a URL".into());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| "unclosed [ in the host".to_string())?;
        (h.to_string(), after.strip_prefix(':').unwrap_or(""))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p),
            None => (hostport.to_string(), ""),
        }
    };
    let port = if port.is_empty() {
        default_port
    } else {
        port.parse().map_err(|_| format!("bad port `{port}`"))?
    };
    valid_host(&host).map(|h| (h, port))
}

fn valid_host(host: &str) -> Result<String, String> {
    let host = host.trim_end_matches('.');
    if host.is_empty() {
        return Err("no host".into());
    }
    if host
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_')))
    {
        return Err(format!("bad host `{host}`"));
    }
    Ok(host.to_string())
}

/// Is `ip` an address of the public internet?
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> bool {
        matches!(
            check_remote(url, RemotePolicy::default()),
            Err(SourceError::RefusedUrl { .. })
        )
    }

    #[test]
    fn private_and_local_remotes_are_refused() {
        for url in [
            "file:///etc",
            "http://github.com/a/b",
            "git://github.com/a/b",
            "https://127.0.0.1/a/b",
            "https://127.1.2.3:8443/a",
            "https://localhost/a/b",
            "https://169.254.169.254/latest/meta-data",
            "https://10.0.0.5/repo.git",
            "https://172.16.0.1/repo.git",
            "https://192.168.1.10/repo.git",
            "https://100.64.0.1/x",
            "https://0.0.0.0/x",
            "https://[::1]/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[64:ff9b::a9fe:a9fe]/x",
            "ssh://git@10.1.2.3/repo.git",
            "git@192.168.0.1:team/repo.git",
            "git@localhost:team/repo.git",
            "https://user:pw@127.0.0.1/x",
            "https://2130706433/x", // 127.0.0.1 written as a number
            "https:///nohost",
            "not a url",
        ] {
            assert!(refused(url), "{url} should be refused");
        }
    }

    #[test]
    fn public_addresses_pass_and_the_operator_can_allow_more() {
        assert!(check_remote("https://140.82.112.3/a/b", RemotePolicy::default()).is_ok());
        assert!(check_remote("ssh://git@[2606:4700::1]:22/a", RemotePolicy::default()).is_ok());
        let allow = RemotePolicy {
            allow_private: true,
        };
        assert!(check_remote("file:///tmp/x", allow).is_ok());
        assert!(check_remote("https://127.0.0.1/x", allow).is_ok());
    }

    #[test]
    fn refusals_never_show_credentials() {
        let e = check_remote("https://me:s3cret@10.0.0.1/x", RemotePolicy::default())
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn hosts_and_ports() {
        assert_eq!(
            host_of("https://github.com/a/b").unwrap(),
            ("github.com".into(), 443)
        );
        assert_eq!(
            host_of("https://x@git.example.org:8443/a").unwrap(),
            ("git.example.org".into(), 8443)
        );
        assert_eq!(
            host_of("git@github.com:a/b.git").unwrap(),
            ("github.com".into(), 22)
        );
        assert_eq!(host_of("https://[::1]:9/x").unwrap(), ("::1".into(), 9));
    }
}
