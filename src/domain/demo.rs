//! Demo data that makes every page alive. Loaded by `sellable demo` or `serve --demo` on an
//! empty database. The passwords are fixed so the README can name them; never use them in production.

use crate::domain::catalog::{self, ProductInput, SkuInput};
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::orders::{self, ItemInput, ReserveInput};
use crate::domain::slots::staff;
use crate::domain::stock::{self, AdjustInput};
use crate::domain::MerchantId;
use crate::domain::{tenancy::tenants, tenancy::users, Actor};
use crate::infra::db::Db;

pub struct DemoUser {
    pub email: &'static str,
    pub password: &'static str,
    pub role: &'static str,
}

pub const DEMO_USERS: [DemoUser; 3] = [
    DemoUser {
        email: "operator@sellable.local",
        password: "operator-demo-1",
        role: "operator",
    },
    DemoUser {
        email: "admin@demo.local",
        password: "admin-demo-1",
        role: "merchant_admin",
    },
    DemoUser {
        email: "staff@demo.local",
        password: "staff-demo-1",
        role: "store_staff",
    },
];

/// True when the database has no merchant yet.
pub async fn is_empty(db: &Db) -> DomainResult<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM merchants")
        .fetch_one(&db.pool)
        .await?;
    Ok(n == 0)
}

pub async fn demo_users_present(db: &Db) -> DomainResult<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE email = $1")
        .bind(DEMO_USERS[1].email)
        .fetch_one(&db.pool)
        .await?;
    Ok(n > 0)
}

fn product(name: &str, kind: &str, status: &str, skus: &[(&str, &str, i64)]) -> ProductInput {
    ProductInput {
        name: name.into(),
        description: String::new(),
        kind: kind.into(),
        status: status.into(),
        sale_starts_at: None,
        sale_ends_at: None,
        skus: skus
            .iter()
            .map(|(code, name, price)| SkuInput {
                code: (*code).into(),
                name: (*name).into(),
                price: Some(*price),
            })
            .collect(),
    }
}

pub async fn load(db: &Db, keys: &std::sync::Arc<CodeKeys>) -> DomainResult<()> {
    let system = Actor::system("system:demo");
    let (demo, other) = merchants(db, &system).await?;
    people(db, &system).await?;
    let as_demo = Actor {
        merchant_id: Some(demo),
        ..Actor::system("system:demo")
    };
    tea_house_catalog(db, &as_demo).await?;
    stock_story(db, keys, &as_demo, demo).await?;
    class_schedule(db, &as_demo, demo).await?;
    gift_cards(db, keys, &as_demo, demo).await?;
    let as_other = Actor {
        merchant_id: Some(other),
        ..Actor::system("system:demo")
    };
    catalog::create_product(
        db,
        &as_other,
        product(
            "Trail backpack",
            "goods",
            "ONLINE",
            &[("NW-PACK-30", "30 litres", 8900)],
        ),
    )
    .await?;
    Ok(())
}

/// The two merchants: a Shanghai tea house with a store and two warehouses, speaking Chinese, and
/// northwind in Berlin, speaking English, so both languages are seen at once.
async fn merchants(db: &Db, system: &Actor) -> DomainResult<(MerchantId, MerchantId)> {
    let system = system.clone();
    let demo =
        tenants::create_merchant(db, &system, "demo", "清和茶馆", "CNY", "Asia/Shanghai").await?;
    // The demo tea house is in Shanghai and speaks Chinese; northwind stays English, so both
    // languages are seen at once.
    tenants::set_language(db, &system, demo, crate::i18n::Lang::ZhCn, true).await?;
    let downtown = tenants::create_store(
        db,
        &system,
        "demo",
        "downtown",
        "南京东路店",
        "Asia/Shanghai",
    )
    .await?;
    // Phone numbers typed without +86 are Chinese (as the timezone would say anyway).
    tenants::set_store_country(db, &system, downtown, "CN").await?;
    let storefront = tenants::StorefrontInput {
        address: "上海市黄浦区南京东路 299 号 3 楼".into(),
        phone: "021 6321 8866".into(),
        description: "外滩旁的安静茶室，提供茶艺课与品茶体验。请提前 10 分钟到店。".into(),
        language: "zh-CN".into(),
        auto_no_show: String::new(),
        waitlist_hold: String::new(),
        name: None,
        country: None,
        check_in: None,
    };
    tenants::set_storefront(db, &system, demo, downtown, &storefront).await?;
    tenants::create_warehouse(db, &system, "demo", "main", "总仓", 10).await?;
    tenants::create_warehouse(db, &system, "demo", "east", "浦东仓", 5).await?;
    let other = tenants::create_merchant(
        db,
        &system,
        "northwind",
        "Northwind Outfitters",
        "EUR",
        "Europe/Berlin",
    )
    .await?;
    tenants::create_store(
        db,
        &system,
        "northwind",
        "berlin",
        "Berlin",
        "Europe/Berlin",
    )
    .await?;
    tenants::create_warehouse(db, &system, "northwind", "central", "Central", 0).await?;

    Ok((demo, other))
}

/// The demo's sign-ins (printed at start) and the names the ledger and people page show.
async fn people(db: &Db, system: &Actor) -> DomainResult<()> {
    let system = system.clone();
    for u in &DEMO_USERS {
        let (merchant, store) = match u.role {
            "operator" => (None, None),
            "merchant_admin" => (Some("demo"), None),
            _ => (Some("demo"), Some("downtown")),
        };
        users::create(
            db,
            &system,
            users::NewUser {
                email: u.email,
                password: u.password,
                role: u.role,
                merchant_slug: merchant,
                store_slug: store,
            },
        )
        .await?;
    }
    for (email, name) in [
        ("admin@demo.local", "陈店主"),
        ("staff@demo.local", "小林"),
        ("operator@sellable.local", "Operator"),
    ] {
        sqlx::query("UPDATE users SET display_name = $1 WHERE email = $2")
            .bind(name)
            .bind(email)
            .execute(&db.pool)
            .await?;
    }

    Ok(())
}

/// A Shanghai tea house, in the words its staff and customers use.
async fn tea_house_catalog(db: &Db, as_demo: &Actor) -> DomainResult<()> {
    for p in [
        product(
            "普洱茶饼",
            "goods",
            "ONLINE",
            &[
                ("PUER-357", "357克 生茶饼", 28800),
                ("PUER-2006", "2006年 古树熟茶饼 357克", 128850),
            ],
        ),
        product(
            "茉莉花茶",
            "goods",
            "ONLINE",
            &[
                ("TEA-JAS-100", "100克 罐装", 4800),
                ("TEA-JAS-250", "250克 罐装", 9800),
            ],
        ),
        product(
            "乌龙茶礼盒",
            "goods",
            "ONLINE",
            &[("TEA-OOL-GIFT", "礼盒 6 × 50克", 26800)],
        ),
        ProductInput {
            description: "跟随茶艺师学习冲泡绿茶、乌龙与普洱，茶具与茶点均已包含。".into(),
            ..product(
                "茶艺课",
                "service",
                "ONLINE",
                &[("CLASS-60", "入门班", 18800)],
            )
        },
        product(
            "品茶券",
            "voucher",
            "ONLINE",
            &[
                ("GIFT-100", "¥100 品茶券", 10000),
                ("GIFT-500", "¥500 品茶券", 50000),
            ],
        ),
        product(
            "竹制茶筅",
            "goods",
            "DRAFT",
            &[("TOOL-WHISK", "百本立 茶筅", 6800)],
        ),
        product(
            "冬季拼配茶",
            "goods",
            "OFFLINE",
            &[("TEA-WINTER", "季节拼配 200克", 7600)],
        ),
    ] {
        catalog::create_product(db, as_demo, p).await?;
    }
    Ok(())
}

/// Stock with a history: deliveries, a damaged tin, a frozen batch, paid and unpaid orders.
async fn stock_story(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
) -> DomainResult<()> {
    let adjust =
        |sku: &str, warehouse: &str, kind: &str, qty: i64, reason: &str, to: Option<&str>| {
            AdjustInput {
                sku: sku.into(),
                warehouse: warehouse.into(),
                kind: kind.into(),
                qty,
                reason: reason.into(),
                // The reason from the list that goes with each of the story's moves.
                reason_code: match kind {
                    "RECEIVE" => "received",
                    "WRITE_OFF" => "damaged",
                    "FREEZE" => "qc_hold",
                    _ => "other",
                }
                .into(),
                to_warehouse: to.map(str::to_string),
                expected_on_hand: None,
                // The batch held for quality control is due back in a week.
                release_on: if kind == "FREEZE" {
                    (db.clock.now() + chrono::Duration::days(7))
                        .format("%Y-%m-%d")
                        .to_string()
                } else {
                    String::new()
                },
                hold_id: None,
            }
        };
    for a in [
        adjust(
            "TEA-JAS-100",
            "main",
            "RECEIVE",
            120,
            "供应商到货 #1042",
            None,
        ),
        adjust(
            "TEA-JAS-100",
            "east",
            "RECEIVE",
            30,
            "供应商到货 #1043",
            None,
        ),
        adjust(
            "TEA-JAS-250",
            "main",
            "RECEIVE",
            40,
            "供应商到货 #1042",
            None,
        ),
        adjust("TEA-OOL-GIFT", "main", "RECEIVE", 12, "节令礼盒到货", None),
        adjust("TEA-JAS-100", "main", "WRITE_OFF", 2, "罐身压痕", None),
        adjust("PUER-357", "main", "RECEIVE", 20, "云南茶厂到货", None),
        adjust("PUER-2006", "main", "RECEIVE", 3, "藏家转让", None),
        adjust("TEA-JAS-250", "main", "FREEZE", 5, "质检：疑似受潮", None),
        adjust(
            "TEA-JAS-100",
            "main",
            "TRANSFER",
            10,
            "调拨至浦东仓，备东区订单",
            Some("east"),
        ),
        adjust("TOOL-WHISK", "main", "RECEIVE", 25, "首批到货", None),
    ] {
        stock::adjust(db, actor, merchant_id, a, None).await?;
    }
    let order = |id: &str, items: &[(&str, i64)]| ReserveInput {
        order_id: id.into(),
        items: items
            .iter()
            .map(|(sku, qty)| ItemInput {
                sku: (*sku).into(),
                qty: *qty,
                warehouse: None,
                place: None,
            })
            .collect(),
        ttl_seconds: Some(3600),
        customer_id: None,
    };
    for (id, items, pay) in [
        (
            "DEMO-1001",
            vec![("TEA-JAS-100", 2), ("TEA-OOL-GIFT", 1)],
            true,
        ),
        ("DEMO-1002", vec![("TEA-JAS-250", 3)], true),
        ("DEMO-1003", vec![("TEA-JAS-100", 4)], false),
        ("DEMO-1004", vec![("TEA-OOL-GIFT", 11)], false),
    ] {
        orders::reserve(db, keys, actor, merchant_id, order(id, &items), 24 * 3600).await?;
        if pay {
            orders::confirm(db, keys, actor, merchant_id, id, Some(&format!("PAY-{id}"))).await?;
        }
    }
    Ok(())
}

/// A tea class taught by two people, with a few bookings and one person's leave.
async fn class_schedule(db: &Db, actor: &Actor, merchant_id: MerchantId) -> DomainResult<()> {
    use crate::domain::slots::schedule::{self, RuleInput};
    let store = tenants::store_by_slug(db, merchant_id, "downtown").await?;
    staff::add_staff(db, actor, merchant_id, store.id, "王美玲").await?;
    staff::add_staff(db, actor, merchant_id, store.id, "陈俊").await?;
    let sku = schedule::service_sku(db, merchant_id, "CLASS-60", "sku").await?;
    let rule = |days: &[&str], opens: &str, closes: &str, staff: &str| RuleInput {
        weekdays: days.iter().map(|d| d.to_string()).collect(),
        opens: opens.into(),
        closes: closes.into(),
        slot_minutes: 60,
        capacity: 6,
        staff: Some(staff.into()),
        buffer_minutes: 0,
    };
    let rules = vec![
        rule(
            &["MON", "TUE", "WED", "THU", "FRI", "SAT"],
            "10:00",
            "17:00",
            "王美玲",
        ),
        rule(&["SAT", "SUN"], "14:00", "17:00", "陈俊"),
    ];
    schedule::replace_rules(
        db,
        actor,
        merchant_id,
        &sku,
        &store,
        rules,
        schedule::DEFAULT_WINDOW_DAYS,
    )
    .await?;
    // A tea class takes families and friends: up to four places per booking.
    sqlx::query("UPDATE skus SET max_places = 4 WHERE id = $1")
        .bind(sku.id)
        .execute(&db.pool)
        .await?;
    let upcoming: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT id, starts_at FROM slots WHERE sku_id = $1 AND starts_at > $2 ORDER BY starts_at LIMIT 3",
    )
    .bind(sku.id)
    .bind(db.now_ms() + 3_600_000)
    .fetch_all(&db.pool)
    .await?;
    for (i, (slot_id, _)) in upcoming.iter().enumerate() {
        for (j, (name, phone)) in [("林伟", "+86 138 0000 0001"), ("陈雨", "+86 139 0000 0002")]
            .iter()
            .enumerate()
        {
            if j > i {
                continue;
            }
            let input = crate::domain::slots::booking::BookInput {
                slot_id: *slot_id,
                // 陈雨 comes with a friend.
                places: if j == 1 { 2 } else { 1 },
                name: (*name).into(),
                phone: (*phone).into(),
                idempotency_key: None,
                region: None,
                public: None,
                staff: None,
            };
            crate::domain::slots::booking::book(db, actor, merchant_id, input).await?;
        }
    }
    // 陈俊 is on leave next weekend.
    let jun = staff::staff_by_name(db, merchant_id, store.id, "陈俊").await?;
    let today = crate::domain::slots::storefront::today(db, &store);
    let days_to_sat =
        (5 - chrono::Datelike::weekday(&today).num_days_from_monday() as i64 + 7) % 7 + 7;
    let sat = today + chrono::Duration::days(days_to_sat);
    let (from, _) = crate::domain::slots::storefront::day_bounds(&store, sat);
    let (_, to) =
        crate::domain::slots::storefront::day_bounds(&store, sat + chrono::Duration::days(1));
    // Two customers had booked his first class that day: the leave puts them on the To call list.
    let first: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM slots WHERE staff_id = $1 AND starts_at >= $2 AND starts_at < $3 ORDER BY starts_at LIMIT 1",
    )
    .bind(jun.as_ref().map(|s| s.id))
    .bind(from)
    .bind(to)
    .fetch_optional(&db.pool)
    .await?;
    if let Some(slot_id) = first {
        for (name, phone, places) in [
            ("周婷", "+86 137 0000 0003", 1),
            ("Emma Clark", "+44 7911 123456", 2),
        ] {
            let input = crate::domain::slots::booking::BookInput {
                slot_id,
                places,
                name: name.into(),
                phone: phone.into(),
                idempotency_key: None,
                region: None,
                public: None,
                staff: None,
            };
            crate::domain::slots::booking::book(db, actor, merchant_id, input).await?;
        }
    }
    let input = crate::domain::slots::closures::ClosureInput {
        staff: jun,
        starts_at: from,
        ends_at: to,
        reason: "陈俊请假".into(),
        public_note: Some("陈老师当天休息，请选择其他时间或其他老师。".into()),
    };
    crate::domain::slots::closures::create_closure(db, actor, merchant_id, &store, input).await?;
    Ok(())
}

/// A pool of generated gift-card codes, one of them already sold.
async fn gift_cards(
    db: &Db,
    keys: &std::sync::Arc<CodeKeys>,
    actor: &Actor,
    merchant_id: MerchantId,
) -> DomainResult<()> {
    use crate::domain::codes::import::{self, NewBatch, Source};
    let sku = crate::domain::codes::voucher_sku(db, merchant_id, "GIFT-100", "sku").await?;
    let nb = NewBatch {
        name: "首发批次".into(),
        mode: "valid".into(),
        expires_at: None,
        generated: true,
        size: 200,
        user_id: None,
        allowed: import::Allowed::Any,
    };
    let batch = import::create_batch(db, keys, actor, &sku, nb).await?;
    let (count, length, alphabet) = import::generation(200, 12, "unambiguous")?;
    import::run(
        db.clone(),
        keys.clone(),
        batch,
        Source::Generated {
            count,
            length,
            alphabet,
        },
    )
    .await;
    let order = ReserveInput {
        order_id: "DEMO-2001".into(),
        items: vec![ItemInput {
            sku: "GIFT-100".into(),
            qty: 1,
            warehouse: None,
            place: None,
        }],
        ttl_seconds: Some(3600),
        customer_id: None,
    };
    orders::reserve(db, keys, actor, merchant_id, order, 24 * 3600).await?;
    orders::confirm(
        db,
        keys,
        actor,
        merchant_id,
        "DEMO-2001",
        Some("PAY-DEMO-2001"),
    )
    .await?;
    Ok(())
}
