use std::io::Write;
use std::process::{Command, Stdio};

use crate::both;
use crate::helpers::TestApp;

fn sellable(app: &TestApp, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sellable"))
        .args(args)
        .env("DATABASE_URL", &app.database_url)
        .env("SELLABLE_CODE_KEY_FILE", app.dir.join("code-keys.json"))
        .env(
            "SELLABLE_CLOCK_OFFSET_MS",
            app.db.clock.offset_ms().to_string(),
        )
        .env_remove("REDIS_URL")
        .env("SELLABLE_LOG", "warn")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

both!(
    cli_sets_up_a_merchant_with_store_warehouse_users_and_an_api_key,
    |app| {
        let (ok, out, _) = sellable(
            &app,
            &["merchant", "add", "--slug", "acme", "--name", "Acme"],
            None,
        );
        assert!(ok, "{out}");
        let (ok, _, err) = sellable(
            &app,
            &["merchant", "add", "--slug", "acme", "--name", "Again"],
            None,
        );
        assert!(!ok);
        assert!(
            err.contains("There is already a merchant with the slug \"acme\""),
            "{err}"
        );
        let (ok, _, err) = sellable(
            &app,
            &[
                "store",
                "add",
                "--merchant",
                "acme",
                "--slug",
                "hq",
                "--name",
                "HQ",
                "--timezone",
                "Mars/Olympus",
            ],
            None,
        );
        assert!(!ok);
        assert!(err.contains("Unknown timezone \"Mars/Olympus\""), "{err}");
        assert_eq!(app.count("stores").await, 0, "nothing written on a refusal");
        let (ok, _, err) = sellable(
            &app,
            &[
                "store",
                "add",
                "--merchant",
                "acme",
                "--slug",
                "hq",
                "--name",
                "HQ",
                "--timezone",
                "Europe/Berlin",
            ],
            None,
        );
        assert!(ok, "{err}");
        let (ok, _, err) = sellable(
            &app,
            &[
                "warehouse",
                "add",
                "--merchant",
                "acme",
                "--slug",
                "w1",
                "--name",
                "W1",
                "--priority",
                "5",
            ],
            None,
        );
        assert!(ok, "{err}");
        let (ok, _, err) = sellable(
            &app,
            &[
                "warehouse",
                "add",
                "--merchant",
                "nobody",
                "--slug",
                "w1",
                "--name",
                "W1",
            ],
            None,
        );
        assert!(!ok);
        assert!(err.contains("No such merchant."), "{err}");

        // Password from stdin: used as given, not printed.
        let (ok, out, err) = sellable(
            &app,
            &[
                "user",
                "add",
                "--email",
                "Boss@Acme.test",
                "--role",
                "merchant_admin",
                "--merchant",
                "acme",
            ],
            Some("a-long-password\n"),
        );
        assert!(ok, "{err}");
        assert!(!out.contains("a-long-password"));
        // No stdin: a password is generated and printed.
        let (ok, out, err) = sellable(
            &app,
            &[
                "user",
                "add",
                "--email",
                "staff@acme.test",
                "--role",
                "store_staff",
                "--merchant",
                "acme",
                "--store",
                "hq",
            ],
            None,
        );
        assert!(ok, "{err}");
        let generated = out.split("Password: ").nth(1).unwrap().trim().to_string();
        assert_eq!(generated.len(), 16);
        let (ok, _, err) = sellable(
            &app,
            &[
                "user",
                "add",
                "--email",
                "x@acme.test",
                "--role",
                "store_staff",
                "--merchant",
                "acme",
            ],
            Some("a-long-password"),
        );
        assert!(!ok);
        assert!(
            err.contains("Store staff need a merchant and one of its stores."),
            "{err}"
        );
        let (ok, _, err) = sellable(
            &app,
            &[
                "user",
                "add",
                "--email",
                "y@acme.test",
                "--role",
                "merchant_admin",
                "--merchant",
                "acme",
            ],
            Some("short"),
        );
        assert!(!ok);
        assert!(err.contains("at least 10 characters"), "{err}");

        for (email, password) in [
            ("boss@acme.test", "a-long-password"),
            ("staff@acme.test", generated.as_str()),
        ] {
            let r = app
                .client()
                .post(app.url("/login"))
                .form(&[("email", email), ("password", password)])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303, "{email} signs in");
        }

        let (ok, out, err) = sellable(
            &app,
            &["apikey", "create", "--merchant", "acme", "--name", "shop"],
            None,
        );
        assert!(ok, "{err}");
        let key = out.trim();
        assert_eq!(out.lines().count(), 1, "the key alone on stdout: {out:?}");
        let r = reqwest::Client::new()
            .get(app.url("/api/v1/skus/NONE"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "the printed key authenticates");
    }
);

both!(
    cli_demo_loads_once_and_refuses_a_database_with_data,
    |app| {
        let (ok, out, err) = sellable(&app, &["demo"], None);
        assert!(ok, "{err}");
        assert!(out.contains("admin@demo.local"));
        assert!(app.count("products").await >= 6);
        let (ok, _, err) = sellable(&app, &["demo"], None);
        assert!(!ok);
        assert!(err.contains("already has merchants"), "{err}");
        let r = app
            .client()
            .post(app.url("/login"))
            .form(&[("email", "staff@demo.local"), ("password", "staff-demo-1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
    }
);

const LANGUAGE_OF_TEA: &str = "SELECT language FROM merchants WHERE slug = 'tea'";

both!(
    cli_sets_a_merchants_language_and_refuses_one_we_do_not_speak,
    |app| {
        let (ok, out, _) = sellable(
            &app,
            &[
                "merchant",
                "add",
                "--slug",
                "tea",
                "--name",
                "Tea",
                "--language",
                "zh-CN",
            ],
            None,
        );
        assert!(ok, "{out}");
        let (ok, _, err) = sellable(
            &app,
            &[
                "merchant",
                "set-language",
                "--slug",
                "tea",
                "--language",
                "fr",
            ],
            None,
        );
        assert!(!ok);
        assert!(err.contains("zh-CN or en"), "{err}");
        let language: String = sqlx::query_scalar(LANGUAGE_OF_TEA)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(language, "zh-CN", "unchanged by the refusal");
        let (ok, out, err) = sellable(
            &app,
            &[
                "merchant",
                "set-language",
                "--slug",
                "tea",
                "--language",
                "en",
                "--stores",
            ],
            None,
        );
        assert!(ok, "{out} {err}");
        let language: String = sqlx::query_scalar(LANGUAGE_OF_TEA)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(language, "en");
    }
);

both!(
    cli_gives_a_key_its_own_rate_or_unlimited_and_refuses_a_bad_one,
    |app| {
        app.merchant("acme").await;
        let (ok, key, err) = sellable(
            &app,
            &[
                "apikey",
                "create",
                "--merchant",
                "acme",
                "--name",
                "bench",
                "--rate-per-second",
                "0",
            ],
            None,
        );
        assert!(ok, "{err}");
        assert!(key.trim().starts_with("sk_"));
        let rate = || async {
            sqlx::query_scalar::<_, Option<i64>>(
                "SELECT rate_per_second FROM api_keys WHERE name = 'bench'",
            )
            .fetch_one(&app.db.pool)
            .await
            .unwrap()
        };
        assert_eq!(rate().await, Some(0), "0 is unlimited");
        let (ok, out, err) = sellable(
            &app,
            &[
                "apikey",
                "rate",
                "--merchant",
                "acme",
                "--name",
                "bench",
                "50",
            ],
            None,
        );
        assert!(ok, "{err}");
        assert_eq!(out.trim(), "50/s");
        assert_eq!(rate().await, Some(50));
        let (ok, _, err) = sellable(
            &app,
            &[
                "apikey",
                "rate",
                "--merchant",
                "acme",
                "--name",
                "bench",
                "lots",
            ],
            None,
        );
        assert!(!ok);
        assert!(err.contains("requests per second"), "{err}");
        assert_eq!(rate().await, Some(50), "nothing changed");
        let (ok, out, _) = sellable(
            &app,
            &[
                "apikey",
                "rate",
                "--merchant",
                "acme",
                "--name",
                "bench",
                "default",
            ],
            None,
        );
        assert!(ok);
        assert_eq!(out.trim(), "default");
        assert_eq!(rate().await, None);
    }
);

both!(
    the_cli_runs_on_the_clock_it_is_given_and_refuses_an_offset_past_a_century,
    |app| {
        // The helper hands the CLI the test app's offset: what it writes is stamped on the test's
        // day, not the machine's (a year on, so that the two can never be mistaken).
        app.db.clock.advance(365 * 86_400_000);
        let (ok, out, err) = sellable(
            &app,
            &["merchant", "add", "--slug", "dated", "--name", "Dated"],
            None,
        );
        assert!(ok, "{out} {err}");
        let made: i64 = sqlx::query_scalar("SELECT created_at FROM merchants WHERE slug = $1")
            .bind("dated")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert!(
            (made - app.now_ms()).abs() < 60_000,
            "stamped {made}, the app's now is {}",
            app.now_ms()
        );
        // An offset no clock can hold is refused before anything is written.
        let too_far = (sellable::config::CLOCK_OFFSET_MAX_MS + 1).to_string();
        let (ok, _, err) = sellable(
            &app,
            &[
                "--clock-offset-ms",
                &too_far,
                "merchant",
                "add",
                "--slug",
                "far",
                "--name",
                "Far",
            ],
            None,
        );
        assert!(!ok);
        assert!(err.contains("--clock-offset-ms"), "{err}");
        assert_eq!(app.count("merchants WHERE slug = 'far'").await, 0);
    }
);
