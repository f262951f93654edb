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
//! The check resolves the host once and every address must be public; the
//! clone then connects to those addresses, never to a second resolution
//! (DNS rebinding): over https the HTTP client is given them for the host
//! and resolves any other name (a redirect's) through a resolver that
//! refuses private answers; over ssh the URL names the checked address and
//! the host key is still looked up under the host's name.
//!
//! An address is public when it is global unicast and in no special-purpose
//! block of the IANA registries (the `iprfc` crate's copy of them); an IPv6
//! address that carries an IPv4 one (IPv4-mapped and -compatible, SIIT,
//! NAT64, 6to4, Teredo) is judged by the IPv4 address it reaches.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use crate::SourceError;

/// What the operator allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemotePolicy {
    /// Any scheme (file://, http://, git://) and any address.
    pub allow_private: bool,
}

/// A remote URL that passed the policy, with the addresses it was checked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRemote {
    pub url: String,
    /// The host as written (lower case, no brackets).
    pub host: String,
    pub port: u16,
    /// The addresses the host had when checked: a clone connects to these
    /// only. Empty when the operator allows any remote (no pinning).
    pub addrs: Vec<SocketAddr>,
}

impl CheckedRemote {
    /// A remote taken as it is (the operator allows private URLs, or a local path).
    pub fn unchecked(url: &str) -> CheckedRemote {
        CheckedRemote {
            url: url.to_string(),
            host: String::new(),
            port: 0,
            addrs: Vec::new(),
        }
    }

    /// Is the connection pinned to the checked addresses?
    pub fn pinned(&self) -> bool {
        !self.addrs.is_empty()
    }
}

/// Refuse `url` unless the policy allows it (see the module docs).
pub fn check_remote(url: &str, policy: RemotePolicy) -> Result<CheckedRemote, SourceError> {
    if policy.allow_private {
        return Ok(CheckedRemote::unchecked(url));
    }
    let shown = crate::redact(url);
    let refuse = |why: String| SourceError::RefusedUrl {
        url: shown.clone(),
        why,
    };
    let (host, port) = host_of(url).map_err(refuse)?;
    let addrs = public_addrs(&host, port).map_err(refuse)?;
    Ok(CheckedRemote {
        url: url.to_string(),
        host,
        port,
        addrs,
    })
}

/// Every address of `host` (a name or an address literal), each public.
pub fn public_addrs(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if let Some(a) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(format!(
            "{host} is a private, loopback or link-local address ({})",
            a.ip()
        ));
    }
    Ok(addrs)
}

/// The host and port of an https, ssh or scp-like URL.
pub(crate) fn host_of(url: &str) -> Result<(String, u16), String> {
    let (span, port) = host_span(url)?;
    valid_host(&url[span].to_ascii_lowercase()).map(|h| (h, port))
}

/// Where the host is in `url` (bytes; an IPv6 literal without its
/// brackets) and the port it names or its scheme's. The one reading of a
/// remote's authority: what is checked ([`host_of`]) and what is connected
/// to (`pin::ssh_target` writes the checked address over this span) agree.
pub(crate) fn host_span(url: &str) -> Result<(std::ops::Range<usize>, u16), String> {
    let lower = url.to_ascii_lowercase();
    let (start, default_port) = if lower.starts_with("https://") {
        ("https://".len(), 443)
    } else if lower.starts_with("ssh://") {
        ("ssh://".len(), 22)
    } else if lower.contains("://") {
        let scheme = lower.split("://").next().unwrap_or("");
        return Err(format!(
            "only https:// and ssh:// remotes are allowed, not {scheme}://"
        ));
    } else if let Some((userhost, _path)) = lower.split_once(':') {
        // scp-like: user@host:path
        let at = userhost.rfind('@').map_or(0, |a| a + 1);
        return Ok((at..userhost.len(), 22));
    } else {
        return Err("not a URL".into());
    };
    let rest = &lower[start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_start = start + authority.rfind('@').map_or(0, |a| a + 1);
    let hostport = &lower[host_start..start + authority.len()];
    let (span, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let close = v6
            .find(']')
            .ok_or_else(|| "unclosed [ in the host".to_string())?;
        let after = &v6[close + 1..];
        (
            host_start + 1..host_start + 1 + close,
            after.strip_prefix(':').unwrap_or(""),
        )
    } else {
        match hostport.rfind(':') {
            Some(c) => (host_start..host_start + c, &hostport[c + 1..]),
            None => (host_start..host_start + hostport.len(), ""),
        }
    };
    let port = if port.is_empty() {
        default_port
    } else {
        port.parse().map_err(|_| format!("bad port `{port}`"))?
    };
    Ok((span, port))
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
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(reached) => reached.iter().all(|v4| is_public_v4(*v4)),
            None => is_public_v6(v6),
        },
    }
}

/// In a special-purpose block: the IANA IPv4 and IPv6 special-purpose
/// registries (`iprfc`'s RFC 6890 view of them) and IPv4 multicast.
fn special(ip: IpAddr) -> bool {
    iprfc::RFC6890.contains(&ip) || iprfc::RFC3171.contains(&ip)
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    !special(IpAddr::V4(ip))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    // global unicast is 2000::/3; nothing else is routed on the internet
    (ip.segments()[0] & 0xe000) == 0x2000 && !special(IpAddr::V6(ip))
}

/// The IPv4 addresses an IPv6 address leads to, for the forms that carry
/// one: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
/// SIIT (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`, and the local-use
/// `64:ff9b:1::/48`, taken as a private network), 6to4 (`2002:AABB:CCDD::/48`)
/// and Teredo (`2001:0::/32`: its server and, inverted, its client).
fn embedded_v4(ip: Ipv6Addr) -> Option<Vec<Ipv4Addr>> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) {
        // `::` and `::1` are their own (unspecified, loopback): as IPv4 0.0.0.0/8, private too
        return Some(vec![v4(s[6], s[7])]);
    }
    if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        return Some(vec![v4(s[6], s[7])]);
    }
    if s[0] == 0x64 && s[1] == 0xff9b {
        if s[2..6] == [0; 4] {
            return Some(vec![v4(s[6], s[7])]);
        }
        if s[2] == 1 {
            return Some(vec![Ipv4Addr::new(10, 0, 0, 0)]);
        }
    }
    if s[0] == 0x2002 {
        return Some(vec![v4(s[1], s[2])]);
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(vec![v4(s[2], s[3]), v4(!s[6], !s[7])]);
    }
    None
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
            "https://[64:ff9b:1::a9fe:a9fe]/x", // NAT64, local use
            "https://[2002:a9fe:a9fe::1]/x",    // 6to4 of 169.254.169.254
            "https://[2002:7f00:1::]/x",        // 6to4 of 127.0.0.1
            "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x", // Teredo, client 10.0.0.1
            "https://[2001:0:a00:1::1]/x",      // Teredo, server 10.0.0.1
            "https://[::a9fe:a9fe]/x",          // IPv4-compatible
            "https://[::ffff:0:a9fe:a9fe]/x",   // SIIT
            "https://[::ffff:a9fe:a9fe]/x",     // IPv4-mapped, in hex
            "https://[::]/x",
            "https://[2001:db8::1]/x", // documentation
            "https://[3fff::1]/x",     // documentation (RFC 9637)
            "https://[100::1]/x",      // discard
            "https://[ff02::1]/x",     // multicast
            "https://[4000::1]/x",     // outside global unicast
            "https://224.0.0.1/x",
            "https://192.0.0.8/x",
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
        // transition forms of public IPv4 addresses are public
        assert!(is_public("2002:8c52:7003::1".parse().unwrap()));
        assert!(is_public("::ffff:140.82.112.3".parse().unwrap()));
        assert!(is_public("64:ff9b::8c52:7003".parse().unwrap()));
        assert!(is_public("2a00:1450:4001:81a::200e".parse().unwrap()));
        // the checked addresses are kept: a clone connects to them only
        let c = check_remote("https://140.82.112.3:8443/a/b", RemotePolicy::default()).unwrap();
        assert_eq!(c.addrs, vec!["140.82.112.3:8443".parse().unwrap()]);
        assert!(c.pinned());
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
