//! How the direct `http://` path (`direct.rs`) fails, in a file of its own: the crate's error
//! type holds it, so it names nothing of the crate.

/// A failure of the direct path: the request could not be sent (or no response head came
/// back), or its response body broke off.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DirectError {
    /// Connecting, writing the request or reading the response head failed.
    #[error("error sending the request")]
    Send(#[source] hyper_util::client::legacy::Error),
    /// Reading the response body failed.
    #[error("error reading the response body")]
    Body(#[source] hyper::Error),
}

impl DirectError {
    /// The connection could not be made, so the request never reached the server.
    pub(crate) fn is_connect(&self) -> bool {
        matches!(self, Self::Send(e) if e.is_connect())
    }

    /// The connect timeout ran out.
    pub(crate) fn is_timeout(&self) -> bool {
        self.is_connect() && self.has_io_error(std::io::ErrorKind::TimedOut)
    }

    /// The connection was refused.
    pub(crate) fn is_refused(&self) -> bool {
        self.has_io_error(std::io::ErrorKind::ConnectionRefused)
    }

    /// A failure after the connection was made and before a response head: what answered
    /// did not give an HTTP response (no parsable head, or the connection closed first). A
    /// body cut short after a head is not this. reqwest's diagnosis of the same failures, so
    /// both paths give the same [`ErrorKind`](crate::ErrorKind) (a test holds them to it).
    pub(crate) fn is_not_http(&self) -> bool {
        matches!(self, Self::Send(_)) && !self.is_connect()
    }

    fn has_io_error(&self, kind: std::io::ErrorKind) -> bool {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = source {
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == kind)
            {
                return true;
            }
            source = e.source();
        }
        false
    }
}
