//! Merchants and where they operate: stores (with a timezone) and warehouses (with a priority).

use crate::domain::{MerchantId, StoreId};
use crate::i18n::Lang;
use chrono_tz::Tz;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, Errors, NAME_MAX};
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::db::Db;
use crate::messages;

#[derive(Debug, Clone, FromRow)]
pub struct Merchant {
    pub id: MerchantId,
    pub slug: String,
    pub name: String,
    pub currency: String,
    pub timezone: String,
    /// The default language of its people's accounts.
    #[sqlx(try_from = "String")]
    pub language: Lang,
}

impl Merchant {
    pub fn tz(&self) -> Tz {
        self.timezone.parse().unwrap_or(chrono_tz::UTC)
    }
}

#[derive(Debug, Clone, FromRow)]
pub struct Store {
    pub id: StoreId,
    pub merchant_id: MerchantId,
    pub slug: String,
    pub name: String,
    pub timezone: String,
    pub public_slug: String,
    /// ISO 3166 alpha-2: the region of phone numbers typed without a country code.
    pub country: Option<String>,
    /// What its booking page speaks to a customer whose browser asks for none of ours.
    #[sqlx(try_from = "String")]
    pub language: Lang,
    /// What the booking page tells customers about the store (empty: not said). The phone is
    /// kept in international format ("+86 21 6288 1234").
    pub address: String,
    pub phone: String,
    pub description: String,
    /// Bookings of a slot that ended this many minutes ago and were not marked become NO_SHOW
    /// (None: off, the default).
    pub auto_no_show_minutes: Option<i64>,
    /// When a place frees for the waiting list, it is held this many minutes for the first
    /// waiting customer to accept (None: they are booked at once, the default).
    pub waitlist_hold_minutes: Option<i64>,
    /// Staff check a customer in (attended) from this many minutes before the start.
    pub check_in_minutes: i64,
}

const STORE_SELECT: &str =
    "SELECT id, merchant_id, slug, name, timezone, public_slug, country, language, address, phone, description, auto_no_show_minutes, waitlist_hold_minutes, check_in_minutes FROM stores";

/// The longest a freed place is held for a waiting customer: a day.
pub const WAITLIST_HOLD_MAX: i64 = 1_440;

/// The longest wait before unmarked bookings become no-shows: a week.
pub const AUTO_NO_SHOW_MAX: i64 = 10_080;

pub const ADDRESS_MAX: usize = 300;
pub const DESCRIPTION_MAX: usize = 1000;

/// What a merchant says about a store on its booking page.
#[derive(Debug, Clone, Default)]
pub struct StorefrontInput {
    pub address: String,
    pub phone: String,
    pub description: String,
    pub language: String,
    /// Minutes after a slot's end before unmarked bookings become no-shows; empty: off.
    pub auto_no_show: String,
    /// Minutes a freed place is held for a waiting customer; empty: book them at once.
    pub waitlist_hold: String,
    /// A new name for the store; None keeps it.
    pub name: Option<String>,
    /// The country its phone numbers default to (ISO 3166 alpha-2); empty: from the timezone;
    /// None keeps it.
    pub country: Option<String>,
    /// Minutes before the start from which staff check customers in (0 to 1440); None keeps it.
    pub check_in: Option<String>,
}

/// The earliest check-in: a day before the start.
pub const CHECK_IN_MAX: i64 = 1_440;

/// Checks and saves what the store's booking page says about it, and the language it speaks.
/// Every field is checked at once; nothing is saved unless all are right.
pub async fn set_storefront(
    db: &Db,
    actor: &Actor,
    merchant: MerchantId,
    store_id: StoreId,
    input: &StorefrontInput,
) -> DomainResult<Store> {
    let store = store_by_id(db, Scope::Merchant(merchant), store_id).await?;
    let mut errs = Errors::default();
    let name = match &input.name {
        None => Some(store.name.clone()),
        Some(n) => errs.take(validate::name("name", n, validate::NAME_MAX)),
    };
    let country: Option<Option<String>> = match input.country.as_deref().map(str::trim) {
        None => Some(store.country.clone()),
        Some("") => Some(None),
        Some(c) => {
            let code = c.to_ascii_uppercase();
            if code.parse::<phonenumber::country::Id>().is_ok() {
                Some(Some(code))
            } else {
                errs.push(crate::domain::FieldError::new(
                    "country",
                    "invalid_country",
                    messages::bad_country(&code),
                ));
                None
            }
        }
    };
    // A phone number is read in the country being saved.
    let region = phone_region_of(
        country
            .clone()
            .flatten()
            .as_deref()
            .or(store.country.as_deref()),
        &store.timezone,
    );
    let address = errs.take(validate::optional_text(
        "address",
        &input.address,
        ADDRESS_MAX,
    ));
    let description = errs.take(validate::optional_text(
        "description",
        &input.description,
        DESCRIPTION_MAX,
    ));
    let phone = if input.phone.trim().is_empty() {
        Some(String::new())
    } else {
        errs.take(crate::domain::kernel::phone::phone(&input.phone, region).map(|(shown, _)| shown))
    };
    let language = Lang::parse(&input.language);
    if language.is_none() {
        errs.push(crate::domain::FieldError::new(
            "language",
            "invalid_language",
            messages::bad_language(),
        ));
    }
    let auto_no_show = optional_minutes(
        &mut errs,
        "auto_no_show",
        &input.auto_no_show,
        AUTO_NO_SHOW_MAX,
        messages::bad_auto_no_show,
    );
    let waitlist_hold = optional_minutes(
        &mut errs,
        "waitlist_hold",
        &input.waitlist_hold,
        WAITLIST_HOLD_MAX,
        messages::bad_waitlist_hold,
    );
    let check_in = match input.check_in.as_deref().map(str::trim) {
        None | Some("") => store.check_in_minutes,
        Some(raw) => match validate::typed_int(raw) {
            Some(n) if (0..=CHECK_IN_MAX).contains(&n) => n,
            _ => {
                errs.push(crate::domain::FieldError::new(
                    "check_in",
                    "invalid_number",
                    messages::bad_check_in(CHECK_IN_MAX),
                ));
                store.check_in_minutes
            }
        },
    };
    errs.into_result()?;
    let (
        Some(address),
        Some(description),
        Some(phone),
        Some(language),
        Some(auto_no_show),
        Some(waitlist_hold),
        Some(name),
        Some(country),
    ) = (
        address,
        description,
        phone,
        language,
        auto_no_show,
        waitlist_hold,
        name,
        country,
    )
    else {
        unreachable!("every field was checked above");
    };
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "UPDATE stores SET address = $1, phone = $2, description = $3, language = $4, auto_no_show_minutes = $7,
            waitlist_hold_minutes = $8, name = $9, country = $10, check_in_minutes = $11 WHERE id = $5 AND merchant_id = $6",
    )
    .bind(&address)
    .bind(&phone)
    .bind(&description)
    .bind(language.tag())
    .bind(store.id)
    .bind(merchant)
    .bind(auto_no_show)
    .bind(waitlist_hold)
    .bind(&name)
    .bind(&country)
    .bind(check_in)
    .execute(&mut *tx)
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant),
        "store.storefront",
        &format!("store:{}", store.id),
        &format!(
            "name={name} country={} language={} phone={phone} auto_no_show={} waitlist_hold={} check_in={check_in}min",
            country.as_deref().unwrap_or("-"),
            language.tag(),
            auto_no_show.map_or("off".to_string(), |m| format!("{m}min")),
            waitlist_hold.map_or("off".to_string(), |m| format!("{m}min"))
        ),
    )
    .await?;
    tx.commit().await?;
    store_by_id(db, Scope::Merchant(merchant), store.id).await
}

/// A number of minutes from 1 to `max`, or empty for "off" (`Some(None)`); a refusal is pushed
/// under `field` (and None answered).
fn optional_minutes(
    errs: &mut Errors,
    field: &'static str,
    raw: &str,
    max: i64,
    message: fn(i64) -> String,
) -> Option<Option<i64>> {
    match raw.trim() {
        "" => Some(None),
        raw => match validate::typed_int(raw) {
            Some(n) if (1..=max).contains(&n) => Some(Some(n)),
            _ => {
                errs.push(crate::domain::FieldError::new(
                    field,
                    "invalid_number",
                    message(max),
                ));
                None
            }
        },
    }
}

impl Store {
    /// The store's phone as a `tel:` link ("tel:+862162881234"), or empty when it has none.
    pub fn phone_href(&self) -> String {
        crate::domain::kernel::phone::tel_href(&self.phone)
    }

    pub fn tz(&self) -> Tz {
        self.timezone.parse().unwrap_or(chrono_tz::UTC)
    }

    /// The region a phone number typed without its country code belongs to: the store's
    /// country, or the one its timezone is in. None: numbers must carry their country code.
    pub fn phone_region(&self) -> Option<phonenumber::country::Id> {
        phone_region_of(self.country.as_deref(), &self.timezone)
    }
}

/// Sets the country a store's phone numbers default to (ISO 3166 alpha-2, as libphonenumber knows it).
pub async fn set_store_country(
    db: &Db,
    actor: &Actor,
    store_id: StoreId,
    country: &str,
) -> DomainResult<()> {
    let code = country.trim().to_ascii_uppercase();
    if code.parse::<phonenumber::country::Id>().is_err() {
        return Err(DomainError::field(
            "country",
            "invalid_country",
            messages::bad_country(&code),
        ));
    }
    let mut tx = db.begin_write().await?;
    let merchant: Option<MerchantId> =
        sqlx::query_scalar("UPDATE stores SET country = $1 WHERE id = $2 RETURNING merchant_id")
            .bind(&code)
            .bind(store_id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(merchant) = merchant else {
        return Err(DomainError::NotFound("store"));
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant),
        "store.country",
        &format!("store:{store_id}"),
        &code,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A store's phone region from its country setting, else from its timezone.
pub fn phone_region_of(country: Option<&str>, timezone: &str) -> Option<phonenumber::country::Id> {
    let code = match country.map(str::trim) {
        Some(c) if !c.is_empty() => c.to_ascii_uppercase(),
        _ => country_of_timezone(timezone)?.to_string(),
    };
    code.parse().ok()
}

/// The country of a timezone, for the zones our stores are in. The tz database's own table
/// (zone1970.tab) is not shipped by chrono-tz; a store outside these sets its country.
pub fn country_of_timezone(tz: &str) -> Option<&'static str> {
    Some(match tz {
        "Asia/Shanghai" | "Asia/Chongqing" | "Asia/Harbin" | "Asia/Urumqi" | "PRC" => "CN",
        "Asia/Hong_Kong" => "HK",
        "Asia/Macau" => "MO",
        "Asia/Taipei" => "TW",
        "Asia/Singapore" => "SG",
        "Asia/Tokyo" => "JP",
        "Asia/Seoul" => "KR",
        "Europe/Berlin" => "DE",
        "Europe/London" => "GB",
        "Europe/Paris" => "FR",
        "America/New_York" | "America/Chicago" | "America/Denver" | "America/Los_Angeles" => "US",
        _ => return None,
    })
}

#[derive(Debug, Clone, FromRow)]
pub struct Warehouse {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub slug: String,
    pub name: String,
    pub priority: i64,
}

fn duplicate(what: &'static str, slug: &str) -> impl FnOnce(sqlx::Error) -> DomainError {
    let slug = slug.to_string();
    crate::domain::kernel::error::unique_as("slug", "duplicate_slug", move || {
        messages::duplicate_slug(what, &slug)
    })
}

pub async fn create_merchant(
    db: &Db,
    actor: &Actor,
    slug: &str,
    name: &str,
    currency: &str,
    timezone: &str,
) -> DomainResult<MerchantId> {
    let mut errs = Errors::default();
    let slug = errs.take(validate::slug("slug", slug));
    let name = errs.take(validate::name("name", name, NAME_MAX));
    let currency = errs.take(validate::currency(currency));
    let tz = errs.take(validate::timezone(timezone));
    errs.into_result()?;
    let (slug, name, currency, tz) = (
        slug.unwrap_or_default(),
        name.unwrap_or_default(),
        currency.unwrap_or_default(),
        tz.unwrap_or(chrono_tz::UTC),
    );
    let mut tx = db.begin_write().await?;
    let id: MerchantId = sqlx::query_scalar(
        "INSERT INTO merchants (slug, name, currency, timezone, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&slug)
    .bind(&name)
    .bind(&currency)
    .bind(tz.name())
    .bind(db.now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(duplicate("merchant", &slug))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(id),
        "merchant.create",
        &format!("merchant:{slug}"),
        &name,
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Sets the language a merchant's people see by default and, with `stores`, the language of its
/// stores' booking pages.
pub async fn set_language(
    db: &Db,
    actor: &Actor,
    merchant: MerchantId,
    lang: Lang,
    stores: bool,
) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE merchants SET language = $1 WHERE id = $2")
        .bind(lang.tag())
        .bind(merchant)
        .execute(&mut *tx)
        .await?;
    if stores {
        sqlx::query("UPDATE stores SET language = $1 WHERE merchant_id = $2")
            .bind(lang.tag())
            .bind(merchant)
            .execute(&mut *tx)
            .await?;
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant),
        "merchant.language",
        &format!("merchant:{merchant}"),
        lang.tag(),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub async fn merchant_id_by_slug(db: &Db, slug: &str) -> DomainResult<MerchantId> {
    sqlx::query_scalar("SELECT id FROM merchants WHERE slug = $1")
        .bind(slug.trim())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("merchant"))
}

pub async fn merchant(db: &Db, id: MerchantId) -> DomainResult<Merchant> {
    sqlx::query_as(
        "SELECT id, slug, name, currency, timezone, language FROM merchants WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("merchant"))
}

/// Merchants visible in a scope (operators see all, for their filters).
pub async fn merchants(db: &Db, scope: Scope) -> DomainResult<Vec<Merchant>> {
    let tenant = scope.filter("id", 1);
    Ok(sqlx::query_as(&format!(
        "SELECT id, slug, name, currency, timezone, language FROM merchants WHERE {tenant} ORDER BY name"
    ))
    .bind(scope.bind())
    .fetch_all(&db.pool)
    .await?)
}

pub async fn create_store(
    db: &Db,
    actor: &Actor,
    merchant_slug: &str,
    slug: &str,
    name: &str,
    timezone: &str,
) -> DomainResult<StoreId> {
    let mut errs = Errors::default();
    let slug = errs.take(validate::slug("slug", slug));
    let name = errs.take(validate::name("name", name, NAME_MAX));
    let tz = errs.take(validate::timezone(timezone));
    errs.into_result()?;
    let (slug, name, tz) = (
        slug.unwrap_or_default(),
        name.unwrap_or_default(),
        tz.unwrap_or(chrono_tz::UTC),
    );
    let merchant_id = merchant_id_by_slug(db, merchant_slug).await?;
    // The public booking page addresses a store by one slug: the store's own when no other
    // merchant uses it, otherwise prefixed with the merchant's.
    let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM stores WHERE public_slug = $1")
        .bind(&slug)
        .fetch_optional(&db.pool)
        .await?;
    let public_slug = if taken.is_some() {
        format!("{}-{slug}", merchant_slug.trim())
    } else {
        slug.clone()
    };
    let mut tx = db.begin_write().await?;
    let id: StoreId = sqlx::query_scalar(
        "INSERT INTO stores (merchant_id, slug, name, timezone, created_at, public_slug, language)
         VALUES ($1, $2, $3, $4, $5, $6, (SELECT language FROM merchants WHERE id = $1)) RETURNING id",
    )
    .bind(merchant_id)
    .bind(&slug)
    .bind(&name)
    .bind(tz.name())
    .bind(db.now_ms())
    .bind(&public_slug)
    .fetch_one(&mut *tx)
    .await
    .map_err(duplicate("store", &slug))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "store.create",
        &format!("store:{slug}"),
        tz.name(),
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

pub async fn store_by_slug(db: &Db, merchant_id: MerchantId, slug: &str) -> DomainResult<Store> {
    sqlx::query_as(&format!(
        "{STORE_SELECT} WHERE merchant_id = $1 AND slug = $2"
    ))
    .bind(merchant_id)
    .bind(slug.trim())
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("store"))
}

pub async fn stores(db: &Db, scope: Scope) -> DomainResult<Vec<Store>> {
    let tenant = scope.filter("merchant_id", 1);
    Ok(
        sqlx::query_as(&format!("{STORE_SELECT} WHERE {tenant} ORDER BY name"))
            .bind(scope.bind())
            .fetch_all(&db.pool)
            .await?,
    )
}

pub async fn create_warehouse(
    db: &Db,
    actor: &Actor,
    merchant_slug: &str,
    slug: &str,
    name: &str,
    priority: i64,
) -> DomainResult<i64> {
    let mut errs = Errors::default();
    let slug = errs.take(validate::slug("slug", slug));
    let name = errs.take(validate::name("name", name, NAME_MAX));
    errs.into_result()?;
    let (slug, name) = (slug.unwrap_or_default(), name.unwrap_or_default());
    let merchant_id = merchant_id_by_slug(db, merchant_slug).await?;
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO warehouses (merchant_id, slug, name, priority, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(merchant_id)
    .bind(&slug)
    .bind(&name)
    .bind(priority)
    .bind(db.now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(duplicate("warehouse", &slug))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "warehouse.create",
        &format!("warehouse:{slug}"),
        &priority.to_string(),
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// The most a warehouse's priority may be either way (orders take from the highest first).
pub const PRIORITY_MAX: i64 = 1_000;

/// Renames a warehouse of the merchant and sets its priority; its slug (in links, the API and
/// the ledger's CSV) stays.
pub async fn update_warehouse(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    (name, priority): (&str, &str),
) -> DomainResult<()> {
    let mut errs = Errors::default();
    let name = errs.take(validate::name("name", name, NAME_MAX));
    let priority = errs.take(priority_text(priority));
    let (Some(name), Some(priority), true) = (name, priority, errs.is_empty()) else {
        return Err(errs.refusal());
    };
    let mut tx = db.begin_write().await?;
    let slug: Option<String> = sqlx::query_scalar(
        "UPDATE warehouses SET name = $1, priority = $2 WHERE id = $3 AND merchant_id = $4 RETURNING slug",
    )
    .bind(&name)
    .bind(priority)
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(slug) = slug else {
        return Err(DomainError::NotFound("warehouse"));
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "warehouse.update",
        &format!("warehouse:{slug}"),
        &format!("{name} · {priority}"),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A priority typed into a form: a whole number from −[`PRIORITY_MAX`] to [`PRIORITY_MAX`].
pub fn priority_text(raw: &str) -> Result<i64, FieldError> {
    validate::typed_int(raw)
        .filter(|p| (-PRIORITY_MAX..=PRIORITY_MAX).contains(p))
        .ok_or_else(|| {
            FieldError::new(
                "priority",
                "invalid_priority",
                messages::bad_priority(PRIORITY_MAX),
            )
        })
}

pub async fn warehouses(db: &Db, scope: Scope) -> DomainResult<Vec<Warehouse>> {
    let tenant = scope.filter("merchant_id", 1);
    Ok(sqlx::query_as(&format!(
        "SELECT id, merchant_id, slug, name, priority FROM warehouses WHERE {tenant}
         ORDER BY priority DESC, name"
    ))
    .bind(scope.bind())
    .fetch_all(&db.pool)
    .await?)
}

pub async fn store_by_id(db: &Db, scope: Scope, id: StoreId) -> DomainResult<Store> {
    let tenant = scope.filter("merchant_id", 2);
    sqlx::query_as(&format!("{STORE_SELECT} WHERE id = $1 AND {tenant}"))
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("store"))
}

/// The store behind a public booking URL.
pub async fn store_by_public_slug(db: &Db, public_slug: &str) -> DomainResult<Store> {
    sqlx::query_as(&format!("{STORE_SELECT} WHERE public_slug = $1"))
        .bind(public_slug.trim())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("store"))
}
