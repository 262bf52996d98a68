//! HTTPS for [`crate::serve`] (feature `tls`): a rustls acceptor from PEM files (aws-lc-rs
//! provider, TLS 1.2 and 1.3, ALPN `h2` and `http/1.1`); with feature `dev-tls`, a throwaway
//! development CA and server certificate.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why a TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or parsed.
    #[error("{path}: {reason}")]
    Pem {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// rustls refused the certificate or key.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

fn pem_err(path: &Path, reason: impl std::fmt::Display) -> TlsError {
    TlsError::Pem {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// A server config from a PEM certificate chain and a PEM private key.
pub fn server_config_from_pem(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<rustls::ServerConfig, TlsError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_err(Path::new("certificate"), e))?;
    if certs.is_empty() {
        return Err(pem_err(Path::new("certificate"), "no CERTIFICATE block"));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| pem_err(Path::new("key"), e))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A config for [`crate::ServeOptions::tls`] from PEM files.
///
/// # Examples
///
/// ```no_run
/// use std::path::Path;
/// use smcp_server::ServeOptions;
///
/// # fn main() -> anyhow::Result<()> {
/// let tls = smcp_server::http::tls::config_from_files(Path::new("cert.pem"), Path::new("key.pem"))?;
/// let options = ServeOptions { tls: Some(tls), ..ServeOptions::default() };
/// # let _ = options;
/// # Ok(()) }
/// ```
pub fn config_from_files(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let cert_pem = std::fs::read(cert).map_err(|e| pem_err(cert, e))?;
    let key_pem = std::fs::read(key).map_err(|e| pem_err(key, e))?;
    let config = server_config_from_pem(&cert_pem, &key_pem)?;
    Ok(Arc::new(config))
}

/// Paths of a development CA and a server certificate it signed (feature `dev-tls`).
#[cfg(feature = "dev-tls")]
#[derive(Debug, Clone)]
pub struct DevCertificates {
    /// The CA certificate (PEM): give it to clients (`--ca-cert`).
    pub ca_cert: std::path::PathBuf,
    /// The server certificate chain (PEM): leaf then CA.
    pub cert: std::path::PathBuf,
    /// The server private key (PEM).
    pub key: std::path::PathBuf,
}

/// Generates a throwaway CA and a server certificate for `hosts` (DNS names or IPs) into
/// `dir` as `ca.pem`, `cert.pem`, `key.pem`. For development and tests only (feature
/// `dev-tls`).
#[cfg(feature = "dev-tls")]
pub fn write_dev_certificates(dir: &Path, hosts: &[&str]) -> Result<DevCertificates, TlsError> {
    let gen_err = |e: rcgen::Error| pem_err(dir, e);
    std::fs::create_dir_all(dir).map_err(|e| pem_err(dir, e))?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(gen_err)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "smcp development CA");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    let ca_key = rcgen::KeyPair::generate().map_err(gen_err)?;
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).map_err(gen_err)?;
    let names: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
    let mut leaf_params = rcgen::CertificateParams::new(names).map_err(gen_err)?;
    leaf_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "smcp development server");
    let leaf_key = rcgen::KeyPair::generate().map_err(gen_err)?;
    let leaf = leaf_params.signed_by(&leaf_key, &ca).map_err(gen_err)?;
    let out = DevCertificates {
        ca_cert: dir.join("ca.pem"),
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    let write =
        |path: &Path, text: String| std::fs::write(path, text).map_err(|e| pem_err(path, e));
    write(&out.ca_cert, ca.pem())?;
    write(&out.cert, format!("{}{}", leaf.pem(), ca.pem()))?;
    write(&out.key, leaf_key.serialize_pem())?;
    Ok(out)
}
