//! A real S3 server for the S3 file-store tests: SeaweedFS (`weed`, installed by
//! `scripts/seaweedfs` into `.cache/seaweedfs`) on free loopback ports with a fresh data
//! directory, a bucket created in it, stopped (SIGKILL) and removed when dropped; and smcpd
//! processes pointed at it through the `AWS_*` environment. `SMCP_S3=skip` disables the tests
//! that use it (and the install step). [`SeaweedFs::start`] runs an anonymous gateway;
//! [`SeaweedFs::start_signed`] one that checks SigV4 signatures (presigned URLs included) with
//! the credentials of [`SeaweedFs::env`], anonymous requests only reading and listing.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::Smcpd;

use smcp_test_support::root;

/// Whether the S3 tests are disabled (`SMCP_S3=skip`).
pub(crate) fn skipped() -> bool {
    !smcp_test_support::require_service("S3 (SeaweedFS)", "SMCP_S3")
}

/// A free loopback port whose +10000 (SeaweedFS's gRPC port for it) is free as well.
fn free_port() -> u16 {
    loop {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = a.local_addr().unwrap().port();
        if port > 55_535 {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// A running SeaweedFS (master, volume, filer and S3 gateway), killed when dropped.
pub(crate) struct SeaweedFs {
    child: Child,
    dir: PathBuf,
    /// The S3 endpoint, `http://127.0.0.1:PORT`.
    pub(crate) endpoint: String,
}

impl SeaweedFs {
    /// Installs SeaweedFS if needed, starts it with its data in a fresh directory, waits for
    /// the S3 gateway and creates `bucket`.
    pub(crate) async fn start(tag: &str, bucket: &str) -> Self {
        Self::launch(tag, bucket, false).await
    }

    /// [`SeaweedFs::start`] with signatures checked: one identity, the key pair of
    /// [`SeaweedFs::env`], may do everything; anonymous requests may only read and list (so
    /// [`SeaweedFs::status`], [`SeaweedFs::keys`] and [`SeaweedFs::pending_multipart`] still
    /// work). The bucket is created with `weed shell`.
    pub(crate) async fn start_signed(tag: &str, bucket: &str) -> Self {
        Self::launch(tag, bucket, true).await
    }

    async fn launch(tag: &str, bucket: &str, signed: bool) -> Self {
        let mut path = Command::new(root().join("scripts/seaweedfs"));
        path.arg("path");
        let weed = smcp_test_support::provide("S3 (SeaweedFS)", "SMCP_S3", &mut path);
        let dir = std::env::temp_dir().join(format!("smcp-s3-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let s3 = free_port();
        let (master, volume, filer) = (free_port(), free_port(), free_port());
        let log = std::fs::File::create(dir.join("weed.log")).unwrap();
        let mut auth = Vec::new();
        if signed {
            let config = dir.join("s3.json");
            std::fs::write(&config, S3_IDENTITIES).unwrap();
            auth.push(format!("-s3.config={}", config.display()));
        }
        let child = Command::new(&weed)
            .arg("server")
            .arg(format!("-dir={}", dir.display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-filer", "-s3"])
            .arg(format!("-master.port={master}"))
            .arg(format!("-volume.port={volume}"))
            .arg(format!("-filer.port={filer}"))
            .arg(format!("-s3.port={s3}"))
            .args([
                "-metricsPort=0",
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                // The default (1 % of the disk) makes volumes read-only on a big, nearly full
                // disk; these tests write under 100 MB.
                "-volume.minFreeSpace=256MiB",
                "-volume.preStopSeconds=0",
                "-master.volumeSizeLimitMB=1024",
            ])
            .args(&auth)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("weed starts");
        let server = Self {
            child,
            dir,
            endpoint: format!("http://127.0.0.1:{s3}"),
        };
        // Ready once a bucket can be created (the gateway answers and the filer is up).
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let created = if signed {
                create_bucket(&weed, master, bucket)
                    && http
                        .get(format!("{}/{bucket}?list-type=2", server.endpoint))
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success())
            } else {
                http.put(format!("{}/{bucket}", server.endpoint))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success())
            };
            if created {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "SeaweedFS did not come up; see {}",
                server.dir.join("weed.log").display()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        server
    }

    /// The environment an smcpd needs to reach this server.
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_REGION", "us-east-1".into()),
            // The gateway is anonymous: any key pair is accepted.
            ("AWS_ACCESS_KEY_ID", "smcp-test".into()),
            ("AWS_SECRET_ACCESS_KEY", "smcp-test-secret".into()),
        ]
    }

    /// The status of a plain (anonymous) GET of `key` in `bucket`.
    pub(crate) async fn status(&self, bucket: &str, key: &str) -> u16 {
        reqwest::get(format!("{}/{bucket}/{key}", self.endpoint))
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// The keys under `prefix` in `bucket` (ListObjectsV2, one page).
    pub(crate) async fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let body = reqwest::get(format!(
            "{}/{bucket}?list-type=2&prefix={prefix}",
            self.endpoint
        ))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
        xml_values(&body, "Key")
    }

    /// The keys of the multipart uploads started and neither completed nor aborted in
    /// `bucket` (ListMultipartUploads).
    pub(crate) async fn pending_multipart(&self, bucket: &str) -> Vec<String> {
        let body = reqwest::get(format!("{}/{bucket}?uploads", self.endpoint))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        body.split("<Upload>")
            .skip(1)
            .flat_map(|u| xml_values(u, "Key"))
            .collect()
    }
}

/// The identities of [`SeaweedFs::start_signed`]: the key pair of [`SeaweedFs::env`] may do
/// everything, anonymous requests read and list.
const S3_IDENTITIES: &str = r#"{"identities": [
  {"name": "smcp", "credentials": [{"accessKey": "smcp-test", "secretKey": "smcp-test-secret"}],
   "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
  {"name": "anonymous", "actions": ["Read", "List"]}
]}"#;

/// Creates `bucket` through `weed shell` (no S3 credentials needed); whether it exists now.
fn create_bucket(weed: &str, master: u16, bucket: &str) -> bool {
    use std::io::Write as _;
    let Ok(mut shell) = Command::new(weed)
        .args(["shell", &format!("-master=127.0.0.1:{master}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = shell.stdin.take() {
        let _ = writeln!(stdin, "s3.bucket.create -name {bucket}");
    }
    shell.wait_with_output().is_ok_and(|out| {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        text.contains("created bucket") || text.contains("already exists")
    })
}

/// The text of every `<tag>…</tag>` in `xml`.
fn xml_values(xml: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    xml.split(&open)
        .skip(1)
        .filter_map(|s| s.split_once(&close).map(|(v, _)| v.to_owned()))
        .collect()
}

impl Drop for SeaweedFs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts smcpd on a free port with `extra` flags and `env` added to its environment.
pub(crate) fn smcpd_with_env(extra: &[&str], env: &[(&'static str, String)]) -> Smcpd {
    Smcpd::start_env(extra, env, "smcpd=info,smcp_server=info,smcp_files=debug")
}
