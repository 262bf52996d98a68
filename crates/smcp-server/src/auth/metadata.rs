//! The Protected Resource Metadata document (RFC 9728) and where it is served.

use serde::Serialize;

use super::jwt::AuthConfigError;

/// The resource's metadata (RFC 9728 §2), served unauthenticated at
/// [`ProtectedResourceMetadata::well_known_path`].
///
/// # Examples
///
/// ```
/// use smcp_server::auth::ProtectedResourceMetadata;
///
/// let metadata = ProtectedResourceMetadata::new("https://mcp.example.com/mcp")?
///     .authorization_server("https://auth.example.com")
///     .scopes_supported(["mcp:tools"]);
/// assert_eq!(
///     metadata.url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// # Ok::<(), smcp_server::auth::AuthConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProtectedResourceMetadata {
    resource: String,
    authorization_servers: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes_supported: Vec<String>,
    bearer_methods_supported: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_documentation: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dpop_signing_alg_values_supported: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dpop_bound_access_tokens_required: bool,
    #[serde(skip)]
    origin: String,
    #[serde(skip)]
    path: String,
}

impl ProtectedResourceMetadata {
    /// The metadata of the resource `resource`: the MCP endpoint's canonical URI (scheme,
    /// host, port and path, no fragment), e.g. `https://mcp.example.com/mcp`.
    ///
    /// # Errors
    ///
    /// `resource` is not an absolute `http(s)` URL, or has a fragment.
    pub fn new(resource: impl Into<String>) -> Result<Self, AuthConfigError> {
        let resource = resource.into();
        let url = reqwest::Url::parse(&resource)
            .map_err(|e| AuthConfigError(format!("resource {resource:?} is not a URL: {e}")))?;
        if !matches!(url.scheme(), "https" | "http") || url.fragment().is_some() {
            return Err(AuthConfigError(format!(
                "resource {resource:?} must be an http(s) URL without a fragment"
            )));
        }
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/').to_owned();
        Ok(Self {
            resource,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: None,
            resource_documentation: None,
            dpop_signing_alg_values_supported: Vec::new(),
            dpop_bound_access_tokens_required: false,
            origin,
            path,
        })
    }

    /// Adds an authorization server (its issuer identifier).
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes clients may request (`scopes_supported`).
    #[must_use]
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A human-readable name (`resource_name`).
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A page of documentation (`resource_documentation`).
    #[must_use]
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// The DPoP proof algorithms accepted (`dpop_signing_alg_values_supported`) and whether
    /// DPoP-bound tokens are required (`dpop_bound_access_tokens_required`, RFC 9449 §5.2).
    /// [`AuthLayerBuilder::dpop`](super::AuthLayerBuilder::dpop) sets them.
    #[must_use]
    pub fn dpop(mut self, algorithms: Vec<String>, required: bool) -> Self {
        self.dpop_signing_alg_values_supported = algorithms;
        self.dpop_bound_access_tokens_required = required;
        self
    }

    /// The resource's origin (`scheme://host[:port]`).
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// The resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// `scopes_supported`.
    pub fn supported_scopes(&self) -> &[String] {
        &self.scopes_supported
    }

    /// The path the document is served at (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
    /// followed by the resource's path.
    pub fn well_known_path(&self) -> String {
        format!("/.well-known/oauth-protected-resource{}", self.path)
    }

    /// The document's URL, as `WWW-Authenticate` names it (`resource_metadata`).
    pub fn url(&self) -> String {
        format!("{}{}", self.origin, self.well_known_path())
    }

    /// The document as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}
