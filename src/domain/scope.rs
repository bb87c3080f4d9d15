//! Who is asking, and which rows they may see. Every query that reads tenant data takes a
//! [`Scope`], so forgetting the tenant filter is a type error rather than a data leak.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Operator,
    MerchantAdmin,
    StoreStaff,
}

impl Role {
    pub const ALL: [&'static str; 3] = ["operator", "merchant_admin", "store_staff"];

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "operator" => Some(Role::Operator),
            "merchant_admin" => Some(Role::MerchantAdmin),
            "store_staff" => Some(Role::StoreStaff),
            _ => None,
        }
    }
    /// Who corrects and unfreezes what reconciliation found: operators. A correction rewrites a
    /// balance against the ledger and an unfreeze puts a SKU or slot back on sale, so it stays
    /// with the people who run the platform; merchant admins see their own findings.
    pub fn resolves_findings(self) -> bool {
        matches!(self, Role::Operator)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Operator => "operator",
            Role::MerchantAdmin => "merchant_admin",
            Role::StoreStaff => "store_staff",
        }
    }
}

/// The rows a caller may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Operators: every merchant.
    All,
    /// Merchant admins, store staff and API keys: one merchant.
    Merchant(i64),
}

impl Scope {
    /// SQL fragment and bind value: `merchant_id` matches when scoped, anything when not.
    /// Bound as `($n = 0 OR col = $n)`-style by callers through [`Scope::merchant_filter`].
    pub fn merchant_filter(self) -> i64 {
        match self {
            Scope::All => 0,
            Scope::Merchant(id) => id,
        }
    }
}

/// Who did something, for audit rows and permission checks.
#[derive(Debug, Clone)]
pub struct Actor {
    pub label: String,
    pub role: Option<Role>,
    pub merchant_id: Option<i64>,
    pub store_id: Option<i64>,
    /// Where the action came from: the page path or API route.
    pub source: String,
    /// The client address of the request ('' for the CLI and jobs).
    pub ip: String,
}

impl Actor {
    /// May this actor correct or unfreeze a reconciliation finding? A signed-in user by role;
    /// the system (the CLI, jobs) always.
    pub fn may_resolve_findings(&self) -> bool {
        self.role.is_none_or(Role::resolves_findings)
    }

    pub fn scope(&self) -> Scope {
        match self.merchant_id {
            Some(m) => Scope::Merchant(m),
            None => Scope::All,
        }
    }

    /// The merchant whose catalog this actor may change, if any. Operators are read-mostly and
    /// store staff do not manage the catalog.
    pub fn catalog_writer(&self) -> Result<i64, super::DomainError> {
        match (self.role, self.merchant_id) {
            (Some(Role::MerchantAdmin), Some(m)) => Ok(m),
            // API keys carry no role: they act for their merchant.
            (None, Some(m)) => Ok(m),
            _ => Err(super::DomainError::Forbidden),
        }
    }

    pub fn system(label: &str) -> Actor {
        Actor {
            label: label.into(),
            role: None,
            merchant_id: None,
            store_id: None,
            source: "cli".into(),
            ip: String::new(),
        }
    }

    /// A background job (reservation expiry and the like).
    pub fn job(label: &str) -> Actor {
        Actor {
            source: "job".into(),
            ..Actor::system(label)
        }
    }
}

/// The address a throttle or cap counts by: an IPv4 address as it is, an IPv6 address by its /64
/// (one subscriber's network; a client there has 2^64 addresses to rotate through). Anything that
/// does not parse (an empty address from the CLI) counts as itself.
pub fn address_key(ip: &str) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        Ok(std::net::IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => ip.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::address_key;

    #[test]
    fn ipv6_clients_are_counted_by_their_64_prefix() {
        assert_eq!(address_key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(address_key("2001:db8:1:2:ffff::9"), "2001:db8:1:2::/64");
        assert_eq!(address_key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(address_key("192.0.2.7"), "192.0.2.7");
        assert_eq!(address_key(""), "");
    }
}
