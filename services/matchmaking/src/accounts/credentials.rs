//! Usernames and passwords as the API accepts them.

use mancala_platform::{ExposeSecret, SecretString};

/// A valid username: 3 to 20 characters of `[A-Za-z0-9_-]`. Uniqueness
/// ignores case (the database's index on `lower(username)`), but the
/// player's own spelling is kept for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Username(String);

/// A valid password: 8 to 128 characters. Kept secret.
#[derive(Debug)]
pub(crate) struct Password(SecretString);

/// Why a username or password was refused: the message goes to the client
/// with code `invalid_input`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CredentialError {
    #[error("usernames are 3 to 20 characters")]
    UsernameLength,
    #[error("usernames use only letters, digits, '_' and '-'")]
    UsernameCharacters,
    #[error("passwords are 8 to 128 characters")]
    PasswordLength,
}

impl Username {
    pub(crate) fn parse(text: &str) -> Result<Username, CredentialError> {
        if !(3..=20).contains(&text.chars().count()) {
            return Err(CredentialError::UsernameLength);
        }
        if !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(CredentialError::UsernameCharacters);
        }
        Ok(Username(text.to_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl Password {
    /// Length counts characters, not bytes, so that any script gets the
    /// same rule.
    pub(crate) fn parse(text: SecretString) -> Result<Password, CredentialError> {
        if !(8..=128).contains(&text.expose_secret().chars().count()) {
            return Err(CredentialError::PasswordLength);
        }
        Ok(Password(text))
    }

    pub(crate) fn secret(&self) -> &SecretString {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_follow_the_rules() {
        assert!(Username::parse("abc").is_ok());
        assert!(Username::parse("A_b-9_______________").is_ok());
        assert_eq!(Username::parse("ab"), Err(CredentialError::UsernameLength));
        assert_eq!(
            Username::parse("a".repeat(21).as_str()),
            Err(CredentialError::UsernameLength)
        );
        assert_eq!(
            Username::parse("no spaces"),
            Err(CredentialError::UsernameCharacters)
        );
        assert_eq!(
            Username::parse("émile"),
            Err(CredentialError::UsernameCharacters)
        );
        assert_eq!(
            Username::parse("Alice").unwrap().as_str(),
            "Alice",
            "the spelling is kept"
        );
    }

    #[test]
    fn passwords_count_characters() {
        assert!(Password::parse(SecretString::from("12345678")).is_ok());
        assert!(Password::parse(SecretString::from("1234567")).is_err());
        assert!(
            Password::parse(SecretString::from("é".repeat(8))).is_ok(),
            "8 characters, 16 bytes"
        );
        assert!(Password::parse(SecretString::from("x".repeat(129))).is_err());
    }

    #[test]
    fn passwords_do_not_print() {
        let password = Password::parse(SecretString::from("hunter2hunter2")).unwrap();
        assert!(!format!("{password:?}").contains("hunter2"));
    }
}
