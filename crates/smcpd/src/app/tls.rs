//! TLS: `--tls-cert`/`--tls-key`, or a development CA and certificate (`--tls-self-signed`).
//! With TLS, smcpd serves HTTPS and issues https:// file descriptors.

use std::path::PathBuf;

use smcp_server::ServeOptions;

/// The certificate to serve HTTPS with.
#[derive(Debug, clap::Args)]
pub(crate) struct TlsArgs {
    /// PEM certificate chain: serve HTTPS (and issue https:// file descriptors).
    #[arg(long, requires = "tls_key", env = "SMCPD_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for --tls-cert.
    #[arg(long, requires = "tls_cert", env = "SMCPD_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// Development: generate a throwaway CA and a certificate for 127.0.0.1/localhost into
    /// DIR (ca.pem, cert.pem, key.pem) and serve HTTPS with it. Clients trust DIR/ca.pem.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["tls_cert", "tls_key"])]
    tls_self_signed: Option<PathBuf>,
}

impl TlsArgs {
    /// Sets `options.tls` from the flags (the development CA written first), or leaves it
    /// off.
    pub(crate) fn configure(&self, options: &mut ServeOptions) -> anyhow::Result<()> {
        options.tls = match (&self.tls_self_signed, &self.tls_cert, &self.tls_key) {
            (Some(dir), _, _) => {
                let certs = smcp_server::http::tls::write_dev_certificates(
                    dir,
                    &["127.0.0.1", "localhost", "::1"],
                )?;
                tracing::info!(ca = %certs.ca_cert.display(), "generated a development CA");
                Some(smcp_server::http::tls::config_from_files(
                    &certs.cert,
                    &certs.key,
                )?)
            }
            (None, Some(cert), Some(key)) => {
                Some(smcp_server::http::tls::config_from_files(cert, key)?)
            }
            _ => None,
        };
        Ok(())
    }

    /// The `--ca-cert` a client needs, for the ready line's `smcp` example (`tls`: whether
    /// HTTPS is on).
    pub(crate) fn ca_hint(&self, tls: bool) -> String {
        match &self.tls_self_signed {
            Some(dir) => format!(" --ca-cert {}", dir.join("ca.pem").display()),
            None if tls => " --ca-cert CA.pem".to_owned(),
            None => String::new(),
        }
    }
}
