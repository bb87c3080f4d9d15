//! Outbound HTTP, for webhooks: one client for the process, no redirects, no proxies, a timeout,
//! and a guard against server-side request forgery. A merchant chooses the URL, so without the
//! guard a webhook could make this server call its own admin ports, the database's host or a
//! cloud metadata address. Names are resolved by the guard at each connection (not once at
//! registration), so a name that later points inward is refused too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

/// The first bytes of a receiver's answer that are kept for the delivery log.
pub const HEAD_BYTES: usize = 512;

/// Whether an address is on the public internet: not loopback, private (RFC 1918, unique local),
/// link-local, carrier-grade NAT, unspecified, multicast, broadcast or reserved for documentation.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            let v4_in = |hi: u16, lo: u16| {
                Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)
            };
            // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits: that decides.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return is_public_v4(v4_in(s[6], s[7]));
            }
            // 6to4 (2002::/16) carries an IPv4 address in its second and third groups.
            if s[0] == 0x2002 {
                return is_public_v4(v4_in(s[1], s[2]));
            }
            is_public_v6(v6)
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // 100.64.0.0/10, carrier-grade NAT: inside a provider's network.
        || (a == 100 && (64..128).contains(&b))
        // 192.0.0.0/24 (protocol assignments) and 198.18.0.0/15 (benchmarking).
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    !(ip.is_loopback()
        // ::/96, IPv4-compatible (deprecated; :: and ::1 too), and ::ffff:0:0:0/96 (SIIT).
        || s[..6] == [0; 6]
        || (s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0)
        // 64:ff9b:1::/48 (local NAT64), fec0::/10 (site-local), 100::/64 (discard), Teredo.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] == 0x100 && s[1..4] == [0; 3])
        || (s[0] == 0x2001 && s[1] == 0)
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        // 2001:db8::/32, documentation.
        || (ip.segments()[0] == 0x2001 && ip.segments()[1] == 0x0db8))
}

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// It is (or its name resolves to) an address that is not public.
    Private(IpAddr),
    /// Its name does not resolve.
    Unresolvable,
}

/// The addresses of a host (a name or an address literal), refused when any is not public and
/// private ones are not allowed: a name with one public and one private address is refused,
/// since the connection could go to either.
pub async fn resolve(
    host: &str,
    port: u16,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, Refused> {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => {
            match tokio::time::timeout(
                Duration::from_secs(5),
                tokio::net::lookup_host((host, port)),
            )
            .await
            {
                Ok(Ok(a)) => a.collect(),
                _ => return Err(Refused::Unresolvable),
            }
        }
    };
    if addrs.is_empty() {
        return Err(Refused::Unresolvable);
    }
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
            return Err(Refused::Private(bad.ip()));
        }
    }
    Ok(addrs)
}

/// The guard's refusal, as an error the HTTP client carries back to us.
#[derive(Debug)]
struct PrivateDestination;

impl std::fmt::Display for PrivateDestination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the address itself: the delivery log is the merchant's, and what an inside name
        // resolves to is not theirs to learn (the server's log has it).
        f.write_str("not a public address")
    }
}

impl std::error::Error for PrivateDestination {}

/// The client's resolver: every connection's name goes through `resolve`.
struct Guard {
    allow_private: bool,
}

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            match resolve(&host, 0, allow).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                Err(Refused::Private(ip)) => {
                    tracing::warn!(host, %ip, "webhook refused: the name resolves to a private address");
                    Err(Box::new(PrivateDestination) as _)
                }
                Err(Refused::Unresolvable) => Err(format!("{host} does not resolve").into()),
            }
        })
    }
}

/// What came of one POST.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The receiver's status, when it answered.
    pub status: Option<u16>,
    pub latency_ms: i64,
    /// Why there is no success, as a stable code: `private_address`, `unresolvable`, `timeout`,
    /// `connect`, `redirect` (3xx, never followed), `status` (not 2xx), `request`.
    pub error: Option<&'static str>,
    /// The first `HEAD_BYTES` of the answer's body (or the error's text), as text.
    pub head: String,
}

impl Answer {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// The process's outbound client.
pub struct Outbound {
    client: reqwest::Client,
    allow_private: bool,
}

impl Outbound {
    pub fn new(timeout: Duration, allow_private: bool) -> Outbound {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy from the environment would take the connection past the guard.
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .user_agent(concat!("sellable-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(std::sync::Arc::new(Guard { allow_private }))
            .pool_max_idle_per_host(8)
            .build()
            .expect("the webhook client's settings are valid");
        Outbound {
            client,
            allow_private,
        }
    }

    pub fn allow_private(&self) -> bool {
        self.allow_private
    }

    /// POSTs a JSON body; reads at most `HEAD_BYTES` of the answer.
    pub async fn post_json(&self, url: &str, headers: &[(&str, String)], body: Vec<u8>) -> Answer {
        let started = Instant::now();
        let elapsed = |s: Instant| s.elapsed().as_millis().min(i64::MAX as u128) as i64;
        // The resolver sees names only: an address literal is checked here.
        if let Ok(parsed) = reqwest::Url::parse(url) {
            if let Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) = parsed.host() {
                let host = parsed.host_str().unwrap_or_default();
                if let Err(Refused::Private(_)) = resolve(host, 0, self.allow_private).await {
                    return Answer {
                        status: None,
                        latency_ms: 0,
                        error: Some("private_address"),
                        head: PrivateDestination.to_string(),
                    };
                }
            }
        }
        let mut req = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let mut resp = match req.body(body).send().await {
            Ok(r) => r,
            Err(e) => {
                return Answer {
                    status: None,
                    latency_ms: elapsed(started),
                    error: Some(classify(&e)),
                    head: error_text(&e),
                }
            }
        };
        let status = resp.status();
        let mut head: Vec<u8> = Vec::new();
        let mut error = None;
        while head.len() < HEAD_BYTES {
            match resp.chunk().await {
                Ok(Some(chunk)) => head.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => {
                    // The status came: a body cut short does not undo it.
                    if e.is_timeout() && !status.is_success() {
                        error = Some("timeout");
                    }
                    break;
                }
            }
        }
        head.truncate(HEAD_BYTES);
        let error = error.or(if status.is_success() {
            None
        } else if status.is_redirection() {
            Some("redirect")
        } else {
            Some("status")
        });
        Answer {
            status: Some(status.as_u16()),
            latency_ms: elapsed(started),
            error,
            head: String::from_utf8_lossy(&head).into_owned(),
        }
    }
}

fn private_refusal(e: &reqwest::Error) -> Option<&PrivateDestination> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(p) = s.downcast_ref::<PrivateDestination>() {
            return Some(p);
        }
        source = s.source();
    }
    None
}

fn classify(e: &reqwest::Error) -> &'static str {
    if private_refusal(e).is_some() {
        "private_address"
    } else if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        let text = error_text(e);
        if text.contains("does not resolve") || text.contains("dns error") {
            "unresolvable"
        } else {
            "connect"
        }
    } else {
        "request"
    }
}

/// The error and its causes, one line.
fn error_text(e: &reqwest::Error) -> String {
    if let Some(p) = private_refusal(e) {
        return p.to_string();
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text.chars().take(HEAD_BYTES).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inward_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::10.0.0.5",
            "::169.254.169.254",
            "64:ff9b::a00:5",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:a00:1::1",
            "2002:7f00:1::1",
            "fec0::1",
            "100::1",
            "2001::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} must be refused");
        }
        for ip in [
            "1.1.1.1",
            "114.114.114.114",
            "2400:3200::1",
            "100.128.0.1",
            "64:ff9b::101:101",
            "2002:101:101::1",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[tokio::test]
    async fn a_literal_or_a_name_that_resolves_inward_is_refused_unless_allowed() {
        assert_eq!(
            resolve("127.0.0.1", 80, false).await,
            Err(Refused::Private("127.0.0.1".parse().unwrap()))
        );
        assert_eq!(
            resolve("[::1]", 80, false).await,
            Err(Refused::Private("::1".parse().unwrap()))
        );
        assert!(matches!(
            resolve("localhost", 80, false).await,
            Err(Refused::Private(_))
        ));
        assert!(resolve("127.0.0.1", 80, true).await.is_ok());
    }
}
