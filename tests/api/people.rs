//! People and sign-ins in the back office (issue 20): invitations by a one-time link, password
//! resets shown once, deactivation that ends sessions at once, and everyone's own password.

use crate::both;
use crate::helpers::{html, TestApp};

/// A merchant admin invites `email` as `role` (with a store for staff) and returns the link.
async fn invite(
    app: &TestApp,
    admin: &reqwest::Client,
    email: &str,
    role: &str,
    store: &str,
) -> String {
    let r = admin
        .post(app.url("/admin/people/invite"))
        .form(&[
            ("email", email),
            ("display_name", "Li Na"),
            ("role", role),
            ("store", store),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let page = html(r).await;
    let link = page
        .attr("#invitation-link input", "value")
        .expect("the link, shown once");
    let path = link
        .split_once("/invite/")
        .map(|(_, t)| format!("/invite/{t}"))
        .unwrap();
    assert!(path.len() > 60, "a long random token: {path}");
    path
}

async fn accept(
    app: &TestApp,
    client: &reqwest::Client,
    path: &str,
    password: &str,
    confirm: &str,
) -> reqwest::Response {
    client
        .post(app.url(path))
        .form(&[
            ("display_name", ""),
            ("password", password),
            ("confirm", confirm),
        ])
        .send()
        .await
        .unwrap()
}

async fn status_of(app: &TestApp, client: &reqwest::Client, path: &str) -> u16 {
    client
        .get(app.url(path))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

both!(
    an_invited_person_signs_in_with_the_role_and_store_given_and_nothing_more_and_the_link_works_once,
    |app| {
        app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let path = invite(&app, &admin, "li.na@example.com", "store_staff", "main-store").await;
        // The token is kept hashed: the link's token is nowhere in the database.
        let token = path.trim_start_matches("/invite/").to_string();
        let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM invitations WHERE token_hash = $1")
            .bind(&token)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(stored, 0);
        // The people page lists it as waiting, and shows no link any more.
        let page = app.page(&admin, "/admin/people").await;
        assert_eq!(page.count("table.invitations tbody tr"), 1);
        assert_eq!(page.count("#invitation-link"), 0);
        // The same email again, or one that already signs in, is refused under the field.
        for (email, code) in [("li.na@example.com", "already_invited")] {
            let r = admin
                .post(app.url("/admin/people/invite"))
                .form(&[("email", email), ("role", "store_staff"), ("store", "main-store")])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{code}");
            assert_eq!(html(r).await.count(".field-error[data-field=email]"), 1, "{code}");
        }
        // Staff without a store is refused.
        let r = admin
            .post(app.url("/admin/people/invite"))
            .form(&[("email", "x@example.com"), ("role", "store_staff"), ("store", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(html(r).await.count(".field-error[data-field=store]"), 1);
        // The invitee: a short or mismatched password is refused and the link still works.
        let guest = app.client();
        assert_eq!(status_of(&app, &guest, &path).await, 200);
        let r = accept(&app, &guest, &path, "short", "short").await;
        assert_eq!(html(r).await.count(".field-error[data-field=password]"), 1);
        let r = accept(&app, &guest, &path, "a long password 1", "a long password 2").await;
        assert_eq!(html(r).await.count(".field-error[data-field=confirm]"), 1);
        let r = accept(&app, &guest, &path, "a long password 1", "a long password 1").await;
        assert_eq!(r.status(), 303);
        assert_eq!(crate::helpers::location(&r), "/admin");
        // Signed in as store staff of that store, with the name given at the invitation.
        let (role, store, name): (String, Option<i64>, String) = sqlx::query_as(
            "SELECT role, store_id, display_name FROM users WHERE email = 'li.na@example.com'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let main_store: i64 = sqlx::query_scalar("SELECT id FROM stores WHERE slug = 'main-store'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!((role.as_str(), store, name.as_str()), ("store_staff", Some(main_store), "Li Na"));
        assert_eq!(status_of(&app, &guest, "/admin").await, 200);
        // …and nothing more: no admin pages.
        for admin_only in ["/admin/people", "/admin/stock/import", "/admin/api-keys"] {
            assert_eq!(status_of(&app, &guest, admin_only).await, 403, "{admin_only}");
        }
        // A made-up link is gone at once, whatever is posted to it.
        let r = accept(&app, &app.client(), "/invite/not-an-invitation", "a long password", "a long password").await;
        assert_eq!(r.status(), 410);
        // The link is used up; another browser finds it gone.
        let other = app.client();
        assert_eq!(status_of(&app, &other, &path).await, 410);
        let r = accept(&app, &other, &path, "another password", "another password").await;
        assert_eq!(r.status(), 410);
        assert_eq!(html(r).await.count("#invitation-invalid"), 1);
        // Signing in with the chosen password works from anywhere.
        app.sign_in("li.na@example.com", "a long password 1").await;
        // Now that the email signs in, inviting it again is a duplicate.
        let r = admin
            .post(app.url("/admin/people/invite"))
            .form(&[("email", "LI.NA@example.com"), ("role", "merchant_admin")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        // A revoked invitation's link is gone too.
        let path = invite(&app, &admin, "wang@example.com", "merchant_admin", "").await;
        let id = app.page(&admin, "/admin/people").await.attr("table.invitations tbody tr", "data-invitation").unwrap();
        let r = admin
            .post(app.url(&format!("/admin/people/invitations/{id}/revoke")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(status_of(&app, &app.client(), &path).await, 410);
    }
);

both!(
    one_invitation_accepted_from_several_browsers_at_once_makes_one_person,
    |app| {
        app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let path = invite(&app, &admin, "race@example.com", "merchant_admin", "").await;
        let tasks: Vec<_> = (0..5)
            .map(|_| {
                let (url, client) = (app.url(&path), app.client());
                tokio::spawn(async move {
                    client
                        .post(url)
                        .form(&[
                            ("password", "a long password"),
                            ("confirm", "a long password"),
                        ])
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16()
                })
            })
            .collect();
        let mut won = 0;
        for t in tasks {
            match t.await.unwrap() {
                303 => won += 1,
                410 => {}
                s => panic!("{s}"),
            }
        }
        assert_eq!(won, 1);
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE email = 'race@example.com'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(n, 1);
    }
);

both!(
    a_deactivated_persons_sessions_end_at_once_and_a_reset_password_is_shown_once_and_ends_theirs,
    |app| {
        app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let (email, password) = app.user("store_staff", Some("acme")).await;
        let staff = app.sign_in(&email, &password).await;
        assert_eq!(status_of(&app, &staff, "/admin").await, 200);
        let id: i64 = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
            .bind(&email)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        // Deactivate: asked first, then their session ends on its next request.
        let page = app
            .page(&admin, &format!("/admin/people/{id}/deactivate"))
            .await;
        assert_eq!(page.count("form[action$='/deactivate'] button"), 1);
        let r = admin
            .post(app.url(&format!("/admin/people/{id}/deactivate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(
            status_of(&app, &staff, "/admin").await,
            303,
            "signed out at once"
        );
        let r = app
            .client()
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_ne!(r.status(), 303, "a deactivated person cannot sign in");
        // Reactivated, they sign in again.
        let r = admin
            .post(app.url(&format!("/admin/people/{id}/reactivate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let staff = app.sign_in(&email, &password).await;
        // A reset: the new password is shown once, the old stops working, their session ends.
        let r = admin
            .post(app.url(&format!("/admin/people/{id}/reset")))
            .send()
            .await
            .unwrap();
        let new = html(r).await.attr("#new-password input", "value").unwrap();
        assert!(new.len() >= 10);
        assert_eq!(status_of(&app, &staff, "/admin").await, 303);
        let r = app
            .client()
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_ne!(r.status(), 303, "the old password no longer works");
        app.sign_in(&email, &new).await;
        // Nobody deactivates themselves; another merchant's person is not found.
        let me: i64 = sqlx::query_scalar(
            "SELECT id FROM users WHERE role = 'merchant_admin' ORDER BY id DESC",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/people/{me}/deactivate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        app.merchant("other").await;
        let (other_email, _) = app.user("store_staff", Some("other")).await;
        let other_id: i64 = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
            .bind(&other_email)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        for path in ["deactivate", "reset"] {
            let r = admin
                .post(app.url(&format!("/admin/people/{other_id}/{path}")))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 404, "{path}");
        }
        let still: i64 =
            sqlx::query_scalar("SELECT CAST(disabled AS BIGINT) FROM users WHERE id = $1")
                .bind(other_id)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(still, 0);
    }
);

both!(
    a_person_changes_their_own_password_keeps_this_session_and_ends_the_others,
    |app| {
        app.acme_api().await;
        let (email, password) = app.user("store_staff", Some("acme")).await;
        let here = app.sign_in(&email, &password).await;
        let elsewhere = app.sign_in(&email, &password).await;
        let change = |current: &'static str, new: &'static str, confirm: &'static str| {
            here.post(app.url("/account/password"))
                .form(&[("current", current), ("new", new), ("confirm", confirm)])
                .send()
        };
        let r = change(
            "wrong password!",
            "a brand new password",
            "a brand new password",
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count(".field-error[data-field=current]"), 1);
        let r = here
            .post(app.url("/account/password"))
            .form(&[
                ("current", password.as_str()),
                ("new", "a brand new password"),
                ("confirm", "a brand new password"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(
            status_of(&app, &here, "/account").await,
            200,
            "this session stays"
        );
        assert_eq!(
            status_of(&app, &elsewhere, "/admin").await,
            303,
            "the other ends"
        );
        app.sign_in(&email, "a brand new password").await;
        // The name they go by.
        let r = here
            .post(app.url("/account/name"))
            .form(&[("display_name", "小王")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&here, "/account").await;
        assert_eq!(
            page.attr("input[name=display_name]", "value").as_deref(),
            Some("小王")
        );
    }
);

both!(
    two_admins_deactivating_each_other_at_once_leave_one_admin_active,
    |app| {
        use sellable::domain::{tenancy::people, Actor};
        let merchant = app.merchant("acme").await;
        let (a, _) = app.user("merchant_admin", Some("acme")).await;
        let (b, _) = app.user("merchant_admin", Some("acme")).await;
        let id_of = |email: String| {
            let db = app.db.clone();
            async move {
                sqlx::query_scalar::<_, i64>("SELECT id FROM users WHERE email = $1")
                    .bind(email)
                    .fetch_one(&db.pool)
                    .await
                    .unwrap()
            }
        };
        let (ia, ib) = (id_of(a).await, id_of(b).await);
        let (actor_a, actor_b) = (Actor::system("a"), Actor::system("b"));
        for _ in 0..5 {
            let (ra, rb) = tokio::join!(
                people::set_active(&app.db, &actor_a, (merchant, ia), ib, false),
                people::set_active(&app.db, &actor_b, (merchant, ib), ia, false),
            );
            assert!(
                ra.is_ok() != rb.is_ok(),
                "exactly one goes through: {:?} / {:?}",
                ra.as_ref().err(),
                rb.as_ref().err()
            );
            let active: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM users WHERE id IN ($1, $2) AND disabled = 0",
            )
            .bind(ia)
            .bind(ib)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
            assert_eq!(active, 1);
            // Both back for the next round.
            for id in [ia, ib] {
                sqlx::query("UPDATE users SET disabled = 0 WHERE id = $1")
                    .bind(id)
                    .execute(&app.db.pool)
                    .await
                    .unwrap();
            }
        }
    }
);

both!(
    a_person_cannot_go_by_a_name_that_reads_as_another_persons_email_or_the_system,
    |app| {
        app.merchant("acme").await;
        let (admin_email, _) = app.user("merchant_admin", Some("acme")).await;
        let (email, password) = app.user("store_staff", Some("acme")).await;
        let staff = app.sign_in(&email, &password).await;
        let save = |name: String| {
            let staff = staff.clone();
            let url = app.url("/account/name");
            async move {
                let r = staff
                    .post(url)
                    .form(&[("display_name", name.as_str())])
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), html(r).await)
            }
        };
        let (s, _) = save("王美玲".into()).await;
        assert_eq!(s, 303);
        let (other_email, other_password) = app.user("store_staff", Some("acme")).await;
        let other = app.sign_in(&other_email, &other_password).await;
        for taken in [
            admin_email.to_uppercase(),
            "演示数据".to_string(),
            "Demo  data".to_string(),
            "系统（对账）".to_string(),
            "System (anything)".to_string(),
            "API key “orders”".to_string(),
            "API key \"orders\"".to_string(),
            "System（demo）".to_string(),
            "Demo\u{200B}data".to_string(),
            "顾客".to_string(),
        ] {
            let r = other
                .post(app.url("/account/name"))
                .form(&[("display_name", taken.as_str())])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{taken}");
            let page = html(r).await;
            assert_eq!(
                page.count(".field-error[data-field=display_name]"),
                1,
                "{taken}"
            );
            assert_eq!(
                page.attr("input[name=display_name]", "value").as_deref(),
                Some(taken.as_str()),
                "what was typed is kept"
            );
        }
        // Two people may share a name (the records add their emails).
        let r = other
            .post(app.url("/account/name"))
            .form(&[("display_name", "王美玲")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let r = other
            .post(app.url("/account/name"))
            .form(&[("display_name", "System admin Li")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
    }
);
