//! The SQL identities: a balance changed by hand is frozen until corrected, and a correction
//! racing confirms loses none of them.

#[allow(unused_imports)]
use super::*;

both!(
    a_balance_changed_by_hand_freezes_the_sku_until_an_operator_corrects_it,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "SAFE").await;
        api.receive("SAFE", "main", 5).await;
        let sku = sku_id(&app, "SAFE").await;
        assert_eq!(reserve(&api, "ok-1", "SAFE", 1).await.0, 201);
        let clean = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(clean.broken.is_empty(), "{clean:?}");
        sqlx::query("UPDATE stock_balances SET total = total + 7 WHERE sku_id = $1")
            .bind(sku)
            .execute(&app.db.pool)
            .await
            .unwrap();
        // The CLI prints the finding and exits with status 2.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sellable"));
        cmd.arg("reconcile")
            .env("DATABASE_URL", &app.database_url)
            .env("SELLABLE_CODE_KEY_FILE", app.dir.join("code-keys.json"))
            .env(
                "SELLABLE_CLOCK_OFFSET_MS",
                app.db.clock.offset_ms().to_string(),
            )
            .env("SELLABLE_LOG", "error");
        match &app.redis_url {
            Some(url) => cmd
                .env("REDIS_URL", url)
                .env("SELLABLE_REDIS_PREFIX", gate(&app).prefix()),
            None => cmd.env_remove("REDIS_URL"),
        };
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("[ledger_mismatch]"), "{text}");
        assert!(
            text.contains("expected total 5 locked 1 sold 0 frozen 0, found total 12"),
            "{text}"
        );
        let open = reconcile::findings(&app.db, Scope::All, "OPEN", 0)
            .await
            .unwrap();
        assert_eq!(
            open.len(),
            1,
            "one finding, however often it is seen: {open:?}"
        );
        let f = &open[0];
        assert_eq!(
            (f.kind.as_str(), f.action.as_str()),
            ("ledger_mismatch", "frozen")
        );
        // Frozen: nothing more is sold, and the refusal says why.
        if app.backend == Backend::Postgres {
            tokio::time::sleep(Duration::from_millis(2100)).await; // the SKU cache's lifetime
        }
        let (s, b) = reserve(&api, "ok-2", "SAFE", 1).await;
        assert_eq!((s, b["error"].as_str()), (422, Some("sku_frozen")), "{b}");
        assert!(
            b["message"]
                .as_str()
                .unwrap()
                .contains("frozen by reconciliation"),
            "{b}"
        );
        // Unfreezing before correcting is refused; restoring and then unfreezing works.
        let op = Actor::system("operator@test");
        let err = reconcile::unfreeze(&app.db, &op, Scope::All, f.id, "looked at it")
            .await
            .unwrap_err();
        assert!(err.message().contains("Still broken"), "{}", err.message());
        reconcile::correct_stock(
            &app.db,
            &op,
            Scope::All,
            f.id,
            Correction::Restore,
            "hand edit undone",
        )
        .await
        .unwrap();
        app.assert_ledger_replays().await;
        let done = reconcile::unfreeze(&app.db, &op, Scope::All, f.id, "restored")
            .await
            .unwrap();
        assert_eq!(done.status.as_str(), "RESOLVED");
        assert_eq!(balance(&app, sku).await, (5, 1, 0, 0));
        assert_eq!(reserve(&api, "ok-3", "SAFE", 1).await.0, 201);
        let after = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(after.broken.is_empty(), "{after:?}");
    }
);

both!(
    a_stock_correction_racing_confirms_loses_none_of_them,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "RACE").await;
        api.receive("RACE", "main", 40).await;
        let sku = sku_id(&app, "RACE").await;
        for i in 0..20 {
            assert_eq!(reserve(&api, &format!("race-{i}"), "RACE", 1).await.0, 201);
        }
        sqlx::query("UPDATE stock_balances SET total = total + 3 WHERE sku_id = $1")
            .bind(sku)
            .execute(&app.db.pool)
            .await
            .unwrap();
        reconcile::run(&app.db, "job", &system()).await.unwrap();
        let open = reconcile::findings(&app.db, Scope::All, "OPEN", 0)
            .await
            .unwrap();
        let f = open.first().expect("the hand edit is found").id;
        // Twenty confirms and the correction at once.
        let mut tasks = Vec::new();
        for i in 0..20 {
            let api = api.clone();
            tasks.push(tokio::spawn(async move {
                api.post(&format!("/api/v1/reservations/race-{i}/confirm"), json!({}))
                    .await
                    .0
            }));
        }
        let db = app.db.clone();
        let correction = tokio::spawn(async move {
            reconcile::correct_stock(
                &db,
                &Actor::system("operator@test"),
                Scope::All,
                f,
                Correction::Restore,
                "hand edit undone",
            )
            .await
        });
        for t in tasks {
            assert_eq!(t.await.unwrap(), 200);
        }
        correction.await.unwrap().unwrap();
        app.assert_ledger_replays().await;
        assert_eq!(
            balance(&app, sku).await,
            (40, 0, 20, 0),
            "every confirm counted once"
        );
    }
);
