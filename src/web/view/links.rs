//! Where the domain's typed fixes (`sellable::Fix`) lead in the back office: the one place that
//! knows those pages' paths. Templates call `fix.link()`; the API puts the same link in
//! `fix_url`.

use crate::domain::kernel::scope::Role;
use crate::domain::sellable::Fix;
use crate::web::kit::paths;
use crate::web::view::link;

pub trait FixLink {
    /// The back-office path and query, empty when nothing there fixes it.
    fn link(&self) -> String;
}

/// Who can make a fix: an operator (a finding), store staff or the admin (a store's slots,
/// schedules and closures), or the merchant's admin alone (the catalog, stock, codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedBy {
    Operator,
    Store,
    Admin,
}

impl FixedBy {
    pub fn of(fix: &Fix) -> FixedBy {
        match fix {
            Fix::Finding { .. } => FixedBy::Operator,
            Fix::Schedule { .. }
            | Fix::Closure { .. }
            | Fix::Closures { .. }
            | Fix::Week { .. } => FixedBy::Store,
            Fix::Nothing
            | Fix::Product { .. }
            | Fix::SkuEdit { .. }
            | Fix::Stock { .. }
            | Fix::Codes { .. }
            | Fix::Batch { .. } => FixedBy::Admin,
        }
    }

    /// Whether someone of this role (as `Layout::role` names it) can make the fix.
    pub fn allows(self, role: Role) -> bool {
        matches!(
            (self, role),
            (FixedBy::Operator, Role::Operator)
                | (FixedBy::Admin, Role::MerchantAdmin)
                | (FixedBy::Store, Role::MerchantAdmin | Role::StoreStaff)
        )
    }

    /// The hook a page carries for it (`data-fixed-by`).
    pub fn as_str(self) -> &'static str {
        match self {
            FixedBy::Operator => "operator",
            FixedBy::Store => "store",
            FixedBy::Admin => "admin",
        }
    }
}

impl FixLink for Fix {
    fn link(&self) -> String {
        match self {
            Fix::Nothing => String::new(),
            Fix::Product { product_id } => paths::product(product_id),
            Fix::SkuEdit { sku_id } => paths::sku_edit(sku_id),
            Fix::Finding { finding_id } => paths::reconcile_finding(finding_id),
            Fix::Stock { sku_id } => paths::sku_stock(sku_id),
            Fix::Schedule { sku_id, store } => {
                link(&paths::service_schedule(sku_id), &[("store", store)])
            }
            Fix::Closure { closure_id, store } => {
                link(&paths::closure(closure_id), &[("store", store)])
            }
            Fix::Closures { store } => link(&paths::closures(), &[("store", store)]),
            Fix::Week { store, service } => {
                link(&paths::slots(), &[("store", store), ("service", service)])
            }
            Fix::Codes { sku_id } => format!("{}?sku_id={sku_id}", paths::codes()),
            Fix::Batch { batch_id } => paths::code_batch(batch_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_without_a_store_links_without_one() {
        let f = Fix::Schedule {
            sku_id: 7,
            store: String::new(),
        };
        assert_eq!(f.link(), "/admin/services/7/schedule");
        let f = Fix::Week {
            store: "acme/main".into(),
            service: "TEA CLASS".into(),
        };
        assert_eq!(f.link(), "/admin/slots?store=acme/main&service=TEA%20CLASS");
        assert_eq!(Fix::Nothing.link(), "");
    }
}
