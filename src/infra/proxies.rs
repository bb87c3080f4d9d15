//! The reverse proxies a deployment trusts (`--trusted-proxies`): a list of networks, parsed once
//! from the setting. What a trusted proxy's forwarding headers say is read by the web's
//! `kit::client_addr`; this module knows addresses only, not HTTP.

use std::net::IpAddr;
use std::sync::Arc;

use ipnet::IpNet;

/// The proxies whose forwarding headers are believed. Empty: none (the default).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<Vec<IpNet>>);

impl TrustedProxies {
    /// A comma-separated list of CIDRs or bare addresses (`10.0.0.0/8, 127.0.0.1, ::1`).
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        let mut nets = Vec::new();
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let net = part
                .parse::<IpNet>()
                .or_else(|_| part.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("not an address or CIDR: {part:?}"))?;
            nets.push(net);
        }
        Ok(TrustedProxies(Arc::new(nets)))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(&ip))
    }
}

/// An IPv4 address written as IPv6 (`::ffff:192.0.2.7`) is the IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}
