//! Creating games through game-room's internal endpoint: matchmaking knows
//! no game-room code, only its URL and the service token.

use std::time::Duration;

use mancala_platform::{ApiError, ExposeSecret, SecretString};
use mancala_proto::game::{BatchCreated, CreateGame, CreateGames, CreatedGame, CreatedGames};
use mancala_proto::{ErrorBody, ErrorCode};

/// A client of game-room's internal API; cheap to clone.
#[derive(Clone)]
pub struct GameRoomClient {
    base: String,
    token: SecretString,
}

impl GameRoomClient {
    pub fn new(base: &str, token: SecretString) -> GameRoomClient {
        GameRoomClient {
            base: base.trim_end_matches('/').to_owned(),
            token,
        }
    }

    /// Creates a game, retrying a few times with the same game id (so a
    /// lost answer cannot make two games). A request game-room refuses
    /// (4xx) is the caller's to fix and is passed on as such; any other
    /// failure is `unavailable`.
    pub async fn create(&self, request: &CreateGame) -> Result<CreatedGame, ApiError> {
        self.retrying("/internal/v1/games", &checked(request)?)
            .await
    }

    /// Creates many games in one call (one transaction in game-room):
    /// each answer is the game made or why it was refused. Retried as
    /// [`Self::create`] is, with the same ids.
    pub async fn create_many(
        &self,
        requests: &[CreateGame],
    ) -> Result<Vec<Result<CreatedGame, ApiError>>, ApiError> {
        let games = requests.iter().map(checked).collect::<Result<_, _>>()?;
        let created: CreatedGames = self
            .retrying("/internal/v1/games/batch", &CreateGames { games })
            .await?;
        Ok(created
            .games
            .into_iter()
            .map(|made| match made {
                BatchCreated::Created(created) => Ok(created),
                BatchCreated::Refused(refused) => Err(ApiError::new(refused.code, refused.message)),
            })
            .collect())
    }

    /// Posts `request` up to three times, a refusal ending it at once.
    async fn retrying<T: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        request: &T,
    ) -> Result<R, ApiError> {
        let mut last = None;
        for attempt in 0..3u64 {
            match self.post(path, request).await {
                Ok(answer) => return Ok(answer),
                Err(Attempt::Refused(error)) => return Err(error),
                Err(Attempt::Failed(error)) => last = Some(error),
            }
            tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await;
        }
        Err(last.unwrap_or_else(ApiError::internal))
    }

    async fn post<T: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        request: &T,
    ) -> Result<R, Attempt> {
        let unavailable = |why: String| {
            tracing::warn!(why, "creating games in game-room");
            ApiError::new(ErrorCode::Unavailable, "games cannot be created now; retry")
        };
        // A client per call: awc's client is tied to the task that made it.
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(15))
            .finish();
        let mut response = client
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.token.expose_secret())
            .send_json(request)
            .await
            .map_err(|e| Attempt::Failed(unavailable(e.to_string())))?;
        // A batch of 500 answers in about 100 KB.
        let body = response
            .body()
            .limit(4 << 20)
            .await
            .map_err(|e| Attempt::Failed(unavailable(e.to_string())))?;
        let status = response.status();
        if status.is_client_error()
            && let Ok(refused) = serde_json::from_slice::<ErrorBody>(&body)
            && !matches!(
                refused.code,
                ErrorCode::Unauthenticated | ErrorCode::TokenInvalid | ErrorCode::Forbidden
            )
        {
            return Err(Attempt::Refused(ApiError::new(
                refused.code,
                refused.message,
            )));
        }
        if !status.is_success() {
            return Err(Attempt::Failed(unavailable(format!(
                "{status}: {}",
                String::from_utf8_lossy(&body)
            ))));
        }
        serde_json::from_slice(&body).map_err(|e| Attempt::Failed(unavailable(e.to_string())))
    }
}

/// `request` checked here exactly as game-room checks it (one type, one
/// rule: a request game-room would refuse is the caller's to fix), with
/// its id chosen, so that a retry makes the same game.
fn checked(request: &CreateGame) -> Result<CreateGame, ApiError> {
    let mut request: CreateGame = request
        .clone()
        .validate()
        .map_err(|error| ApiError::new(ErrorCode::InvalidInput, error.to_string()))?
        .into();
    request.id.get_or_insert_with(uuid::Uuid::now_v7);
    Ok(request)
}

/// How one try to create a game ended, when it did not.
enum Attempt {
    /// game-room refused the request itself: retrying cannot help.
    Refused(ApiError),
    /// It could not be asked, or failed: worth another try.
    Failed(ApiError),
}
