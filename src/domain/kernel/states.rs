//! States and kinds kept in TEXT columns, as Rust enums: one `text_enum!` each, so a state is
//! compared as a type, never as a string, and a misspelt one does not compile.
//!
//! An enum converts from its column in `FromRow` with `#[sqlx(try_from = "String")]`, to its
//! column with `as_str()`, and serialises as that same text, so the JSON and the columns say the
//! same words.

/// A stored text that names no variant: the database holds a state this build does not know.
#[derive(Debug)]
pub struct UnknownState {
    pub kind: &'static str,
    pub text: String,
}

impl std::fmt::Display for UnknownState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} {:?}", self.kind, self.text)
    }
}

impl std::error::Error for UnknownState {}

/// `text_enum! { pub enum SlotStatus { Open = "OPEN", Closed = "CLOSED" } }`
#[macro_export]
macro_rules! text_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every variant's text, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The text of the column (and of the JSON).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::domain::kernel::states::UnknownState;
            fn try_from(s: String) -> Result<$name, Self::Error> {
                $name::parse(&s).ok_or($crate::domain::kernel::states::UnknownState {
                    kind: stringify!($name),
                    text: s,
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        // The API's document shows the state as a string among its texts.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($text),+]))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "unknown {} {:?}",
                        stringify!($name),
                        s
                    ))
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    text_enum! {
        enum Light { Red = "RED", Green = "GREEN" }
    }

    #[test]
    fn a_text_enum_round_trips_through_its_text_and_refuses_others() {
        for &l in Light::ALL {
            assert_eq!(Light::parse(l.as_str()), Some(l));
            assert_eq!(Light::try_from(l.to_string()).unwrap(), l);
            assert_eq!(serde_json::to_string(&l).unwrap(), format!("\"{l}\""));
        }
        assert!(Light::try_from("red".to_string()).is_err());
        assert!(serde_json::from_str::<Light>("\"BLUE\"").is_err());
        assert_eq!(
            serde_json::from_str::<Light>("\"GREEN\"").unwrap(),
            Light::Green
        );
        assert_eq!(Light::NAMES, ["RED", "GREEN"]);
    }
}
