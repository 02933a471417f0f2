//! Which hosts the proxy lets through: the rules, the names' addresses,
//! and the addresses a wildcard may not reach.

use std::collections::HashSet;
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use crate::rules::{HostPattern, HostRule};

/// Where the allowlist is changed; every refusal names it.
const WHERE: &str = "policy.toml [approval.network] allow_hosts";

/// Turns a host name into addresses.
///
/// A trait so that tests can give addresses without DNS. It may block:
/// the proxy calls it on tokio's blocking pool.
pub trait Resolve: Send + Sync + 'static {
    fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        Ok((host, 0).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

impl<F> Resolve for F
where
    F: Fn(&str) -> io::Result<Vec<IpAddr>> + Send + Sync + 'static,
{
    fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        self(host)
    }
}

/// The hosts the proxy lets through, and how their names are resolved.
pub struct Allowlist {
    rules: Vec<HostRule>,
    resolver: Arc<dyn Resolve>,
}

impl fmt::Debug for Allowlist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Allowlist").field("rules", &self.rules).finish_non_exhaustive()
    }
}

/// Why the proxy did not let a request through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// One sentence saying why, naming where the allowlist is changed when
    /// that is the cause.
    pub reason: String,
    pub kind: RefusalKind,
}

/// Whether a refusal is the allowlist's or the name's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// The allowlist does not let the host through (403).
    Forbidden,
    /// The host is allowed but its name does not resolve (502).
    Unresolved,
}

impl Refusal {
    fn forbidden(reason: String) -> Self {
        Self { reason, kind: RefusalKind::Forbidden }
    }

    fn unresolved(reason: String) -> Self {
        Self { reason, kind: RefusalKind::Unresolved }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Refusal {}

impl Allowlist {
    /// An allowlist that resolves names with the system's resolver.
    pub fn new(rules: Vec<HostRule>) -> Self {
        Self::with_resolver(rules, SystemResolver)
    }

    pub fn with_resolver(rules: Vec<HostRule>, resolver: impl Resolve) -> Self {
        Self { rules, resolver: Arc::new(resolver) }
    }

    /// Decides on a request for `host:port` and returns the addresses to
    /// connect to: those, and only those, were checked.
    ///
    /// An address is let through only when listed exactly. A name listed
    /// exactly goes wherever it resolves (`localhost` is meant to be
    /// local); a name allowed only by a wildcard must resolve to public
    /// addresses alone, or `*.example.com` plus a record pointing at
    /// 169.254.169.254 would reach the cloud's metadata service.
    pub async fn check(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        let host = bare(host);
        let target = host_port(&host, port);
        if self.rules.is_empty() {
            return Err(Refusal::forbidden(format!(
                "{target} is refused: the sandbox allows no network ({WHERE} is empty)"
            )));
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            if self.rules.iter().any(|r| names_address(&r.host, ip, port)) {
                return Ok(vec![SocketAddr::new(ip, port)]);
            }
            return Err(Refusal::forbidden(format!(
                "{target} is not in the sandbox's network allowlist ({WHERE}), where an address must be listed exactly"
            )));
        }
        let matching: Vec<&HostRule> = self.rules.iter().filter(|r| r.host.matches(&host, port)).collect();
        let Some(first) = matching.first() else {
            return Err(Refusal::forbidden(format!("{target} is not in the sandbox's network allowlist ({WHERE})")));
        };
        let ips = self.resolve(&host).await?;
        if !matching.iter().any(|r| r.host.is_exact())
            && let Some(ip) = ips.iter().find(|ip| is_internal(**ip))
        {
            return Err(Refusal::forbidden(format!(
                "{host} resolves to {ip}, an internal address, and only the wildcard {} ({}) allows it; \
                 list {host} itself in {WHERE} to reach it",
                first.host, first.source
            )));
        }
        Ok(ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect())
    }

    /// The addresses of `host`, in the resolver's order of preference.
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, Refusal> {
        let resolver = Arc::clone(&self.resolver);
        let name = host.to_string();
        let mut ips = match tokio::task::spawn_blocking(move || resolver.resolve(&name)).await {
            Ok(Ok(ips)) => ips,
            Ok(Err(e)) => return Err(Refusal::unresolved(format!("{host} does not resolve: {e}"))),
            Err(e) => return Err(Refusal::unresolved(format!("resolving {host} failed: {e}"))),
        };
        let mut seen = HashSet::new();
        ips.retain(|ip| seen.insert(*ip));
        if ips.is_empty() {
            return Err(Refusal::unresolved(format!("{host} resolves to no address")));
        }
        Ok(ips)
    }
}

/// `host` as the rules compare it: lower case, no trailing dot, no brackets.
pub(super) fn bare(host: &str) -> String {
    host.trim_end_matches('.').trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// `host:port`, with an IPv6 address in brackets.
pub(super) fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

/// Whether `pattern` lists `ip` exactly (compared as addresses, so that
/// `[::1]` and `[0::1]` are one).
fn names_address(pattern: &HostPattern, ip: IpAddr, port: u16) -> bool {
    match pattern {
        HostPattern::Exact { name, port: only } => {
            only.is_none_or(|p| p == port) && name.trim_matches(['[', ']']).parse::<IpAddr>().is_ok_and(|n| n == ip)
        }
        HostPattern::Subdomains { .. } => false,
    }
}

/// Whether `ip` reaches this machine, its network or its provider's
/// internals rather than the public internet.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => internal_v4(v4),
            None => internal_v6(v6),
        },
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        // All of 0.0.0.0/8, not only 0.0.0.0: Linux connects 0.0.0.0 to
        // local services, and the rest of "this network" is nowhere public.
        || a == 0
        // Carrier-grade NAT (RFC 6598): the provider's side of the network.
        || (a == 100 && (b & 0xc0) == 64)
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        // Unique local, fc00::/7.
        || (first & 0xfe00) == 0xfc00
        // Link-local, fe80::/10.
        || (first & 0xffc0) == 0xfe80
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allowlist whose names resolve from a fixed table.
    fn allowlist(entries: &[&str], table: &'static [(&'static str, &'static str)]) -> Allowlist {
        let rules =
            entries.iter().map(|e| HostRule { host: HostPattern::parse(e).unwrap(), source: "test".into() }).collect();
        Allowlist::with_resolver(rules, move |host: &str| {
            let ips: Vec<IpAddr> =
                table.iter().filter(|(name, _)| *name == host).map(|(_, ip)| ip.parse().unwrap()).collect();
            if ips.is_empty() { Err(io::Error::new(io::ErrorKind::NotFound, "no such name")) } else { Ok(ips) }
        })
    }

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn internal_addresses_are_recognised_in_every_spelling() {
        let internal = [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "100.64.0.1",
            "100.127.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
        ];
        let public = [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "100.63.255.255",
            "2606:2800:220:1::1",
            "fec0::1",
        ];
        for ip in internal {
            assert!(is_internal(ip.parse().unwrap()), "{ip} is internal");
        }
        for ip in public {
            assert!(!is_internal(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[tokio::test]
    async fn an_empty_allowlist_refuses_everything() {
        let allow = allowlist(&[], &[("localhost", "127.0.0.1")]);
        for (host, port) in [("localhost", 80), ("127.0.0.1", 443), ("example.com", 443)] {
            let refusal = allow.check(host, port).await.unwrap_err();
            assert_eq!(refusal.kind, RefusalKind::Forbidden);
            assert!(refusal.reason.contains("allows no network"), "{refusal}");
        }
    }

    #[tokio::test]
    async fn addresses_pass_only_when_listed_exactly() {
        let allow = allowlist(&["localhost", "*.0.0.1", "[::1]:8080"], &[("localhost", "127.0.0.1")]);
        let refusal = allow.check("127.0.0.1", 80).await.unwrap_err();
        assert!(refusal.reason.contains("127.0.0.1:80 is not in the sandbox's network allowlist"), "{refusal}");
        assert_eq!(allow.check("[0::1]", 8080).await, Ok(addrs(&["[::1]:8080"])));
        assert!(allow.check("::1", 8081).await.is_err());
        assert!(allow.check("::ffff:127.0.0.1", 80).await.is_err());
        let allow = allowlist(&["127.0.0.1"], &[]);
        assert_eq!(allow.check("127.0.0.1", 80).await, Ok(addrs(&["127.0.0.1:80"])));
    }

    #[tokio::test]
    async fn names_listed_exactly_go_wherever_they_resolve() {
        let allow = allowlist(&["localhost", "db.corp:5432"], &[("localhost", "127.0.0.1"), ("db.corp", "10.0.0.5")]);
        assert_eq!(allow.check("LocalHost.", 9).await, Ok(addrs(&["127.0.0.1:9"])));
        assert_eq!(allow.check("db.corp", 5432).await, Ok(addrs(&["10.0.0.5:5432"])));
        let refusal = allow.check("db.corp", 22).await.unwrap_err();
        assert!(refusal.reason.contains("db.corp:22 is not in"), "{refusal}");
        assert!(allow.check("evil.com", 443).await.unwrap_err().reason.contains(WHERE));
    }

    #[tokio::test]
    async fn wildcards_reach_public_addresses_only() {
        const TABLE: &[(&str, &str)] = &[
            ("api.example.com", "93.184.216.34"),
            ("api.example.com", "2606:2800:220:1::1"),
            ("api.example.com", "93.184.216.34"),
            ("meta.example.com", "93.184.216.34"),
            ("meta.example.com", "169.254.169.254"),
            ("mapped.example.com", "::ffff:10.0.0.1"),
            ("x.localhost", "127.0.0.1"),
            ("named.example.com", "10.0.0.1"),
        ];
        let allow = allowlist(&["*.example.com", "*.localhost", "named.example.com"], TABLE);
        let found = allow.check("api.example.com", 443).await;
        assert_eq!(found, Ok(addrs(&["93.184.216.34:443", "[2606:2800:220:1::1]:443"])));
        for host in ["meta.example.com", "mapped.example.com", "x.localhost"] {
            let refusal = allow.check(host, 443).await.unwrap_err();
            assert_eq!(refusal.kind, RefusalKind::Forbidden);
            assert!(refusal.reason.contains("an internal address") && refusal.reason.contains("only the wildcard"));
        }
        assert_eq!(allow.check("named.example.com", 443).await, Ok(addrs(&["10.0.0.1:443"])));
        assert!(allow.check("example.com", 443).await.is_err());
    }

    #[tokio::test]
    async fn an_allowed_name_that_does_not_resolve_is_not_a_policy_refusal() {
        let refusal = allowlist(&["*.example.com"], &[]).check("gone.example.com", 443).await.unwrap_err();
        assert_eq!(refusal.kind, RefusalKind::Unresolved);
        assert!(refusal.reason.starts_with("gone.example.com does not resolve"), "{refusal}");
    }
}
