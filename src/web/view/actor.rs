//! Who did something, as people read it: a person's name (their email until they set one), an
//! API key by its name, the customer, or the system and which part of it. Ledgers and histories
//! store the actor's label (`user:…`, `apikey:ID:NAME`, `customer`, `system:…`); this says it.

use std::collections::HashMap;

use crate::domain::kernel::error::DomainResult;
use crate::domain::tenancy::users;
use crate::domain::MerchantId;
use crate::infra::db::Db;

/// An actor's label said without looking up names: a person by their email, the system, the
/// customer and API keys as [`People::say`] says them. For lists that name a few actors each
/// row (who made a batch, a closure, a key).
pub fn said(label: &str) -> String {
    People(HashMap::new()).say(label)
}

/// The names of the people who may appear in a merchant's records (its users and the operators).
pub struct People(HashMap<String, String>);

impl People {
    /// The names of everyone a page may name: a merchant's people and the operators, or, for an
    /// operator's page across merchants (`None`), everyone.
    pub async fn of(db: &Db, merchant_id: Option<MerchantId>) -> DomainResult<People> {
        let names = users::display_names(db, merchant_id).await?;
        Ok(People(names.into_iter().collect()))
    }

    pub async fn of_merchant(db: &Db, merchant_id: MerchantId) -> DomainResult<People> {
        Self::of(db, Some(merchant_id)).await
    }

    /// Whether someone else here goes by this name too (without case or spaces).
    fn shared(&self, email: &str, name: &str) -> bool {
        let fold = |s: &str| -> String {
            s.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let name = fold(name);
        self.0
            .iter()
            .any(|(other, theirs)| other != email && fold(theirs) == name)
    }

    /// The actor's label said in the request's language.
    pub fn say(&self, label: &str) -> String {
        let lang = crate::i18n::current();
        if let Some(email) = label.strip_prefix("user:") {
            return match self.0.get(email) {
                // Two people of one name are told apart by their emails.
                Some(name) if !name.trim().is_empty() && self.shared(email, name) => lang.t2(
                    "actor-person-same-name",
                    ("name", name.as_str().into()),
                    ("email", email.into()),
                ),
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

    #[tokio::test]
    async fn two_people_of_one_name_are_told_apart_by_their_emails() {
        let people = People(
            [
                ("a@x.cn", "李娜"),
                ("b@x.cn", "李 娜"),
                ("c@x.cn", "王美玲"),
                ("d@x.cn", ""),
            ]
            .into_iter()
            .map(|(e, n)| (e.to_string(), n.to_string()))
            .collect(),
        );
        let said = scope(Lang::ZhCn, async {
            ["a@x.cn", "b@x.cn", "c@x.cn", "d@x.cn"].map(|e| people.say(&format!("user:{e}")))
        })
        .await;
        assert!(
            said[0].contains("李娜") && said[0].contains("a@x.cn"),
            "{said:?}"
        );
        assert!(said[1].contains("b@x.cn"), "{said:?}");
        assert_eq!(said[2], "王美玲");
        assert_eq!(said[3], "d@x.cn");
    }
}
