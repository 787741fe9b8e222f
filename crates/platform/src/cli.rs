//! Declared settings: every setting a binary reads is a field of a
//! `#[derive(clap::Args)]` group (the shared [`Settings`](crate::Settings),
//! the sockets', each service's own), with its environment name, default
//! and help beside it. A binary's [`Declaration`] is the union of its
//! groups, so `--help` lists every variable, any of them can be given as a
//! flag instead (`APP_AI_WORKERS` is `--ai-workers`), an `APP_*` variable
//! nobody declared is reported at start-up, and `deploy/settings.tsv` (the
//! list the deployment checks read) is generated from the same place.
//!
//! A group shared by two services (the sockets', the instance's) is
//! declared once and appears once in a binary that runs both.

use std::collections::HashMap;
use std::error::Error as _;
use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue};
use clap::{Arg, ArgMatches, Command, FromArgMatches};

use crate::values::ConfigError;

/// The settings one binary reads.
#[derive(Clone)]
pub struct Declaration {
    command: Command,
}

/// One declared setting, for listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The environment variable.
    pub name: String,
    /// The flag that overrides it.
    pub flag: String,
    /// The default as written, empty when there is none (or it is made
    /// at start, like a fresh instance id).
    pub default: String,
    /// The first line of its help.
    pub help: String,
}

/// Settings read from a command line and environment.
pub struct Parsed {
    matches: ArgMatches,
    unknown: Vec<String>,
}

impl Declaration {
    pub fn new(binary: &'static str, about: &'static str) -> Declaration {
        Declaration {
            command: Command::new(binary)
                .about(about)
                .next_line_help(true)
                .max_term_width(100),
        }
    }

    /// Adds a group's settings. A group already present (shared by two
    /// services of this binary) is added once.
    ///
    /// # Panics
    /// When two different settings share an id or a flag: a programming
    /// error, caught by the tests that build every binary's declaration.
    #[must_use]
    pub fn with<T: clap::Args>(mut self) -> Declaration {
        let group = T::augment_args(Command::new("group"));
        for arg in group.get_arguments() {
            let arg = flag_from_env(arg.clone());
            let known = self
                .command
                .get_arguments()
                .find(|known| known.get_id() == arg.get_id() || known.get_long() == arg.get_long())
                .map(|known| {
                    (
                        known.get_env().map(ToOwned::to_owned),
                        known.get_id().clone(),
                    )
                });
            match known {
                Some((env, id)) => assert!(
                    env.as_deref() == arg.get_env() && &id == arg.get_id(),
                    "two settings called {:?}: {:?} and {:?}",
                    arg.get_id(),
                    env,
                    arg.get_env()
                ),
                None => self.command = self.command.arg(arg),
            }
        }
        self
    }

    /// Every declared setting, in declaration order.
    pub fn settings(&self) -> Vec<Declared> {
        self.command
            .get_arguments()
            .filter_map(|arg| {
                let name = arg.get_env()?.to_string_lossy().into_owned();
                let default = if arg.is_hide_default_value_set() {
                    String::new()
                } else {
                    arg.get_default_values()
                        .iter()
                        .map(|value| value.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(",")
                };
                let help = arg
                    .get_help()
                    .map(|help| help.to_string())
                    .unwrap_or_default();
                Some(Declared {
                    name,
                    flag: format!("--{}", arg.get_long().unwrap_or_default()),
                    default,
                    help: help.lines().next().unwrap_or_default().to_owned(),
                })
            })
            .collect()
    }

    /// Reads the process's command line and environment (the command line
    /// wins). `--help` prints every setting and exits; so does a command
    /// line clap cannot read. A bad value is an error naming its variable.
    pub fn parse_process(self) -> Result<Parsed, ConfigError> {
        let unknown = self.unknown(std::env::vars_os().map(|(name, _)| name));
        let command = self.command.clone();
        match command.try_get_matches() {
            Ok(matches) => Ok(Parsed { matches, unknown }),
            Err(error) if is_usage(&error) => error.exit(),
            Err(error) => Err(self.config_error(&error)),
        }
    }

    /// Reads name-value pairs only (tests, and services built in-process):
    /// the process environment is not consulted.
    pub fn parse_vars(
        self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Parsed, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let unknown = self.unknown(vars.keys().map(OsString::from));
        let mut argv = vec![OsString::from(self.command.get_name().to_owned())];
        for arg in self.command.get_arguments() {
            let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                continue;
            };
            if let Some(value) = env.to_str().and_then(|env| vars.get(env)) {
                argv.push(format!("--{long}={value}").into());
            }
        }
        let command = self.command.clone().mut_args(|arg| arg.env(None));
        command
            .try_get_matches_from(argv)
            .map(|matches| Parsed { matches, unknown })
            .map_err(|error| self.config_error(&error))
    }

    /// The `APP_*` names given that no setting declares.
    fn unknown(&self, names: impl Iterator<Item = OsString>) -> Vec<String> {
        let declared: Vec<&std::ffi::OsStr> = self
            .command
            .get_arguments()
            .filter_map(Arg::get_env)
            .collect();
        let mut unknown: Vec<String> = names
            .filter(|name| !declared.contains(&name.as_os_str()))
            .filter_map(|name| name.into_string().ok())
            .filter(|name| name.starts_with("APP_"))
            .collect();
        unknown.sort();
        unknown
    }

    /// Names the variable behind the flag clap complains about; never
    /// repeats the value, which may be a secret.
    fn config_error(&self, error: &clap::Error) -> ConfigError {
        let flag = match error.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(flag)) => flag.clone(),
            _ => String::new(),
        };
        let arg = self.command.get_arguments().find(|arg| {
            arg.get_long()
                .is_some_and(|long| flag.split([' ', '=']).next() == Some(&format!("--{long}")))
        });
        let name = arg
            .and_then(Arg::get_env)
            .map_or_else(|| flag.clone(), |env| env.to_string_lossy().into_owned());
        let reason = match (error.source(), error.get(ContextKind::ValidValue)) {
            (Some(source), _) => source.to_string(),
            (None, Some(ContextValue::Strings(valid))) => {
                format!("expected one of {}", valid.join(", "))
            }
            _ => error.kind().as_str().unwrap_or("not valid").to_owned(),
        };
        ConfigError { name, reason }
    }
}

impl Parsed {
    /// One group's settings.
    pub fn get<T: FromArgMatches>(&self) -> Result<T, ConfigError> {
        T::from_arg_matches(&self.matches).map_err(|error| ConfigError {
            name: String::new(),
            reason: error.to_string(),
        })
    }

    /// `APP_*` variables that were set but that this binary does not read:
    /// most often a misspelling, or one meant for another service.
    pub fn unknown(&self) -> &[String] {
        &self.unknown
    }

    /// Logs a warning for each [`unknown`](Parsed::unknown) variable; call
    /// once logging is set up.
    pub fn warn_unknown(&self) {
        for name in &self.unknown {
            tracing::warn!(
                name,
                "{name} is set but no setting of this binary reads it (misspelt?)"
            );
        }
    }
}

/// Reads one group from name-value pairs: what the services' `from_vars`
/// (and their tests) use.
pub fn from_vars<T: clap::Args + FromArgMatches>(
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<T, ConfigError> {
    Declaration::new("settings", "")
        .with::<T>()
        .parse_vars(vars)?
        .get()
}

/// `APP_AI_WORKERS` is `--ai-workers`, `DATABASE_URL` `--database-url`:
/// one name for a setting in both places.
fn flag_from_env(arg: Arg) -> Arg {
    let Some(env) = arg.get_env().and_then(|env| env.to_str()) else {
        return arg;
    };
    let flag = env
        .strip_prefix("APP_")
        .unwrap_or(env)
        .to_ascii_lowercase()
        .replace('_', "-");
    arg.long(flag)
}

fn is_usage(error: &clap::Error) -> bool {
    use clap::error::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            | ErrorKind::UnknownArgument
            | ErrorKind::ArgumentConflict
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::tests::vars;

    #[derive(clap::Args, Debug)]
    struct Sample {
        /// How long to wait.
        #[arg(env = "APP_SAMPLE_WAIT_SECS", default_value = "5", value_parser = crate::values::seconds)]
        wait: Duration,
        /// How many.
        #[arg(env = "APP_SAMPLE_COUNT", default_value_t = 2)]
        count: u32,
    }

    #[derive(clap::Args, Debug)]
    struct AlsoSample {
        #[arg(env = "APP_SAMPLE_COUNT", default_value_t = 2)]
        count: u32,
    }

    #[test]
    fn values_come_from_the_variables_or_the_defaults() {
        let sample: Sample = from_vars(vars(&[("APP_SAMPLE_COUNT", "7")])).unwrap();
        assert_eq!((sample.wait, sample.count), (Duration::from_secs(5), 7));
    }

    #[test]
    fn a_fraction_where_a_whole_number_is_declared_is_refused_by_name() {
        let error = from_vars::<Sample>(vars(&[("APP_SAMPLE_COUNT", "2.7")])).unwrap_err();
        assert_eq!(error.name, "APP_SAMPLE_COUNT");
        assert!(!error.reason.contains("2.7"), "{}", error.reason);
    }

    #[test]
    fn undeclared_app_variables_are_reported() {
        let parsed = Declaration::new("test", "")
            .with::<Sample>()
            .parse_vars(vars(&[("APP_SAMPLE_CONT", "7"), ("HOME", "/root")]))
            .unwrap();
        assert_eq!(parsed.unknown(), ["APP_SAMPLE_CONT"]);
    }

    #[test]
    fn flags_are_named_after_the_variables_and_shared_groups_appear_once() {
        let declaration = Declaration::new("test", "")
            .with::<Sample>()
            .with::<AlsoSample>();
        let listed = declaration.settings();
        let names: Vec<_> = listed.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["APP_SAMPLE_WAIT_SECS", "APP_SAMPLE_COUNT"]);
        assert_eq!(listed[0].flag, "--sample-wait-secs");
        assert_eq!(listed[0].default, "5");
        assert_eq!(listed[0].help, "How long to wait");
    }
}
