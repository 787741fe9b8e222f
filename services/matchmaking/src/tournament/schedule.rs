//! Scheduled arenas: the operator's file of rules (TOML), each a cron
//! pattern (minute hour day-of-month month day-of-week, in UTC) and the
//! arena it starts:
//!
//! ```toml
//! [[arena]]
//! name = "Hourly Kalah"
//! cron = "0 * * * *"
//! variant = "kalah"
//! clock = "3+2"        # minutes + seconds a move
//! minutes = 30         # how long it runs
//! rated = true
//! # min_rating = 1200, max_rating = 1800, max_players = 500
//! # announce_minutes = 60  (listed and open to join this long before)
//! ```
//!
//! Pure: [`due`] says which arenas should exist at a time; the caller
//! inserts them under a key made of the rule and the start, so any number
//! of instances may plan at once and each arena is made once.

use std::str::FromStr;

use mancala_proto::VariantName;
use mancala_proto::game::TimeControl;
use serde::Deserialize;
use time::OffsetDateTime;

use crate::queue::QueueSpec;

/// The longest arena: a day.
pub const MAX_MINUTES: u32 = 24 * 60;

/// One rule as the file writes it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleText {
    name: String,
    cron: String,
    variant: String,
    clock: String,
    minutes: u32,
    #[serde(default = "yes")]
    rated: bool,
    min_rating: Option<u32>,
    max_rating: Option<u32>,
    max_players: Option<u32>,
    #[serde(default = "an_hour")]
    announce_minutes: u32,
}

fn yes() -> bool {
    true
}

fn an_hour() -> u32 {
    60
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    #[serde(default)]
    arena: Vec<RuleText>,
}

/// What every arena of a rule is.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub variant: VariantName,
    pub time_control: TimeControl,
    pub minutes: u32,
    pub rated: bool,
    pub min_rating: Option<u32>,
    pub max_rating: Option<u32>,
    pub max_players: Option<u32>,
}

/// A rule of the schedule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    cron: croner::Cron,
    pub shape: Shape,
    pub announce_minutes: u32,
}

/// An arena the schedule wants to exist.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// `rule name @ start` (RFC 3339): unique, so planning twice makes one.
    pub key: String,
    pub name: String,
    pub starts_at: OffsetDateTime,
    pub shape: Shape,
}

/// Why a schedule file was refused (at start-up: a bad file stops the
/// process rather than running without the arenas it promised).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ScheduleError {
    #[error("the schedule is not valid TOML: {0}")]
    Toml(String),
    #[error("arena {name:?}: {problem}")]
    Rule { name: String, problem: String },
}

/// Reads a schedule file's text.
pub fn parse(text: &str) -> Result<Vec<Rule>, ScheduleError> {
    let file: FileText = toml::from_str(text).map_err(|e| ScheduleError::Toml(e.to_string()))?;
    let mut rules = Vec::with_capacity(file.arena.len());
    for text in file.arena {
        let problem = |problem: &str| ScheduleError::Rule {
            name: text.name.clone(),
            problem: problem.to_owned(),
        };
        let name = mancala_proto::tournament::TOURNAMENT_NAME
            .clean(&text.name)
            .map_err(|error| problem(&error.to_string()))?;
        if rules.iter().any(|rule: &Rule| rule.name == name) {
            return Err(problem("two rules with one name"));
        }
        let cron = croner::Cron::from_str(&text.cron)
            .map_err(|e| problem(&format!("cron {:?}: {e}", text.cron)))?;
        let queue = QueueSpec::parse(&format!("{}:{}", text.variant, text.clock))
            .ok_or_else(|| problem("`variant` is kalah, oware or mangala and `clock` like 3+2"))?;
        if !(1..=MAX_MINUTES).contains(&text.minutes) {
            return Err(problem("`minutes` is 1 to 1,440"));
        }
        if [text.min_rating, text.max_rating]
            .into_iter()
            .flatten()
            .any(|band| band > mancala_proto::tournament::MAX_RATING_BAND)
        {
            return Err(problem("`min_rating` and `max_rating` are 0 to 5,000"));
        }
        if let (Some(low), Some(high)) = (text.min_rating, text.max_rating)
            && low > high
        {
            return Err(problem("`min_rating` above `max_rating`"));
        }
        rules.push(Rule {
            name,
            cron,
            shape: Shape {
                variant: queue.variant,
                time_control: queue.time_control,
                minutes: text.minutes,
                rated: text.rated,
                min_rating: text.min_rating,
                max_rating: text.max_rating,
                max_players: text.max_players,
            },
            announce_minutes: text.announce_minutes,
        });
    }
    Ok(rules)
}

fn to_chrono(at: OffsetDateTime) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp(at.unix_timestamp(), 0)
}

fn from_chrono(at: chrono::DateTime<chrono::Utc>) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp(at.timestamp()).ok()
}

impl Rule {
    /// The first start at or after `at`.
    pub fn next_start(&self, at: OffsetDateTime) -> Option<OffsetDateTime> {
        let next = self.cron.find_next_occurrence(&to_chrono(at)?, true).ok()?;
        from_chrono(next)
    }
}

/// The arenas that should exist at `now`: of each rule, the one running
/// (started less than its length ago) and those starting within its
/// announce time.
pub fn due(rules: &[Rule], now: OffsetDateTime) -> Vec<Planned> {
    let mut planned = Vec::new();
    for rule in rules {
        let length = time::Duration::minutes(i64::from(rule.shape.minutes));
        let horizon = now + time::Duration::minutes(i64::from(rule.announce_minutes));
        // From the earliest start that could still be running.
        let mut at = now - length + time::Duration::seconds(1);
        while let Some(start) = rule.next_start(at) {
            if start > horizon {
                break;
            }
            planned.push(Planned {
                key: format!(
                    "{}@{}",
                    rule.name,
                    start
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap_or_default()
                ),
                name: rule.name.clone(),
                starts_at: start,
                shape: rule.shape.clone(),
            });
            at = start + time::Duration::minutes(1);
        }
    }
    planned.sort_by_key(|plan| plan.starts_at);
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const FILE: &str = r#"
[[arena]]
name = "Hourly Kalah"
cron = "0 * * * *"
variant = "kalah"
clock = "3+2"
minutes = 30

[[arena]]
name = "Daily Oware"
cron = "0 21 * * *"
variant = "oware"
clock = "10+5"
minutes = 60
rated = false
min_rating = 1200
max_rating = 1800
max_players = 500
announce_minutes = 120
"#;

    #[test]
    fn a_file_of_rules_reads_into_shapes() {
        let rules = parse(FILE).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].shape.variant, VariantName::Kalah);
        assert_eq!(
            rules[0].shape.time_control,
            TimeControl {
                initial_secs: 180,
                increment_secs: 2
            }
        );
        assert!(rules[0].shape.rated, "rated unless said");
        assert_eq!(rules[0].announce_minutes, 60);
        assert_eq!(rules[1].shape.max_players, Some(500));
        assert!(!rules[1].shape.rated);
    }

    #[test]
    fn the_example_schedule_in_deploy_reads() {
        let rules = parse(include_str!("../../../../deploy/tournaments.toml")).unwrap();
        assert_eq!(rules.len(), 3);
    }

    #[test]
    fn bad_rules_are_refused_with_their_name() {
        for (text, problem) in [
            (
                "[[arena]]\nname = \"x\"\ncron = \"61 * * * *\"\nvariant = \"kalah\"\nclock = \"3+2\"\nminutes = 30",
                "cron",
            ),
            (
                "[[arena]]\nname = \"x\"\ncron = \"0 * * * *\"\nvariant = \"chess\"\nclock = \"3+2\"\nminutes = 30",
                "variant",
            ),
            (
                "[[arena]]\nname = \"x\"\ncron = \"0 * * * *\"\nvariant = \"kalah\"\nclock = \"3\"\nminutes = 30",
                "clock",
            ),
            (
                "[[arena]]\nname = \"x\"\ncron = \"0 * * * *\"\nvariant = \"kalah\"\nclock = \"3+2\"\nminutes = 0",
                "minutes",
            ),
            (
                "[[arena]]\nname = \"x\"\ncron = \"0 * * * *\"\nvariant = \"kalah\"\nclock = \"3+2\"\nminutes = 30\nmin_rating = 1900\nmax_rating = 1500",
                "min_rating",
            ),
        ] {
            match parse(text) {
                Err(ScheduleError::Rule {
                    name,
                    problem: said,
                }) => {
                    assert_eq!(name, "x");
                    assert!(said.contains(problem), "{said}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(
            parse("[[arena]]\nname = 3"),
            Err(ScheduleError::Toml(_))
        ));
        assert!(matches!(
            parse("[[arena]]\nname = \"x\"\nsurprise = 1"),
            Err(ScheduleError::Toml(_))
        ));
    }

    #[test]
    fn due_lists_the_running_arena_and_those_announced() {
        let rules = parse(FILE).unwrap();
        let now = datetime!(2026-12-06 20:10 UTC);
        let planned = due(&rules, now);
        let listed: Vec<(&str, OffsetDateTime)> = planned
            .iter()
            .map(|p| (p.name.as_str(), p.starts_at))
            .collect();
        assert_eq!(
            listed,
            [
                ("Hourly Kalah", datetime!(2026-12-06 20:00 UTC)),
                ("Hourly Kalah", datetime!(2026-12-06 21:00 UTC)),
                ("Daily Oware", datetime!(2026-12-06 21:00 UTC)),
            ]
        );
        assert_eq!(planned[0].key, "Hourly Kalah@2026-12-06T20:00:00Z");
        // At 20:30 the 20:00 arena has ended.
        let later = due(&rules, datetime!(2026-12-06 20:30 UTC));
        assert_eq!(later[0].starts_at, datetime!(2026-12-06 21:00 UTC));
        // The same moment plans the same keys: planning is idempotent.
        let keys = |p: &[Planned]| p.iter().map(|p| p.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&due(&rules, now)), keys(&planned));
    }
}
