//! What every back-office page shows around its content: who is signed in, the navigation for
//! their role, and flash messages. Labels live in the catalogues (`locales/`), asked for by templates/base.html.

use crate::domain::kernel::scope::Role;
use tower_sessions::Session;

use crate::web::kit::auth::CurrentUser;
use crate::web::kit::flash::{self, Flash};
use crate::web::kit::lang::Lang;

/// The back office's navigation tabs. A page's tab follows from its path, so no handler names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Section {
    #[default]
    None,
    Dashboard,
    Sellable,
    /// Orders and the payments they left to settle.
    Orders,
    /// Redeeming codes at the counter.
    Counter,
    /// Products and their SKUs' stock pages.
    Products,
    /// The merchant-wide stock report.
    Stock,
    /// The merchant's people and invitations.
    People,
    /// The merchant's stores and warehouses.
    Places,
    /// Slots, bookings, closures, staff and services' weekly schedules.
    Schedule,
    Reconcile,
    Codes,
    ApiKeys,
    Webhooks,
    Audit,
}

impl Section {
    pub fn of(path: &str) -> Section {
        let Some(rest) = path.strip_prefix("/admin") else {
            return Section::None;
        };
        match rest.trim_start_matches('/').split('/').next().unwrap_or("") {
            "" => Section::Dashboard,
            "sellable" => Section::Sellable,
            "orders" => Section::Orders,
            "counter" => Section::Counter,
            "products" | "skus" => Section::Products,
            "stock" => Section::Stock,
            "people" => Section::People,
            "places" | "stores" => Section::Places,
            "slots" | "bookings" | "closures" | "staff" | "services" => Section::Schedule,
            "reconcile" => Section::Reconcile,
            "codes" => Section::Codes,
            "api-keys" => Section::ApiKeys,
            "webhooks" => Section::Webhooks,
            "audit" => Section::Audit,
            _ => Section::None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub email: Option<String>,
    /// Who reads the page; none on pages outside the back office (sign-in, errors). Templates ask
    /// through [`Layout::is_operator`] and its siblings, never by the role's text.
    pub role: Option<Role>,
    pub merchant_name: Option<String>,
    pub store_name: Option<String>,
    /// The navigation tab the page belongs to, to mark it active.
    pub section: Section,
    pub flashes: Vec<Flash>,
    /// The Redis gate is off on this instance: requests are served from SQL alone.
    pub degraded: bool,
    /// The page's language: `<html lang>` and every label.
    pub lang: Lang,
    /// The path and query the language switcher comes back to.
    pub here: String,
    /// After a fix link from Not sellable: the SKUs still not sellable, and the list to go back to.
    pub back_to_sellable: Option<(i64, String)>,
}

impl Layout {
    /// Whether a reason's fix gets a link here: the reader can make it, and it is not this very
    /// page (no link leads from a page to itself).
    pub fn links_fix(&self, fix: &crate::domain::sellable::Fix) -> bool {
        use crate::web::view::links::{FixLink, FixedBy};
        let path = |s: &str| s.split('?').next().unwrap_or("").to_string();
        !fix.is_nothing()
            && self.role.is_some_and(|r| FixedBy::of(fix).allows(r))
            && path(&fix.link()) != path(&self.here)
    }

    /// When the reader cannot make a fix, who can: said instead of a link (empty otherwise, and
    /// for a fix on this very page).
    pub fn fixed_by(&self, fix: &crate::domain::sellable::Fix, merchant: &str) -> String {
        use crate::web::view::links::FixedBy;
        if fix.is_nothing() || self.role.is_some_and(|r| FixedBy::of(fix).allows(r)) {
            return String::new();
        }
        crate::messages::fixed_by(FixedBy::of(fix).as_str(), merchant)
    }

    /// Who can make a fix, as a stable hook (`operator`, `store`, `admin`).
    pub fn fixer(&self, fix: &crate::domain::sellable::Fix) -> &'static str {
        crate::web::view::links::FixedBy::of(fix).as_str()
    }

    pub fn is_operator(&self) -> bool {
        self.role == Some(Role::Operator)
    }

    pub fn is_merchant_admin(&self) -> bool {
        self.role == Some(Role::MerchantAdmin)
    }

    pub fn is_store_staff(&self) -> bool {
        self.role == Some(Role::StoreStaff)
    }

    /// For pages outside the back office (login, errors).
    pub fn bare() -> Layout {
        Layout {
            lang: crate::web::kit::lang::current(),
            ..Layout::default()
        }
    }

    pub async fn new(user: &CurrentUser, session: &Session, path: &str, lang: Lang) -> Layout {
        let u = &user.account;
        let section = Section::of(path);
        Layout {
            email: Some(u.email.clone()),
            role: Some(u.role()),
            merchant_name: u.merchant_name.clone(),
            store_name: u.store_name.clone(),
            section,
            flashes: flash::take(session).await,
            degraded: user.gate_degraded,
            lang,
            here: path.to_string(),
            back_to_sellable: None,
        }
    }
}
