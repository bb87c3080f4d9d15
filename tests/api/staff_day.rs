//! Store staff's day (issue 19): what a schedule or a closure refuses instead of saving silently.

use serde_json::json;

use crate::both;

both!(
    an_overlapping_range_for_the_same_person_is_refused_with_the_overlap_named_and_nothing_saved,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Mei"})).await;
        assert_eq!(s, 201, "{b}");
        let rules = json!({"rules": [
            {"weekdays": ["MON", "TUE"], "opens": "09:00", "closes": "12:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // A lunch break is two ranges that do not overlap: fine.
            {"weekdays": ["MON"], "opens": "13:00", "closes": "17:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // Overlaps the first on Tuesday.
            {"weekdays": ["TUE"], "opens": "11:00", "closes": "14:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // Another person at the same hours does not overlap anybody.
            {"weekdays": ["TUE"], "opens": "11:00", "closes": "14:00", "slot_minutes": 60, "capacity": 1}
        ]});
        let (s, b) = api.post("/api/v1/services/CUT/schedule", rules).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["rules[2].opens:overlapping_rule"]
        );
        let message = b["fields"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("09:00–12:00") && message.contains("11:00–14:00"),
            "{message}"
        );
        assert_eq!(app.count("schedule_rules").await, 0);
        assert_eq!(app.count("slots").await, 0);
    }
);

both!(
    a_closure_wholly_in_the_past_is_refused_and_records_nothing,
    |app| {
        let api = app.acme_api().await;
        let now = chrono::Utc::now();
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": (now - chrono::Duration::days(3)).to_rfc3339(),
                    "ends_at": (now - chrono::Duration::days(2)).to_rfc3339(),
                    "reason": "Leave"}),
            )
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(crate::helpers::field_codes(&b), ["ends_at:period_in_past"]);
        assert_eq!(app.count("closures").await, 0);
        // Leave that began yesterday and runs on is still taken.
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": (now - chrono::Duration::days(1)).to_rfc3339(),
                    "ends_at": (now + chrono::Duration::days(1)).to_rfc3339(),
                    "reason": "Leave"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
);
