//! [`FileTransfer`], the file-transfer settings a client is built with, and the separate HTTP
//! client for descriptor URLs. A leaf: the request path reads these settings, and the transfer
//! methods that extend `Client` live beside it in `files/`.

use serde_json::{Value, json};

use super::policy::AddressPolicy;
use crate::error::{Error, Result};

/// File-transfer settings of a client.
///
/// Install it with [`ClientBuilder::files`](crate::ClientBuilder::files).
///
/// # Examples
///
/// ```
/// use smcp_client::files::FileTransfer;
///
/// let files = FileTransfer {
///     allow_insecure_loopback: true, // a development server on http://127.0.0.1
///     ..FileTransfer::default()
/// };
/// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").files(files).build()?;
/// # let _ = client;
/// # Ok::<(), smcp_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileTransfer {
    /// Files up to this size go inline as `data:` URIs when the field allows it.
    pub inline_threshold: u64,
    /// Declare and use out-of-band upload.
    pub upload: bool,
    /// Declare and use out-of-band download.
    pub download: bool,
    /// Accept `http://127.0.0.1` / `http://[::1]` / `http://localhost` descriptors, and
    /// descriptors on loopback addresses at all (development only; never other plain-http
    /// hosts, never other non-public addresses).
    pub allow_insecure_loopback: bool,
}

impl Default for FileTransfer {
    fn default() -> Self {
        Self {
            inline_threshold: 256 * 1024,
            upload: true,
            download: true,
            allow_insecure_loopback: false,
        }
    }
}

impl FileTransfer {
    pub(crate) fn capability(&self) -> Value {
        json!({"upload": self.upload, "download": self.download, "transports": ["https"]})
    }
}

/// The HTTP client for descriptor URLs: no redirects, no proxy (the address connected to is
/// the one `policy` checked), and a resolver that refuses non-public addresses.
pub(crate) fn data_plane_client(
    settings: &crate::transport::http_client::HttpSettings,
    policy: &AddressPolicy,
) -> Result<reqwest::Client> {
    settings
        .builder()
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(policy.clone()))
        .build()
        .map_err(|e| Error::config(format!("cannot build the file transfer client: {e}")))
}
