//! The variant as the wire carries it, with a schema: a mirror of
//! `mancala_rules::Variant`'s serde form, `{"variant": "kalah", "pits": 6,
//! "seeds": 4, "empty_capture": false, "end": "immediate"}`, or
//! `{"variant": "oware"}`, `{"variant": "mangala"}`.
//!
//! A request may also name the game alone, `"kalah"`, wherever a variant
//! goes: the standard rules. Answers always carry the object form, so a
//! reader meets one shape; writers may use the short one.

use std::borrow::Cow;

use mancala_rules::{KalahEnd, KalahOptions, Variant};
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

/// When a Kalah game ends.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KalahEndSpec {
    /// After a move that leaves a side empty (the default).
    #[default]
    Immediate,
    /// When the player to move has no stones.
    OnTurn,
}

fn six() -> u8 {
    6
}

fn four() -> u8 {
    4
}

/// A rule set and its options. Read from a request as a name
/// (`"kalah"`: the standard rules) or as [`VariantObject`]; written as
/// the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "variant", rename_all = "snake_case")]
pub enum VariantSpec {
    Kalah {
        pits: u8,
        seeds: u8,
        empty_capture: bool,
        end: KalahEndSpec,
    },
    Oware {},
    Mangala {},
}

/// A variant with its options, as an object: `{"variant": "kalah",
/// "seeds": 5}`. Options left out take their defaults.
///
/// The same shape as [`VariantSpec`], kept apart so that the short form
/// (a name) can be read beside it; a test checks the two agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, ToSchema)]
#[serde(tag = "variant", rename_all = "snake_case", deny_unknown_fields)]
pub enum VariantObject {
    Kalah {
        /// Pits a side: 6 on a board that is played (the rules engine
        /// also knows smaller ones, for analysis).
        #[serde(default = "six")]
        #[schema(minimum = 6, maximum = 6)]
        pits: u8,
        /// Stones a pit at the start: 3 to 6 on a board that is played.
        #[serde(default = "four")]
        #[schema(minimum = 3, maximum = 6)]
        seeds: u8,
        #[serde(default)]
        empty_capture: bool,
        #[serde(default)]
        end: KalahEndSpec,
    },
    // Braces, not unit variants: serde lets an internally tagged unit
    // variant carry any other field unnoticed, and `{"variant": "oware",
    // "seeds": 9}` must be refused like any unknown field.
    Oware {},
    Mangala {},
}

impl From<VariantObject> for VariantSpec {
    fn from(object: VariantObject) -> VariantSpec {
        match object {
            VariantObject::Kalah {
                pits,
                seeds,
                empty_capture,
                end,
            } => VariantSpec::Kalah {
                pits,
                seeds,
                empty_capture,
                end,
            },
            VariantObject::Oware {} => VariantSpec::Oware {},
            VariantObject::Mangala {} => VariantSpec::Mangala {},
        }
    }
}

impl<'de> Deserialize<'de> for VariantSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<VariantSpec, D::Error> {
        struct Either;

        impl<'de> Visitor<'de> for Either {
            type Value = VariantSpec;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a variant: \"kalah\", \"oware\" or \"mangala\", or an object such as {\"variant\": \"kalah\", \"seeds\": 5}",
                )
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<VariantSpec, E> {
                VariantName::parse(text)
                    .map(VariantName::standard)
                    .ok_or_else(|| E::unknown_variant(text, VARIANT_NAMES))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<VariantSpec, A::Error> {
                VariantObject::deserialize(MapAccessDeserializer::new(map)).map(VariantSpec::from)
            }
        }

        deserializer.deserialize_any(Either)
    }
}

const VARIANT_NAMES: &[&str] = &["kalah", "oware", "mangala"];

/// In a schema: `oneOf` the name and the object.
impl JsonSchema for VariantSpec {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("VariantSpec")
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A variant: its name alone (the standard rules) or an object with its options.",
            "oneOf": [
                generator.subschema_for::<VariantName>(),
                generator.subschema_for::<VariantObject>(),
            ],
        })
    }
}

impl utoipa::PartialSchema for VariantSpec {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{OneOfBuilder, Ref};
        OneOfBuilder::new()
            .description(Some(
                "A variant: its name alone (the standard rules) or an object with its options.",
            ))
            .item(Ref::from_schema_name(VariantName::name()))
            .item(Ref::from_schema_name(VariantObject::name()))
            .into()
    }
}

impl ToSchema for VariantSpec {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.push((VariantName::name().into(), VariantName::schema()));
        schemas.push((VariantObject::name().into(), VariantObject::schema()));
        <VariantObject as ToSchema>::schemas(schemas);
    }
}

/// Which game, without its options: what queues, leaderboards and lists
/// are per. Written `kalah`, `oware` or `mangala` everywhere.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
    ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VariantName {
    Kalah,
    Oware,
    Mangala,
}

impl VariantName {
    /// Every game, in the order the lists show them.
    pub const ALL: [VariantName; 3] =
        [VariantName::Kalah, VariantName::Oware, VariantName::Mangala];

    pub const fn as_str(self) -> &'static str {
        match self {
            VariantName::Kalah => "kalah",
            VariantName::Oware => "oware",
            VariantName::Mangala => "mangala",
        }
    }

    pub fn parse(text: &str) -> Option<VariantName> {
        VariantName::ALL
            .into_iter()
            .find(|name| name.as_str() == text)
    }

    /// The game with its standard options (Kalah 6 × 4), for the rules.
    pub fn standard_rules(self) -> Variant {
        match self {
            VariantName::Kalah => Variant::Kalah(KalahOptions::default()),
            VariantName::Oware => Variant::Oware,
            VariantName::Mangala => Variant::Mangala,
        }
    }

    /// The game with its standard options, for the wire.
    pub fn standard(self) -> VariantSpec {
        VariantSpec::from(self.standard_rules())
    }
}

impl std::fmt::Display for VariantName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl VariantSpec {
    /// Which game this is.
    pub fn name(&self) -> VariantName {
        match self {
            VariantSpec::Kalah { .. } => VariantName::Kalah,
            VariantSpec::Oware {} => VariantName::Oware,
            VariantSpec::Mangala {} => VariantName::Mangala,
        }
    }
}

/// Options out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VariantError(String);

impl TryFrom<VariantSpec> for Variant {
    type Error = VariantError;

    fn try_from(spec: VariantSpec) -> Result<Variant, VariantError> {
        Ok(match spec {
            VariantSpec::Kalah {
                pits,
                seeds,
                empty_capture,
                end,
            } => {
                let options = KalahOptions::new(pits, seeds)
                    .map_err(|error| VariantError(error.to_string()))?
                    .with_empty_capture(empty_capture)
                    .with_end(match end {
                        KalahEndSpec::Immediate => KalahEnd::Immediate,
                        KalahEndSpec::OnTurn => KalahEnd::OnTurn,
                    });
                Variant::Kalah(options)
            }
            VariantSpec::Oware {} => Variant::Oware,
            VariantSpec::Mangala {} => Variant::Mangala,
        })
    }
}

impl From<Variant> for VariantSpec {
    fn from(variant: Variant) -> VariantSpec {
        match variant {
            Variant::Kalah(options) => VariantSpec::Kalah {
                pits: options.pits(),
                seeds: options.seeds(),
                empty_capture: options.empty_capture(),
                end: match options.end() {
                    KalahEnd::Immediate => KalahEndSpec::Immediate,
                    KalahEnd::OnTurn => KalahEndSpec::OnTurn,
                },
            },
            Variant::Oware => VariantSpec::Oware {},
            Variant::Mangala => VariantSpec::Mangala {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_round_trips_every_variant() {
        for text in [
            r#"{"variant":"kalah","pits":6,"seeds":4,"empty_capture":false,"end":"immediate"}"#,
            r#"{"variant":"kalah","pits":6,"seeds":3,"empty_capture":true,"end":"on_turn"}"#,
            r#"{"variant":"oware"}"#,
            r#"{"variant":"mangala"}"#,
        ] {
            let spec: VariantSpec = serde_json::from_str(text).unwrap();
            let variant = Variant::try_from(spec).unwrap();
            assert_eq!(VariantSpec::from(variant), spec);
            assert_eq!(serde_json::to_string(&spec).unwrap(), text);
        }
        let short: VariantSpec = serde_json::from_str(r#"{"variant":"kalah"}"#).unwrap();
        assert_eq!(
            Variant::try_from(short).unwrap(),
            Variant::Kalah(KalahOptions::default())
        );
        let bad: VariantSpec = serde_json::from_str(r#"{"variant":"kalah","pits":9}"#).unwrap();
        assert!(Variant::try_from(bad).is_err());
        assert!(serde_json::from_str::<VariantSpec>(r#"{"variant":"chess"}"#).is_err());
        for name in VariantName::ALL {
            let short: VariantSpec =
                serde_json::from_str(&format!("\"{}\"", name.as_str())).unwrap();
            assert_eq!(
                short,
                name.standard(),
                "the name alone is the standard rules"
            );
        }
        let error = serde_json::from_str::<VariantSpec>(r#""chess""#).unwrap_err();
        assert!(error.to_string().contains("kalah"), "{error}");
        for not_a_variant in ["4", "[\"kalah\"]", "null", "true"] {
            assert!(serde_json::from_str::<VariantSpec>(not_a_variant).is_err());
        }
        for unknown in [
            r#"{"variant":"oware","seeds":9}"#,
            r#"{"variant":"mangala","pits":7}"#,
            r#"{"variant":"kalah","stones":4}"#,
        ] {
            assert!(
                serde_json::from_str::<VariantSpec>(unknown).is_err(),
                "{unknown} was accepted"
            );
        }
    }

    #[test]
    fn names_are_the_wire_names() {
        for name in VariantName::ALL {
            assert_eq!(VariantName::parse(name.as_str()), Some(name));
            assert_eq!(name.standard().name(), name);
            let text = serde_json::to_string(&name.standard()).unwrap();
            assert!(text.contains(&format!(r#""variant":"{name}""#)), "{text}");
        }
        assert_eq!(VariantName::parse("chess"), None);
    }
}
