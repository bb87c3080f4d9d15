//! The address a request came from, for the audit trail, the throttles and the per-address caps.
//!
//! By default it is the TCP peer. Behind a reverse proxy the peer is the proxy, and every customer
//! would share its address (one store's whole online booking stopping at the per-address cap). So
//! the deployment names its proxies (`SELLABLE_TRUSTED_PROXIES`, CIDRs), and only from those peers
//! is `Forwarded` (RFC 7239) or else `X-Forwarded-For` read: walking the chain from the right, the
//! first address that is not a trusted proxy is the client. A header from any other peer is the
//! client's own word and is ignored, so nobody can pick the address they are counted under.
//! Parsing: `ipnet` for the CIDRs, `forwarded-header-value` for both headers.

use std::net::{IpAddr, SocketAddr};

use std::convert::Infallible;

use crate::infra::proxies::{canonical, TrustedProxies};
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};
use forwarded_header_value::ForwardedHeaderValue;

/// The client's address: the peer, or, when the peer is a trusted proxy, the right-most
/// address of its forwarding chain that is not a trusted proxy. A chain of trusted proxies
/// only gives its left-most; a header that does not parse is ignored (the peer counts).
pub fn client(proxies: &TrustedProxies, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    let peer = canonical(peer);
    if !proxies.trusts(peer) {
        return peer;
    }
    let Some(chain) = chain(headers) else {
        return peer;
    };
    let mut last = peer;
    for ip in chain.iter().rev().map(|ip| canonical(*ip)) {
        if !proxies.trusts(ip) {
            return ip;
        }
        last = ip;
    }
    last
}

/// The forwarding chain, left (client) to right (nearest proxy): `Forwarded` when present, else
/// `X-Forwarded-For`; several header lines are one list in order.
fn chain(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    let joined = |name: &str| -> Option<String> {
        let values: Vec<&str> = headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        (!values.is_empty()).then(|| values.join(","))
    };
    let parsed = if let Some(v) = joined("forwarded") {
        ForwardedHeaderValue::from_forwarded(&v).ok()?
    } else {
        ForwardedHeaderValue::from_x_forwarded_for(&joined("x-forwarded-for")?).ok()?
    };
    // An element without an address (`for=unknown`, an obfuscated name) ends what can be known:
    // the chain is read up to it from the right.
    let all: Vec<Option<IpAddr>> = parsed.iter().map(|s| s.forwarded_for_ip()).collect();
    let known: Vec<IpAddr> = all
        .iter()
        .rev()
        .map_while(|ip| *ip)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!known.is_empty()).then_some(known)
}

/// The client's address of a request: its peer (connection info) read through the trusted
/// proxies the router put in its extensions. None when the server gave no connection info.
pub fn of(extensions: &Extensions, headers: &HeaderMap) -> Option<IpAddr> {
    let peer = extensions.get::<ConnectInfo<SocketAddr>>()?.0.ip();
    Some(match extensions.get::<TrustedProxies>() {
        Some(t) if !t.is_empty() => client(t, peer, headers),
        _ => canonical(peer),
    })
}

/// The public pages' rate limit counts by this address (an IPv6 client by its /64), not by the
/// TCP peer that `tower_governor`'s own extractors see.
#[derive(Debug, Clone, Copy)]
pub struct ClientKey;

impl tower_governor::key_extractor::KeyExtractor for ClientKey {
    type Key = String;

    fn extract<T>(
        &self,
        req: &axum::http::Request<T>,
    ) -> Result<Self::Key, tower_governor::GovernorError> {
        of(req.extensions(), req.headers())
            .map(|ip| crate::domain::kernel::scope::address_key(&ip.to_string()))
            .ok_or(tower_governor::GovernorError::UnableToExtractKey)
    }
}

/// The address the request came from, for the audit trail, the throttles and the caps: the TCP
/// peer, or behind a trusted reverse proxy the client it forwards for (see the module). Empty when
/// the server was not started with connection info (a router driven directly in a test).
#[derive(Debug, Clone, Default)]
pub struct ClientIp(pub String);

impl ClientIp {
    pub fn of(parts: &Parts) -> ClientIp {
        ClientIp(
            of(&parts.extensions, &parts.headers)
                .map(|ip| ip.to_string())
                .unwrap_or_default(),
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp::of(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn without_trusted_proxies_the_peer_counts_whatever_the_headers_say() {
        let t = TrustedProxies::parse("").unwrap();
        let h = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(client(&t, ip("198.51.100.1"), &h), ip("198.51.100.1"));
    }

    #[test]
    fn an_untrusted_peers_forwarding_header_is_ignored() {
        let t = TrustedProxies::parse("10.0.0.0/8").unwrap();
        let h = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(client(&t, ip("198.51.100.1"), &h), ip("198.51.100.1"));
    }

    #[test]
    fn the_right_most_untrusted_address_of_the_chain_is_the_client() {
        let t = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
        // The client wrote its own "1.1.1.1" first; the proxy appended what it saw.
        let h = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")]);
        assert_eq!(client(&t, ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // Several header lines are one list.
        let h = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(client(&t, ip("10.1.2.3"), &h), ip("203.0.113.9"));
    }

    #[test]
    fn forwarded_is_read_before_x_forwarded_for_and_ipv6_is_unbracketed() {
        let t = TrustedProxies::parse("::1").unwrap();
        let h = headers(&[
            (
                "forwarded",
                "for=\"[2001:db8::7]:4711\";proto=https, for=10.0.0.2",
            ),
            ("x-forwarded-for", "198.51.100.77"),
        ]);
        // 10.0.0.2 is not trusted here: it is the right-most untrusted hop.
        assert_eq!(client(&t, ip("::1"), &h), ip("10.0.0.2"));
        let t = TrustedProxies::parse("::1, 10.0.0.0/8").unwrap();
        assert_eq!(client(&t, ip("::1"), &h), ip("2001:db8::7"));
    }

    #[test]
    fn a_header_that_does_not_parse_or_hides_the_client_leaves_the_peer_or_the_last_known_hop() {
        let t = TrustedProxies::parse("127.0.0.0/8").unwrap();
        let h = headers(&[("x-forwarded-for", "not an address")]);
        assert_eq!(client(&t, ip("127.0.0.1"), &h), ip("127.0.0.1"));
        let h = headers(&[("forwarded", "for=unknown, for=127.0.0.5")]);
        assert_eq!(client(&t, ip("127.0.0.1"), &h), ip("127.0.0.5"));
        let h = headers(&[("x-forwarded-for", "::ffff:203.0.113.9")]);
        assert_eq!(client(&t, ip("::ffff:127.0.0.1"), &h), ip("203.0.113.9"));
    }

    #[test]
    fn a_list_with_a_typo_is_refused_by_name() {
        let e = TrustedProxies::parse("10.0.0.0/8, 10.0.0.300").unwrap_err();
        assert!(e.contains("10.0.0.300"), "{e}");
    }
}
