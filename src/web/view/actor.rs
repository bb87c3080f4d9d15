//! Who did something, as people read it: a person's name (their email until they set one), an
//! API key by its name, the customer, or the system and which part of it. Ledgers and histories
//! store the actor's label (`user:…`, `apikey:ID:NAME`, `customer`, `system:…`); this says it.

use std::collections::HashMap;

use crate::domain::error::DomainResult;
use crate::domain::MerchantId;
use crate::infra::db::Db;

/// The names of the people who may appear in a merchant's records (its users and the operators).
pub struct People(HashMap<String, String>);

impl People {
    pub async fn of_merchant(db: &Db, merchant_id: MerchantId) -> DomainResult<People> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT email, display_name FROM users WHERE merchant_id = $1 OR merchant_id IS NULL",
        )
        .bind(merchant_id)
        .fetch_all(&db.pool)
        .await?;
        Ok(People(rows.into_iter().collect()))
    }

    /// The actor's label said in the request's language.
    pub fn say(&self, label: &str) -> String {
        let lang = crate::i18n::current();
        if let Some(email) = label.strip_prefix("user:") {
            return match self.0.get(email) {
                Some(name) if !name.trim().is_empty() => name.clone(),
                _ => email.to_string(),
            };
        }
        if let Some(rest) = label.strip_prefix("apikey:") {
            let name = rest.split_once(':').map_or(rest, |(_, n)| n);
            return lang.t1("actor-apikey", "name", name);
        }
        match label {
            "customer" => lang.t("actor-customer"),
            "migration" => lang.t("actor-migration"),
            other => lang.t1(
                "actor-system",
                "part",
                other.strip_prefix("system:").unwrap_or(other),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::People;
    use crate::i18n::{scope, Lang};

    #[tokio::test]
    async fn the_systems_parts_are_named_in_each_language_and_an_unknown_one_as_written() {
        let people = People(Default::default());
        for lang in Lang::ALL {
            let (demo, expiry, other) = scope(lang, async {
                (
                    people.say("system:demo"),
                    people.say("system:expiry"),
                    people.say("system:something-new"),
                )
            })
            .await;
            assert!(!demo.contains("demo"), "{lang:?}: {demo}");
            assert_ne!(demo, expiry);
            assert!(other.contains("something-new"), "{lang:?}: {other}");
        }
    }
}
