//! REQUIREMENTS A22.133 on the client: a descriptor whose host is, or resolves to, a
//! non-public address is refused with a typed error before anything is sent to it, unless it
//! is the MCP server's own host or loopback under the development opt-in (issue #16 item 9).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use anyhow::Result;
use smcp_client::{Client, FileTransfer, TransferError};
use smcp_files::{Files, FilesConfig, LocalFileStore};
use smcp_server::ServeOptions;
use smcp_server::http::tls;

struct Fixture {
    url: String,
    ca: Vec<u8>,
    dir: std::path::PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// The conformance fixtures on `https://127.0.0.1:PORT/mcp`, issuing descriptors on
/// `https://<data_host>:PORT`.
async fn start(tag: &str, data_host: &str) -> Result<Fixture> {
    let dir = std::env::temp_dir().join(format!("smcp-client-addr-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let certs = tls::write_dev_certificates(&dir.join("tls"), &["127.0.0.1", "localhost"])?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let files = Files::new(
        Arc::new(LocalFileStore::open(dir.join("store"))?),
        smcp_server::KeyRing::ephemeral()?,
        FilesConfig::default(),
    )?;
    files.set_base_url(&format!("https://{data_host}:{}", addr.port()))?;
    let data_plane = files.router();
    let server = smcp_conformance::server::server_with_files(Some(files))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(smcp_server::serve(
        listener,
        server.router("/mcp").merge(data_plane),
        ServeOptions {
            tls: Some(tls::config_from_files(&certs.cert, &certs.key)?),
            ..ServeOptions::default()
        },
        async move {
            let _ = stopped.await;
        },
    ));
    Ok(Fixture {
        url: format!("https://127.0.0.1:{}/mcp", addr.port()),
        ca: std::fs::read(&certs.ca_cert)?,
        dir,
        _stop: stop,
    })
}

fn client(f: &Fixture, allow_insecure_loopback: bool) -> Result<Client> {
    Ok(Client::builder(&f.url)
        .ca_cert_pem(&f.ca)
        .files(FileTransfer {
            allow_insecure_loopback,
            ..FileTransfer::default()
        })
        .build()?)
}

fn refused_address(err: &smcp_client::Error) -> Option<std::net::IpAddr> {
    match err.transfer_error() {
        Some(TransferError::NonPublicAddress { address, .. }) => Some(*address),
        _ => None,
    }
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_unless_opted_in() -> Result<()> {
    // `localhost` is not the MCP endpoint's host (127.0.0.1) but resolves to loopback: only the
    // resolver can tell, and the connection must not be made.
    let f = start("name", "localhost").await?;
    let path = f.dir.join("a.txt");
    std::fs::write(&path, b"to a private address?")?;
    let err = client(&f, false)?
        .upload_path(&path, None, None)
        .await
        .unwrap_err();
    let address = refused_address(&err).unwrap_or_else(|| panic!("{err:?}"));
    assert!(address.to_canonical().is_loopback(), "{address}");
    assert!(
        err.transfer_error()
            .is_some_and(TransferError::is_descriptor_refused)
    );
    // With the development opt-in the same descriptor is followed.
    let v = client(&f, true)?.upload_path(&path, None, None).await?;
    assert_eq!(v.size, Some(21));
    Ok(())
}

#[tokio::test]
async fn private_and_link_local_literals_are_refused_before_connecting() -> Result<()> {
    for (host, tag) in [
        ("10.255.255.1", "private"),
        ("169.254.169.254", "linklocal"),
        ("[fd00::1]", "ula"),
    ] {
        let f = start(tag, host).await?;
        let path = f.dir.join("b.txt");
        std::fs::write(&path, b"x")?;
        // Even with the loopback opt-in: these are not loopback. Refused at once (a connection
        // attempt to an unroutable address would hang until the timeout instead).
        let started = std::time::Instant::now();
        let err = client(&f, true)?
            .upload_path(&path, None, None)
            .await
            .unwrap_err();
        assert!(refused_address(&err).is_some(), "{host}: {err:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{host}"
        );
        assert!(!err.to_string().contains("/files/upload/"), "{err}");
    }
    Ok(())
}

#[tokio::test]
async fn the_mcp_servers_own_loopback_host_is_followed() -> Result<()> {
    // Descriptors on the endpoint's own host (127.0.0.1) need no opt-in.
    let f = start("own", "127.0.0.1").await?;
    let path = f.dir.join("c.txt");
    std::fs::write(&path, b"same host")?;
    let v = client(&f, false)?.upload_path(&path, None, None).await?;
    assert_eq!(v.size, Some(9));
    Ok(())
}
