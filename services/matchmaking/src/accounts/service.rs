//! The accounts domain: what each endpoint does, over the store, the
//! token signer, the rate limits and the clock. Handlers only parse the
//! request and call one method here.

use mancala_platform::clock::timestamp;
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

use mancala_platform::background::Background;
use mancala_platform::jwt::TokenSigner;
use mancala_platform::ratelimit::{self, Decision, Limit};
use mancala_platform::revocation::Revocations;
use mancala_platform::{ApiError, Clock, Redis, SecretString, password};
use mancala_proto::moderation::Role;
use mancala_proto::{Credentials, ErrorCode, Player, Session};
use sqlx::PgPool;
use uuid::Uuid;

use super::credentials::{Password, Username};
use super::names::{NameLanguage, guest_name};
use super::network::network_of;
use super::refresh::RefreshToken;
use super::store::{self, PlayerRow};
use crate::config::AccountSettings;

/// Guest names tried before the name space is widened.
const NAME_ATTEMPTS: u32 = 8;

/// How long a session's tokens live.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenLifetimes {
    pub access: Duration,
    pub refresh: Duration,
}

/// Everything the accounts endpoints need; cheap to clone.
#[derive(Clone)]
pub(crate) struct Accounts {
    postgres: PgPool,
    redis: Redis,
    signer: Arc<TokenSigner>,
    clock: Clock,
    settings: AccountSettings,
    access_ttl: Duration,
    refresh_ttl: Duration,
    /// Checked against when the username does not exist, so that a login
    /// for an unknown name takes as long as a wrong password and does not
    /// reveal which usernames exist.
    decoy_hash: Arc<str>,
    /// Signed-out sessions, shared with this service's authenticator.
    revocations: Revocations,
    /// Where passwords are hashed (argon2id: tens of ms of a core and
    /// 19 MiB each): half the cores at most, at the least priority, so that
    /// a burst of sign-ins, each within its limits, never takes the cores
    /// the games run on.
    hashing: Background,
}

impl Accounts {
    /// Builds the domain. Hashes a decoy password once (tens of ms).
    pub(crate) fn new(
        postgres: PgPool,
        redis: Redis,
        signer: TokenSigner,
        clock: Clock,
        settings: AccountSettings,
        lifetimes: TokenLifetimes,
        revocations: Revocations,
    ) -> Result<Accounts, password::PasswordError> {
        let TokenLifetimes {
            access: access_ttl,
            refresh: refresh_ttl,
        } = lifetimes;
        let decoy_hash = password::hash(&SecretString::from(Uuid::new_v4().to_string()))?;
        Ok(Accounts {
            postgres,
            redis,
            signer: Arc::new(signer),
            clock,
            settings,
            access_ttl,
            refresh_ttl,
            decoy_hash: Arc::from(decoy_hash),
            revocations,
            hashing: Background::start("password", Background::half_the_cores()),
        })
    }

    pub(crate) fn settings(&self) -> &AccountSettings {
        &self.settings
    }

    /// Now, in whole seconds (for rate limits and tokens) and as a stored
    /// time.
    fn now(&self) -> (u64, OffsetDateTime) {
        let millis = self.clock.now_millis();
        (millis / 1000, timestamp(millis))
    }

    /// Counts an event against a limit and refuses it past the limit.
    async fn count(&self, name: &str, subject: &str, limit: Limit) -> Result<(), ApiError> {
        let (now, _) = self.now();
        match ratelimit::hit(&self.redis, name, subject, limit, now).await? {
            Decision::Allowed { .. } => Ok(()),
            Decision::Limited { retry_after } => Err(ApiError::rate_limited(retry_after)),
        }
    }

    /// Refuses when a limit is already used up, without counting.
    async fn check(&self, name: &str, subject: &str, limit: Limit) -> Result<(), ApiError> {
        let (now, _) = self.now();
        match ratelimit::peek(&self.redis, name, subject, limit, now).await? {
            Decision::Allowed { .. } => Ok(()),
            Decision::Limited { retry_after } => Err(ApiError::rate_limited(retry_after)),
        }
    }

    /// `POST /v1/auth/guest`: a new player with a friendly unique name.
    pub(crate) async fn guest(
        &self,
        client_ip: &str,
        language: NameLanguage,
    ) -> Result<Session, ApiError> {
        self.count("signup", client_ip, self.settings.signups_per_ip)
            .await?;
        let (_, now) = self.now();
        let id = Uuid::now_v7();
        let network = network_of(client_ip);
        let mut tx = self.postgres.begin().await?;
        let mut name = None;
        for attempt in 0..NAME_ATTEMPTS * 2 {
            // After a run of clashes the short names are crowded: add digits.
            let candidate = if attempt < NAME_ATTEMPTS {
                guest_name(random_u64(), language)
            } else {
                format!(
                    "{}{:03}",
                    guest_name(random_u64(), language),
                    random_u64() % 1000
                )
            };
            if store::insert_player(&mut tx, id, &candidate, network.as_deref(), now).await? {
                name = Some(candidate);
                break;
            }
        }
        let Some(display_name) = name else {
            tracing::error!("no free guest name after {} attempts", NAME_ATTEMPTS * 2);
            return Err(ApiError::internal());
        };
        let player = PlayerRow {
            id,
            display_name,
            guest: true,
            role: Role::Player,
            closed: false,
        };
        let session = self.start_session(&mut tx, player, client_ip).await?;
        tx.commit().await?;
        Ok(session)
    }

    /// `POST /v1/auth/register`: upgrades the calling guest, keeping their
    /// id, or creates a registered player when nobody is signed in.
    pub(crate) async fn register(
        &self,
        caller: Option<Uuid>,
        credentials: Credentials,
        client_ip: &str,
    ) -> Result<Session, ApiError> {
        let username = Username::parse(&credentials.username)
            .map_err(|error| ApiError::new(ErrorCode::InvalidInput, error.to_string()))?;
        let password = Password::parse(SecretString::from(credentials.password))
            .map_err(|error| ApiError::new(ErrorCode::InvalidInput, error.to_string()))?;
        // A registration without a guest behind it is a new player as well.
        if caller.is_none() {
            self.count("signup", client_ip, self.settings.signups_per_ip)
                .await?;
        }
        // Upgrades count too: each costs an argon2 hash, taken name or not.
        self.count(
            "registration",
            client_ip,
            self.settings.registrations_per_ip,
        )
        .await?;
        let password_hash = self.hash_password(password).await?;
        let (_, now) = self.now();
        let taken = || {
            ApiError::new(
                ErrorCode::UsernameTaken,
                format!("the username {:?} is taken", username.as_str()),
            )
        };
        let registered_already = || {
            ApiError::new(
                ErrorCode::AlreadyRegistered,
                "this player is already registered",
            )
        };
        let mut tx = self.postgres.begin().await?;
        let mut ended = Vec::new();
        let mut existing_role = Role::Player;
        let id = match caller {
            Some(id) => {
                let player = store::lock_player(&mut tx, id).await?.ok_or_else(|| {
                    ApiError::new(ErrorCode::TokenInvalid, "the access token's player is gone")
                })?;
                if !player.guest {
                    return Err(registered_already());
                }
                if player.closed {
                    return Err(closed());
                }
                existing_role = player.role;
                ended = store::revoke_player_families(&mut tx, id, now).await?;
                id
            }
            None => {
                let id = Uuid::now_v7();
                let network = network_of(client_ip);
                if !store::insert_player(&mut tx, id, username.as_str(), network.as_deref(), now)
                    .await?
                {
                    return Err(taken());
                }
                id
            }
        };
        let written = async {
            store::insert_credentials(&mut tx, id, username.as_str(), &password_hash, now).await?;
            store::rename_player(&mut tx, id, username.as_str()).await
        }
        .await;
        match written {
            Err(error) if store::is_second_registration(&error) => {
                return Err(registered_already());
            }
            Err(error) if store::is_unique_violation(&error) => return Err(taken()),
            other => other?,
        }
        let player = PlayerRow {
            id,
            display_name: username.as_str().to_owned(),
            guest: false,
            role: existing_role,
            closed: false,
        };
        let session = self.start_session(&mut tx, player, client_ip).await?;
        tx.commit().await.map_err(|error| {
            if store::is_second_registration(&error) {
                registered_already()
            } else if store::is_unique_violation(&error) {
                taken()
            } else {
                error.into()
            }
        })?;
        // The guest's access tokens open the account now behind a
        // password: they stop at once here, everywhere within a second.
        for family in ended {
            self.end_session(family).await?;
        }
        Ok(session)
    }

    /// `POST /v1/auth/login`.
    pub(crate) async fn login(
        &self,
        credentials: Credentials,
        client_ip: &str,
    ) -> Result<Session, ApiError> {
        let wrong = || ApiError::new(ErrorCode::InvalidCredentials, "wrong username or password");
        // Any spelling of a name is one account for the limit.
        let account = credentials.username.to_lowercase();
        // The account's limit is per address (see the settings).
        let account_here = format!("{account}@{client_ip}");
        let limits = &self.settings;
        self.check("login-ip", client_ip, limits.login_failures_per_ip)
            .await?;
        self.check(
            "login-account",
            &account_here,
            limits.login_failures_per_account,
        )
        .await?;
        self.check(
            "login-account-all",
            &account,
            limits.login_failures_per_account_all,
        )
        .await?;
        // Sign-ins that succeed are limited too: each starts a session, and
        // each sign-out lists one as revoked until its tokens expire.
        self.check("logins-account", &account, limits.logins_per_account)
            .await?;
        self.check("logins-ip", client_ip, limits.logins_per_ip)
            .await?;
        let (Ok(_), Ok(password)) = (
            Username::parse(&credentials.username),
            Password::parse(SecretString::from(credentials.password)),
        ) else {
            return Err(wrong());
        };
        let found = store::find_login(&self.postgres, &account).await?;
        let stored = found.as_ref().map_or_else(
            || self.decoy_hash.to_string(),
            |row| row.password_hash.clone(),
        );
        let matches = self.verify_password(password, stored).await?;
        let player = match found {
            Some(row) if matches && row.player.closed => return Err(closed()),
            Some(row) if matches => row.player,
            _ => {
                self.count("login-ip", client_ip, limits.login_failures_per_ip)
                    .await?;
                self.count(
                    "login-account",
                    &account_here,
                    limits.login_failures_per_account,
                )
                .await?;
                self.count(
                    "login-account-all",
                    &account,
                    limits.login_failures_per_account_all,
                )
                .await?;
                return Err(wrong());
            }
        };
        self.count("logins-account", &account, limits.logins_per_account)
            .await?;
        self.count("logins-ip", client_ip, limits.logins_per_ip)
            .await?;
        let (now_secs, now) = self.now();
        ratelimit::reset(
            &self.redis,
            "login-account",
            &account_here,
            limits.login_failures_per_account,
            now_secs,
        )
        .await?;
        let mut tx = self.postgres.begin().await?;
        store::touch_player(&mut tx, player.id, now).await?;
        let session = self.start_session(&mut tx, player, client_ip).await?;
        tx.commit().await?;
        Ok(session)
    }

    /// `POST /v1/auth/refresh`: exchanges a refresh token, once, for a new
    /// session in the same family. A second use of a token means someone
    /// else has a copy: the whole family is revoked.
    pub(crate) async fn refresh(
        &self,
        presented: &str,
        client_ip: &str,
    ) -> Result<Session, ApiError> {
        let invalid = || ApiError::new(ErrorCode::TokenInvalid, "the refresh token is not valid");
        let token = RefreshToken::parse(presented).ok_or_else(invalid)?;
        let (_, now) = self.now();
        let mut tx = self.postgres.begin().await?;
        let Some(rotated) = store::rotate_token(&mut tx, &token.digest(), now).await? else {
            let state = store::token_state(&mut tx, &token.digest(), now)
                .await?
                .ok_or_else(invalid)?;
            if state.rotated && !state.revoked {
                store::revoke_family(&mut tx, state.family, now).await?;
                tx.commit().await?;
                self.end_session(state.family).await?;
                tracing::warn!(family = %state.family, "refresh token reused: family revoked");
            }
            return Err(if state.expired && !state.revoked && !state.rotated {
                ApiError::new(ErrorCode::TokenExpired, "the refresh token has expired")
            } else {
                invalid()
            });
        };
        let player = store::find_player(&self.postgres, rotated.player)
            .await?
            .ok_or_else(invalid)?;
        if player.closed {
            return Err(closed());
        }
        let fresh = new_refresh_token()?;
        store::add_token(&mut tx, rotated.family, &fresh.digest(), now).await?;
        store::extend_family(&mut tx, rotated.family, now + self.refresh_ttl).await?;
        store::touch_player(&mut tx, player.id, now).await?;
        if let Some(network) = network_of(client_ip) {
            store::note_network(&mut tx, player.id, &network, now).await?;
        }
        let session = self.session(player, fresh, rotated.family)?;
        tx.commit().await?;
        Ok(session)
    }

    /// `POST /v1/auth/logout`: revokes the token's family. Logging out
    /// twice is not an error.
    pub(crate) async fn logout(&self, presented: &str) -> Result<(), ApiError> {
        let invalid = || ApiError::new(ErrorCode::TokenInvalid, "the refresh token is not valid");
        let token = RefreshToken::parse(presented).ok_or_else(invalid)?;
        let (_, now) = self.now();
        let mut tx = self.postgres.begin().await?;
        let state = store::token_state(&mut tx, &token.digest(), now)
            .await?
            .ok_or_else(invalid)?;
        store::revoke_family(&mut tx, state.family, now).await?;
        tx.commit().await?;
        self.end_session(state.family).await
    }

    /// Ends every session of `player` (a closed account, a role taken
    /// away): refresh tokens no longer refresh, access tokens are refused
    /// and the sockets opened with them close within a second.
    pub(crate) async fn end_all_sessions(&self, player: Uuid) -> Result<(), ApiError> {
        let (_, now) = self.now();
        let mut tx = self.postgres.begin().await?;
        let families = store::revoke_player_families(&mut tx, player, now).await?;
        tx.commit().await?;
        for family in families {
            self.end_session(family).await?;
        }
        Ok(())
    }

    /// Refuses the access tokens of these sessions (already ended in
    /// Postgres by the caller). A failure is logged: the tokens then run
    /// out with their short life.
    pub(crate) async fn end_sessions(&self, families: &[Uuid]) {
        for family in families {
            if let Err(error) = self.end_session(*family).await {
                tracing::warn!(?error, %family, "refusing an ended session's access tokens");
            }
        }
    }

    /// Whether `password` is the registered player's; a guest has none to
    /// check and passes. Read inside the caller's transaction.
    pub(crate) async fn password_matches(
        &self,
        connection: &mut sqlx::PgConnection,
        player: Uuid,
        password: Option<String>,
    ) -> Result<bool, ApiError> {
        let Some(stored) = store::password_hash(connection, player).await? else {
            return Ok(true);
        };
        let Some(password) =
            password.and_then(|text| Password::parse(SecretString::from(text)).ok())
        else {
            return Ok(false);
        };
        self.verify_password(password, stored).await
    }

    /// Refuses the session's access tokens from now on, everywhere, and
    /// closes the sockets opened with them (until the last could expire).
    async fn end_session(&self, family: Uuid) -> Result<(), ApiError> {
        let (now, _) = self.now();
        let until = now + self.access_ttl.as_secs() + 60;
        self.revocations
            .revoke(&self.redis, &family.to_string(), until, now)
            .await?;
        Ok(())
    }

    /// `GET /v1/me`.
    pub(crate) async fn me(&self, player: Uuid) -> Result<Player, ApiError> {
        store::find_player(&self.postgres, player)
            .await?
            .map(to_wire)
            .ok_or_else(|| {
                ApiError::new(ErrorCode::TokenInvalid, "the access token's player is gone")
            })
    }

    /// Deletes long-dead token families; run now and then.
    pub(crate) async fn purge(&self) -> Result<u64, sqlx::Error> {
        let (_, now) = self.now();
        store::purge_families(&self.postgres, now).await
    }

    /// A new family with its first token, inside the caller's transaction,
    /// and the network it was started from noted.
    async fn start_session(
        &self,
        tx: &mut sqlx::PgConnection,
        player: PlayerRow,
        client_ip: &str,
    ) -> Result<Session, ApiError> {
        let (_, now) = self.now();
        if let Some(network) = network_of(client_ip) {
            store::note_network(tx, player.id, &network, now).await?;
        }
        let token = new_refresh_token()?;
        let expires_at = now + self.refresh_ttl;
        let family = Uuid::now_v7();
        store::start_family(tx, family, player.id, &token.digest(), now, expires_at).await?;
        self.session(player, token, family)
    }

    /// A session's tokens: the access token names the session (the refresh
    /// family), so that signing out revokes it.
    fn session(
        &self,
        player: PlayerRow,
        refresh: RefreshToken,
        family: Uuid,
    ) -> Result<Session, ApiError> {
        let (now, _) = self.now();
        let access_token = self
            .signer
            .issue_in_session(
                &player.id.to_string(),
                &family.to_string(),
                player.role,
                now,
            )
            .map_err(|error| {
                tracing::error!(%error, "signing an access token");
                ApiError::internal()
            })?;
        Ok(Session {
            player: to_wire(player),
            access_token,
            token_type: "Bearer".into(),
            expires_in: self.access_ttl.as_secs(),
            refresh_token: refresh.as_str().to_owned(),
        })
    }
}

/// A closed account's answer to signing in.
pub(crate) fn closed() -> ApiError {
    ApiError::new(ErrorCode::AccountClosed, "this account is closed")
}

fn to_wire(row: PlayerRow) -> Player {
    Player {
        id: row.id,
        display_name: row.display_name,
        guest: row.guest,
    }
}

fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    // The OS generator does not fail on the platforms we run on; a zero
    // draw would only make a name clash more likely.
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes)
}

fn new_refresh_token() -> Result<RefreshToken, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| {
        tracing::error!(%error, "the OS random generator failed");
        ApiError::internal()
    })?;
    Ok(RefreshToken::from_random(bytes))
}

/// argon2 on the background threads.
impl Accounts {
    async fn hash_password(&self, password: Password) -> Result<String, ApiError> {
        self.hashing
            .run(move || password::hash(password.secret()))
            .await
            .map_err(|_| ApiError::internal())?
            .map_err(|error| {
                tracing::error!(%error, "hashing a password");
                ApiError::internal()
            })
    }

    async fn verify_password(&self, password: Password, stored: String) -> Result<bool, ApiError> {
        self.hashing
            .run(move || password::verify(password.secret(), &stored))
            .await
            .map_err(|_| ApiError::internal())?
            .map_err(|error| {
                tracing::error!(%error, "verifying a password");
                ApiError::internal()
            })
    }
}
