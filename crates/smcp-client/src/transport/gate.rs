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
    /// Where requests and their responses are shown ([`crate::wire`]).
    tap: Option<crate::wire::WireTap>,
}

impl Gate {
    /// With an OAuth session.
    #[cfg(feature = "oauth")]
    pub(crate) fn oauth(session: crate::auth::session::OAuthSession) -> Self {
        Self {
            oauth: Some(std::sync::Arc::new(session)),
            tap: None,
        }
    }

    /// With a wire tap: each request is handed to it before it is sent, and its response
    /// carries the exchange ([`crate::wire::Tapped`]) for the body's reader.
    pub(crate) fn tapped(mut self, tap: Option<crate::wire::WireTap>) -> Self {
        self.tap = tap;
        self
    }

    /// Whether a request through this gate is only sent: no OAuth session authorizes it and
    /// no tap shows it (the direct path can carry it: `direct.rs`).
    pub(crate) fn is_plain(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.oauth.is_some() {
            return false;
        }
        self.tap.is_none()
    }

    /// Sends `request` (authorized when OAuth is on).
    pub(crate) async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let Some(tap) = &self.tap else {
            return self.send_untapped(request).await;
        };
        let (request, tapped) = tap.request(request)?;
        let mut response = self.send_untapped(request).await?;
        response.extensions_mut().insert(tapped);
        Ok(response)
    }

    async fn send_untapped(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
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
