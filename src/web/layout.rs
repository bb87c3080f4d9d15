//! What every back-office page shows around its content: who is signed in, the navigation for
//! their role, and flash messages. Labels live in templates/base.html.

use tower_sessions::Session;

use super::auth::CurrentUser;
use super::flash::{self, Flash};

#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub email: Option<String>,
    /// operator | merchant_admin | store_staff
    pub role: String,
    pub merchant_name: Option<String>,
    pub store_name: Option<String>,
    /// The first path segment after /admin ("" for the dashboard), to mark the active tab.
    pub section: String,
    pub flashes: Vec<Flash>,
    /// The Redis gate is off on this instance: requests are served from SQL alone.
    pub degraded: bool,
}

impl Layout {
    /// For pages outside the back office (login, errors).
    pub fn bare() -> Layout {
        Layout::default()
    }

    pub async fn new(user: &CurrentUser, session: &Session, path: &str) -> Layout {
        let u = &user.0;
        let section = path
            .trim_start_matches("/admin")
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        Layout {
            email: Some(u.email.clone()),
            role: u.role.clone(),
            merchant_name: u.merchant_name.clone(),
            store_name: u.store_name.clone(),
            section,
            flashes: flash::take(session).await,
            degraded: user.1,
        }
    }
}
