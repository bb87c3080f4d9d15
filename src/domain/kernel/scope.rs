//! Who is asking, and which rows they may see. Every query that reads tenant data takes a
//! [`Scope`] and writes its tenant condition with [`Scope::filter`] (bound to [`Scope::bind`]):
//! a function cannot reach a merchant's rows without one, a `Scope` holds a [`MerchantId`] (not a
//! store's id or a bare number), and a scope taken but never used is an unused variable, which
//! the CI's `clippy -D warnings` refuses. There is no "0 means every merchant" in any SQL string.

use serde::{Deserialize, Serialize};

use crate::domain::{MerchantId, StoreId};

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
    Merchant(MerchantId),
}

impl Scope {
    /// The tenant filter on `col` as the query's parameter `$n`, to be bound to [`Scope::bind`]:
    /// `col = $n` for one merchant, a condition that always holds for operators. Written per
    /// case rather than as `($n IS NULL OR col = $n)` so that the planner can use the indexes;
    /// `$n` is named either way so that the binds line up.
    pub fn filter(self, col: &str, n: usize) -> String {
        match self {
            Scope::Merchant(_) => format!("{col} = ${n}"),
            Scope::All => format!("${n} IS NULL"),
        }
    }
    /// The value of [`Scope::filter`]'s parameter.
    pub fn bind(self) -> Option<MerchantId> {
        self.merchant()
    }
    /// The one merchant this scope is limited to, if any.
    pub fn merchant(self) -> Option<MerchantId> {
        match self {
            Scope::All => None,
            Scope::Merchant(m) => Some(m),
        }
    }
    /// An operator's scope narrowed to one merchant when a filter names one; anyone else's scope
    /// stays their own merchant whatever the filter says.
    pub fn narrowed(self, merchant: Option<MerchantId>) -> Scope {
        match (self, merchant) {
            (Scope::All, Some(m)) => Scope::Merchant(m),
            (scope, _) => scope,
        }
    }
    /// Whether rows of merchant `m` are visible in this scope.
    pub fn sees(self, m: MerchantId) -> bool {
        self.merchant().is_none_or(|own| own == m)
    }
}

/// Who did something, for audit rows and permission checks.
#[derive(Debug, Clone)]
pub struct Actor {
    pub label: String,
    pub role: Option<Role>,
    pub merchant_id: Option<MerchantId>,
    pub store_id: Option<StoreId>,
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
    pub fn catalog_writer(&self) -> Result<MerchantId, crate::domain::DomainError> {
        match (self.role, self.merchant_id) {
            (Some(Role::MerchantAdmin), Some(m)) => Ok(m),
            // API keys carry no role: they act for their merchant.
            (None, Some(m)) => Ok(m),
            _ => Err(crate::domain::DomainError::Forbidden),
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
