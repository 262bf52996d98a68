//! The one place requests to the MCP server are sent: with OAuth configured (feature
//! `oauth`) the bearer token is added and `401`/`403` handled (`crate::auth::session`);
//! without, the request is only sent.

use crate::error::Result;
#[cfg(not(feature = "oauth"))]
use crate::error::{Error, Kind};

/// What every HTTP request to the MCP server goes through. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate {
    #[cfg(feature = "oauth")]
    oauth: Option<std::sync::Arc<crate::auth::session::OAuthSession>>,
}

impl Gate {
    /// With an OAuth session.
    #[cfg(feature = "oauth")]
    pub(crate) fn oauth(session: crate::auth::session::OAuthSession) -> Self {
        Self {
            oauth: Some(std::sync::Arc::new(session)),
        }
    }

    /// Sends `request` (authorized when OAuth is on).
    pub(crate) async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        #[cfg(feature = "oauth")]
        {
            crate::auth::session::send(self.oauth.as_deref(), request).await
        }
        #[cfg(not(feature = "oauth"))]
        {
            request
                .send()
                .await
                .map_err(|e| Error::new(Kind::Transport(e)))
        }
    }
}
