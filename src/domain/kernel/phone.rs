//! Phone numbers as people type them, read with libphonenumber's metadata (the `phonenumber`
//! crate): one customer whatever the spelling, and a `tel:` link a dialer reads.

use crate::domain::FieldError;
use crate::messages;

/// A phone number as people type it ("+86 138-0013-8000", "0086 138 0013 8000", "138 0013 8000"),
/// parsed with libphonenumber's metadata: `region` is where numbers typed without a country code
/// belong (the store's country). Returns the number for display (international format) and its
/// E.164 form, which identifies the customer: the four spellings above are one customer.
pub fn phone(
    raw: &str,
    region: Option<phonenumber::country::Id>,
) -> Result<(String, String), FieldError> {
    let shown = raw.trim();
    if shown.is_empty() {
        return Err(FieldError::new(
            "phone",
            "required",
            messages::required(&messages::label("phone")),
        ));
    }
    let bad = || FieldError::new("phone", "invalid_phone", messages::bad_phone());
    // libphonenumber reads letters as a keypad's digits ("1-800-FLOWERS"); nobody here types
    // those, and a stray letter is a typo, not a digit.
    let typed = shown
        .chars()
        .all(|c| c.is_ascii_digit() || " +-().".contains(c));
    if shown.len() > 40 || !typed {
        return Err(bad());
    }
    let number = phonenumber::parse(region, shown).map_err(|_| bad())?;
    if !phonenumber::is_valid(&number) {
        return Err(bad());
    }
    let e164 = number.format().mode(phonenumber::Mode::E164).to_string();
    let display = number
        .format()
        .mode(phonenumber::Mode::International)
        .to_string();
    Ok((display, e164))
}

/// A phone number as a `tel:` link ("tel:+8613800138000"); empty for no number. Dialers read
/// the digits and a leading +, not the spaces people write between groups.
pub fn tel_href(phone: &str) -> String {
    let digits: String = phone
        .chars()
        .filter(|c| *c == '+' || c.is_ascii_digit())
        .collect();
    if digits.is_empty() {
        digits
    } else {
        format!("tel:{digits}")
    }
}

#[cfg(test)]
mod phone_tests {
    use proptest::prelude::*;

    use super::phone;

    fn cn() -> Option<phonenumber::country::Id> {
        Some(phonenumber::country::Id::CN)
    }

    #[test]
    fn the_usual_spellings_of_one_mobile_are_one_customer() {
        let keys: Vec<String> = [
            "+86 138-0013-8000",
            "0086 138 0013 8000",
            "138 0013 8000",
            "13800138000",
        ]
        .iter()
        .map(|raw| phone(raw, cn()).unwrap().1)
        .collect();
        assert!(keys.iter().all(|k| k == "+8613800138000"), "{keys:?}");
    }

    #[test]
    fn visitors_numbers_from_abroad_are_taken_with_their_country_code() {
        for raw in [
            "+44 7911 123456",
            "+44 20 7946 0958",
            "+852 9123 4567",
            "+886 912 345 678",
            "+1 415 555 2671",
            "+49 1512 3456789",
        ] {
            let digits: String = raw.chars().filter(|c| c.is_ascii_digit()).collect();
            assert_eq!(
                phone(raw, cn()).map(|p| p.1),
                Ok(format!("+{digits}")),
                "{raw}"
            );
        }
        // Without the country code a number is read as the store's country's: a British mobile
        // typed the British way is not a Chinese number, and is refused (the message says to
        // start with + and the country code).
        assert!(phone("07911 123456", cn()).is_err());
        // Numbers set aside for films and examples are no one's.
        assert!(phone("+44 7700 900123", cn()).is_err());
    }

    proptest! {
        /// Spaces and dashes wherever a person puts them never change who the customer is.
        #[test]
        fn separators_never_change_the_customer_key(cuts in proptest::collection::vec(0usize..11, 0..4), dash in any::<bool>()) {
            let digits = "13800138000";
            let sep = if dash { '-' } else { ' ' };
            let mut typed = String::new();
            for (i, c) in digits.chars().enumerate() {
                if cuts.contains(&i) && i > 0 {
                    typed.push(sep);
                }
                typed.push(c);
            }
            prop_assert_eq!(phone(&typed, cn()).unwrap().1, "+8613800138000");
        }

        /// Whatever is typed, the answer is a refusal or a key in E.164 form: never a panic.
        #[test]
        fn any_text_is_refused_or_keyed_in_e164(raw in "\\PC{0,24}") {
            if let Ok((_, key)) = phone(&raw, cn()) {
                prop_assert!(key.starts_with('+'));
                prop_assert!(key[1..].chars().all(|c| c.is_ascii_digit()));
            }
        }
    }
}
