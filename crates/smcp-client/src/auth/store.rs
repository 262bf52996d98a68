//! Where tokens live between requests and runs: [`TokenStore`], [`MemoryTokenStore`],
//! [`FileTokenStore`] (one file per server, mode 0600, written atomically).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{AuthError, Secret};

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How this client is known to one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// `client_secret_basic`, `client_secret_post`, `private_key_jwt` or `none`.
    pub auth_method: String,
}

/// What is kept for one MCP server: its tokens and the registration that got them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// The issuer that minted them (tokens of another issuer are never sent).
    pub issuer: String,
    /// The access token.
    pub access_token: Secret,
    /// `token_type` of the token response: `Bearer`, or `DPoP` for a token bound to the
    /// client's key (then presented with the `DPoP` scheme and a proof).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
    /// The refresh token, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// Expiry, seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested (space-separated), for step-up unions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The registration used with `issuer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// The DPoP key the tokens are bound to, when the client generated it (base64url
    /// PKCS#8): a bound refresh token is useless without it. A configured signer's key is
    /// never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

impl StoredTokens {
    /// Whether the access token is DPoP-bound (`token_type` `DPoP`, RFC 9449 §5).
    pub fn is_dpop(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
    }

    /// Whether the access token expires within `skew_secs`.
    pub fn expires_within(&self, skew_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs().saturating_add(skew_secs))
    }
}

/// Keeps tokens per MCP server URL (the URL exactly as given to `Client::builder`). Called on each authorization and refresh, not on every
/// request (the client keeps the current token in memory).
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// The tokens for `server`, if any.
    fn load(&self, server: &str) -> Result<Option<StoredTokens>, AuthError>;
    /// Replaces the tokens for `server`.
    fn save(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError>;
    /// Forgets `server`'s tokens.
    fn clear(&self, server: &str) -> Result<(), AuthError>;
}

/// Tokens in memory only (the default): gone when the process ends.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    map: Mutex<HashMap<String, StoredTokens>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Result<Option<StoredTokens>, AuthError> {
        Ok(self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .cloned())
    }
    fn save(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError> {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(server.to_owned(), tokens.clone());
        Ok(())
    }
    fn clear(&self, server: &str) -> Result<(), AuthError> {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(server);
        Ok(())
    }
}

/// One JSON file per server in a directory (created 0700), each file mode 0600, replaced
/// atomically (temporary file in the same directory, then rename): never half-written.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    dir: PathBuf,
}

/// On-disk form: the server URL is kept to detect a hash collision or a moved file.
#[derive(Serialize, Deserialize)]
struct FileForm {
    server: String,
    tokens: StoredTokens,
}

impl FileTokenStore {
    /// A store in `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file that holds `server`'s tokens.
    pub fn path_for(&self, server: &str) -> PathBuf {
        let digest = Sha256::digest(server.as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    fn io(what: &str, path: &Path, e: &std::io::Error) -> AuthError {
        AuthError::Store(format!("cannot {what} {}: {e}", path.display()))
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Result<Option<StoredTokens>, AuthError> {
        let path = self.path_for(server);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Self::io("read", &path, &e)),
        };
        let form: FileForm = serde_json::from_slice(&bytes).map_err(|e| {
            AuthError::Store(format!("{} is not a token file: {e}", path.display()))
        })?;
        Ok((form.server == server).then_some(form.tokens))
    }

    fn save(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError> {
        create_private_dir(&self.dir).map_err(|e| Self::io("create", &self.dir, &e))?;
        let path = self.path_for(server);
        let body = serde_json::to_vec_pretty(&FileForm {
            server: server.to_owned(),
            tokens: tokens.clone(),
        })
        .map_err(|e| AuthError::Store(format!("cannot encode tokens: {e}")))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        write_private(&tmp, &body).map_err(|e| Self::io("write", &tmp, &e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Self::io("replace", &path, &e)
        })
    }

    fn clear(&self, server: &str) -> Result<(), AuthError> {
        let path = self.path_for(server);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Self::io("remove", &path, &e)),
        }
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn write_private(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    f.write_all(body)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn tokens() -> StoredTokens {
        StoredTokens {
            issuer: "https://as.example".into(),
            access_token: Secret::new("at-secret"),
            token_type: Some("DPoP".into()),
            refresh_token: Some(Secret::new("rt-secret")),
            expires_at: Some(1),
            scope: Some("a b".into()),
            client: None,
            dpop_key: Some(Secret::new("key-secret")),
        }
    }

    #[test]
    fn file_store_round_trips_with_mode_0600_and_clears() {
        let dir = std::env::temp_dir().join(format!("smcp-store-test-{}", std::process::id()));
        let store = FileTokenStore::new(&dir);
        assert_eq!(store.load("http://h/mcp").unwrap(), None);
        store.save("http://h/mcp", &tokens()).unwrap();
        assert_eq!(store.load("http://h/mcp").unwrap(), Some(tokens()));
        assert_eq!(store.load("http://other/mcp").unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(store.path_for("http://h/mcp"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1);
        store.clear("http://h/mcp").unwrap();
        assert_eq!(store.load("http://h/mcp").unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn debug_of_stored_tokens_hides_them() {
        let d = format!("{:?}", tokens());
        assert!(
            !d.contains("at-secret") && !d.contains("rt-secret") && !d.contains("key-secret"),
            "{d}"
        );
    }
}
