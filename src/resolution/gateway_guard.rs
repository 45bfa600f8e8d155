//! [`PublicOnly`]: keeps CCIP-Read gateway requests off the server's own networks.
//!
//! A resolver names its gateways, so anyone who deploys one can make this server send requests
//! to the URLs they choose. Unless the operator allows it (`resolution.gateway_private_addresses`,
//! for local gateways), a gateway must be on a public address: a host name that resolves only to
//! loopback, private, link-local, shared (CGNAT) or unspecified addresses is refused at
//! resolution (so a name that resolves differently the second time cannot slip through), and so
//! is such an address written in the URL or in a redirect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `ip` is reachable on the public internet (the only kind of gateway allowed by
/// default).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    let shared = a == 100 && (64..128).contains(&b);
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || shared
        || a == 0)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    let unique_local = first & 0xfe00 == 0xfc00;
    let link_local = first & 0xffc0 == 0xfe80;
    !(ip.is_loopback() || ip.is_unspecified() || ip.is_multicast() || unique_local || link_local)
}

/// Whether a URL's host is an address literal that is not public.
pub fn is_private_literal(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return true };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => !is_public(ip),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// A DNS resolver that returns only public addresses.
#[derive(Debug, Default)]
pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(format!("{host} has no public address").into());
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_public_from_private() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(is_private_literal(&url("http://127.0.0.1:8080/x")));
        assert!(is_private_literal(&url("http://[::1]/x")));
        assert!(is_private_literal(&url("http://localhost/x")));
        assert!(!is_private_literal(&url("https://gateway.example/x")));
        assert!(!is_private_literal(&url("http://8.8.8.8/x")));
    }
}
