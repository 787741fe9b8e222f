//! The matchmaking service's own settings, beside the shared
//! [`mancala_platform::Settings`]. Read from the environment once, in
//! `main`, and passed by value.

use std::collections::HashMap;

use mancala_platform::ConfigError;
use mancala_platform::ratelimit::Limit;

/// Limits on signing in, per the abuse cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountSettings {
    /// `APP_LIMIT_SIGNUPS_PER_IP`: guests created and accounts registered
    /// from one address. Each costs a row (and a registration an argon2
    /// hash), so a script must not mint them freely.
    pub signups_per_ip: Limit,
    /// `APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT`: wrong passwords for one
    /// username, from anywhere: stops guessing one account's password.
    pub login_failures_per_account: Limit,
    /// `APP_LIMIT_LOGIN_FAILURES_PER_IP`: wrong passwords from one address,
    /// for any username: stops spraying one password over many accounts.
    pub login_failures_per_ip: Limit,
    /// `APP_TRUST_FORWARDED_FOR`: take the client's address from
    /// `Forwarded`/`X-Forwarded-For`. Only behind a proxy that sets them;
    /// otherwise a client could pick its own address and dodge the limits.
    pub trust_forwarded_for: bool,
}

impl Default for AccountSettings {
    fn default() -> AccountSettings {
        AccountSettings {
            signups_per_ip: Limit {
                max: 30,
                window_seconds: 3600,
            },
            login_failures_per_account: Limit {
                max: 10,
                window_seconds: 900,
            },
            login_failures_per_ip: Limit {
                max: 50,
                window_seconds: 900,
            },
            trust_forwarded_for: false,
        }
    }
}

impl AccountSettings {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<AccountSettings, ConfigError> {
        AccountSettings::from_vars(std::env::vars())
    }

    /// Reads the settings from name-value pairs.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<AccountSettings, ConfigError> {
        let vars: HashMap<String, String> = vars.into_iter().collect();
        let defaults = AccountSettings::default();
        let limit = |name: &'static str, default: Limit| -> Result<Limit, ConfigError> {
            vars.get(name).map_or(Ok(default), |text| {
                text.parse().map_err(|reason| ConfigError { name, reason })
            })
        };
        let trust_forwarded_for = match vars.get("APP_TRUST_FORWARDED_FOR").map(String::as_str) {
            None | Some("false" | "0") => false,
            Some("true" | "1") => true,
            Some(other) => {
                return Err(ConfigError {
                    name: "APP_TRUST_FORWARDED_FOR",
                    reason: format!("expected true or false, got {other:?}"),
                });
            }
        };
        Ok(AccountSettings {
            signups_per_ip: limit("APP_LIMIT_SIGNUPS_PER_IP", defaults.signups_per_ip)?,
            login_failures_per_account: limit(
                "APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT",
                defaults.login_failures_per_account,
            )?,
            login_failures_per_ip: limit(
                "APP_LIMIT_LOGIN_FAILURES_PER_IP",
                defaults.login_failures_per_ip,
            )?,
            trust_forwarded_for,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment_or_the_defaults() {
        let settings = AccountSettings::from_vars([
            ("APP_LIMIT_SIGNUPS_PER_IP".to_owned(), "3/60".to_owned()),
            ("APP_TRUST_FORWARDED_FOR".to_owned(), "true".to_owned()),
        ])
        .unwrap();
        assert_eq!(
            settings.signups_per_ip,
            Limit {
                max: 3,
                window_seconds: 60
            }
        );
        assert!(settings.trust_forwarded_for);
        assert_eq!(
            settings.login_failures_per_ip,
            AccountSettings::default().login_failures_per_ip
        );
        let error =
            AccountSettings::from_vars([("APP_LIMIT_LOGIN_FAILURES_PER_IP".into(), "many".into())])
                .unwrap_err();
        assert_eq!(error.name, "APP_LIMIT_LOGIN_FAILURES_PER_IP");
    }
}
