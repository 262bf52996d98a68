//! `files/authorizeDownload` and the verified download: bytes stream into a hidden,
//! uniquely named part file beside the destination; size and digest are checked against every
//! announced value; only then is the part file renamed to its final name. On any failure, and
//! when the download future is dropped, the part file is removed: no file ever appears under
//! the final name unverified.

use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use serde_json::{Map, Value};
use smcp_proto::ext::files::{
    AuthorizeDownloadResult, DigestBuilder, FileDigest, FileValue, METHOD_AUTHORIZE_DOWNLOAD,
    SHA_256,
};
use tokio::io::AsyncWriteExt;

use super::local::Progress;
use super::policy::{check_descriptor, descriptor_method, refused_address};
use super::transfer_error::refusal;
use super::transfer_error::{Operation, TransferError};
use crate::client::{Client, decode};
use crate::error::Result;

/// Name used when the server gives none (or an unusable one).
const FALLBACK_NAME: &str = "download.bin";

/// The last path component of a server-supplied name, if it is safe to create in a directory
/// the caller chose: not empty, not `.`/`..`, not hidden (which also keeps it out of the part
/// files' namespace).
pub(crate) fn safe_file_name(name: &str) -> Option<&str> {
    let last = name.rsplit(['/', '\\']).next()?;
    (!last.is_empty() && !last.starts_with('.')).then_some(last)
}

/// Where a download into `dest` lands: `dest/<name>` when `dest` is a directory (the first
/// usable name of `names`, else `download.bin`), else `dest` itself.
pub(crate) fn target_path(dest: &Path, names: &[Option<&str>]) -> PathBuf {
    if dest.is_dir() {
        let name = names
            .iter()
            .flatten()
            .find_map(|n| safe_file_name(n))
            .unwrap_or(FALLBACK_NAME);
        dest.join(name)
    } else {
        dest.to_path_buf()
    }
}

/// The smallest size any of `files` announces (a download running past it is stopped).
fn announced_size(files: &[&FileValue]) -> Option<u64> {
    files.iter().filter_map(|f| f.size).min()
}

/// Checks received bytes against every announced size and digest (SEP-2631 §8: clients MUST
/// verify byte count and digest when present). A digest in another algorithm than sha-256
/// cannot be verified and fails closed.
pub(crate) fn verify(
    files: &[&FileValue],
    received_size: u64,
    received: &FileDigest,
) -> Result<(), TransferError> {
    for f in files {
        if let Some(expected) = f.size
            && expected != received_size
        {
            return Err(TransferError::SizeMismatch {
                expected,
                received: received_size,
            });
        }
    }
    for expected in files.iter().filter_map(|f| f.digest.as_ref()) {
        if !expected.algorithm.eq_ignore_ascii_case(SHA_256) {
            return Err(TransferError::UnsupportedDigestAlgorithm {
                algorithm: expected.algorithm.clone(),
            });
        }
        if !expected.matches(received) {
            return Err(TransferError::DigestMismatch {
                expected: expected.clone(),
                received: received.clone(),
            });
        }
    }
    Ok(())
}

/// A download in progress: a hidden part file, removed on drop unless [`persist`]ed.
///
/// [`persist`]: PartFile::persist
#[derive(Debug)]
pub(crate) struct PartFile {
    path: PathBuf,
    armed: bool,
}

impl PartFile {
    /// Creates a new, empty part file in `dir` (never an existing one).
    pub(crate) async fn create(dir: &Path) -> Result<(Self, tokio::fs::File), TransferError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let mut attempt = 0;
        loop {
            let seq = SEQ.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".smcp-download-{}-{seq}.part", std::process::id()));
            match tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .await
            {
                Ok(file) => return Ok((Self { path, armed: true }, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err(TransferError::io(path, e)),
            }
        }
    }

    /// Renames the part file to `target` (replacing it); the part file is no longer removed.
    pub(crate) async fn persist(mut self, target: &Path) -> Result<(), TransferError> {
        tokio::fs::rename(&self.path, target)
            .await
            .map_err(|e| TransferError::io(target, e))?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Client {
    /// `files/authorizeDownload`.
    pub async fn authorize_download(&self, uri: &str) -> Result<AuthorizeDownloadResult> {
        let mut map = Map::new();
        map.insert("uri".into(), Value::String(uri.to_owned()));
        decode(
            METHOD_AUTHORIZE_DOWNLOAD,
            &self.request(METHOD_AUTHORIZE_DOWNLOAD, map).await?,
        )
    }

    /// Downloads a file URI into `dest` (a directory: the server's name is used) through a
    /// part file; size and digest announced by `files/authorizeDownload` are verified before
    /// the rename, and the part file is deleted on any mismatch. Returns the final path and
    /// the file's metadata.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::path::Path;
    ///
    /// # async fn demo(client: smcp_client::Client, uri: &str) -> Result<(), smcp_client::Error> {
    /// let (path, file) = client.download_to(uri, Path::new("downloads"), None).await?;
    /// println!("{} ({:?} bytes)", path.display(), file.size);
    /// # Ok(()) }
    /// ```
    pub async fn download_to(
        &self,
        uri: &str,
        dest: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<(PathBuf, FileValue)> {
        self.download_verified(uri, None, dest, progress).await
    }

    /// Downloads a file the client was given (a tool output, see [`super::output_files`]) like
    /// [`download_to`](Self::download_to), verifying the bytes against the size and digest of
    /// `file` **and** of the `files/authorizeDownload` answer. The name of `file` is preferred
    /// for the destination.
    ///
    /// # Examples
    ///
    /// See [`output_files`](super::output_files).
    pub async fn download_file(
        &self,
        file: &FileValue,
        dest: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<(PathBuf, FileValue)> {
        self.download_verified(&file.uri, Some(file), dest, progress)
            .await
    }

    /// Downloads a file URI into `writer` (memory, a socket, an encoder: any
    /// [`AsyncWrite`](tokio::io::AsyncWrite)), verifying size and digest as
    /// [`download_to`](Self::download_to) does; returns the file's metadata. The writer is
    /// flushed, not shut down.
    ///
    /// Unlike a download to disk, the bytes reach the writer before they can be verified:
    /// on `Err` (e.g. [`TransferError::DigestMismatch`]) discard what was written.
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client, uri: &str) -> Result<(), smcp_client::Error> {
    /// let mut bytes = Vec::new();
    /// let file = client.download_into(uri, &mut bytes, None).await?;
    /// println!("{} bytes of {:?}", bytes.len(), file.mime_type);
    /// # Ok(()) }
    /// ```
    pub async fn download_into<W>(
        &self,
        uri: &str,
        writer: &mut W,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue>
    where
        W: tokio::io::AsyncWrite + Unpin + Send + ?Sized,
    {
        let (auth, resp) = self.open_download(uri).await?;
        let announced = [&auth.file];
        receive(resp, &announced, writer, Path::new("(writer)"), progress).await?;
        Ok(auth.file)
    }

    /// Downloads a file the client was given (a tool output) into `writer`, like
    /// [`download_into`](Self::download_into), verifying the bytes against `file` **and** the
    /// `files/authorizeDownload` answer.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::files::output_files;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let result = client.call_tool("render", serde_json::json!({})).await?;
    /// if let Some(file) = output_files(&result).first() {
    ///     let mut png = Vec::new();
    ///     client.download_file_into(file, &mut png, None).await?;
    ///     println!("{} bytes", png.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn download_file_into<W>(
        &self,
        file: &FileValue,
        writer: &mut W,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue>
    where
        W: tokio::io::AsyncWrite + Unpin + Send + ?Sized,
    {
        let (auth, resp) = self.open_download(&file.uri).await?;
        let announced = [file, &auth.file];
        receive(resp, &announced, writer, Path::new("(writer)"), progress).await?;
        Ok(auth.file)
    }

    /// `files/authorizeDownload`, the descriptor checks, and the data-plane request, up to a
    /// successful status.
    async fn open_download(
        &self,
        uri: &str,
    ) -> Result<(AuthorizeDownloadResult, reqwest::Response)> {
        let (http, cfg, policy) = self.data_plane()?;
        let auth = self.authorize_download(uri).await?;
        let url = check_descriptor(&auth.download, cfg.allow_insecure_loopback)?;
        policy.check_url(&url)?;
        let method = descriptor_method(&auth.download, Operation::Download)?;
        let mut req = http.request(method, url);
        for (k, v) in super::upload::descriptor_headers(auth.download.headers.as_ref(), false) {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|source| {
            refused_address(&source).unwrap_or(TransferError::Http {
                operation: Operation::Download,
                source,
            })
        })?;
        if !resp.status().is_success() {
            return Err(refusal(resp, Operation::Download).await.into());
        }
        Ok((auth, resp))
    }

    async fn download_verified(
        &self,
        uri: &str,
        given: Option<&FileValue>,
        dest: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<(PathBuf, FileValue)> {
        let (auth, resp) = self.open_download(uri).await?;
        let announced: Vec<&FileValue> = given.into_iter().chain([&auth.file]).collect();
        let target = target_path(
            dest,
            &[
                given.and_then(|f| f.name.as_deref()),
                auth.file.name.as_deref(),
            ],
        );
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let (part, file) = PartFile::create(parent).await?;
        let mut out = tokio::io::BufWriter::with_capacity(1 << 20, file);
        // Flushed, not fsynced: the rename happens only after verification and a client-side
        // copy can be fetched again (curl does not fsync either).
        let size = receive(resp, &announced, &mut out, &target, progress).await?;
        drop(out);
        part.persist(&target).await?;
        tracing::info!(file = %target.display(), size, "downloaded and verified");
        Ok((target, auth.file))
    }
}

/// Streams a download body into `out`, hashing it, stopping past the smallest announced size,
/// then flushes `out` and verifies size and digest against every announced value. Returns the
/// size. `what` names the destination in I/O errors.
async fn receive<W>(
    resp: reqwest::Response,
    announced: &[&FileValue],
    out: &mut W,
    what: &Path,
    progress: Option<Progress<'_>>,
) -> Result<u64>
where
    W: tokio::io::AsyncWrite + Unpin + Send + ?Sized,
{
    let limit = announced_size(announced);
    let total = limit.or(resp.content_length());
    let mut hasher = DigestBuilder::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|source| TransferError::Http {
            operation: Operation::Download,
            source,
        })?;
        hasher.update(&chunk);
        if let Some(expected) = limit
            && hasher.len() > expected
        {
            return Err(TransferError::SizeMismatch {
                expected,
                received: hasher.len(),
            }
            .into());
        }
        out.write_all(&chunk)
            .await
            .map_err(|e| TransferError::io(what, e))?;
        if let Some(p) = progress {
            p(hasher.len(), total);
        }
    }
    out.flush().await.map_err(|e| TransferError::io(what, e))?;
    let (size, digest) = hasher.finish();
    verify(announced, size, &digest)?;
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fv(size: Option<u64>, digest: Option<FileDigest>) -> FileValue {
        FileValue {
            uri: "mcp-file://s/f".into(),
            name: None,
            mime_type: None,
            size,
            digest,
        }
    }

    #[test]
    fn names_are_reduced_to_a_safe_last_component() {
        assert_eq!(safe_file_name("report.pdf"), Some("report.pdf"));
        assert_eq!(safe_file_name("../../etc/passwd"), Some("passwd"));
        assert_eq!(safe_file_name("a\\b.txt"), Some("b.txt"));
        assert_eq!(safe_file_name(".."), None);
        assert_eq!(safe_file_name(".bashrc"), None);
        assert_eq!(safe_file_name("dir/"), None);
        assert_eq!(safe_file_name(""), None);
        let dir = std::env::temp_dir();
        assert_eq!(
            target_path(&dir, &[Some(".hidden"), Some("x.bin")]),
            dir.join("x.bin")
        );
        assert_eq!(target_path(&dir, &[None, None]), dir.join(FALLBACK_NAME));
        let file = dir.join("no-such-dir-smcp").join("f");
        assert_eq!(target_path(&file, &[Some("x")]), file);
    }

    #[test]
    fn verification_checks_every_announced_size_and_digest() {
        let bytes = b"generated";
        let good = FileDigest::sha256(bytes);
        let n = bytes.len() as u64;
        assert!(verify(&[&fv(Some(n), Some(good.clone()))], n, &good).is_ok());
        assert!(verify(&[&fv(None, None)], n, &good).is_ok());
        let e = verify(&[&fv(Some(n + 1), None)], n, &good).unwrap_err();
        assert!(
            matches!(e, TransferError::SizeMismatch { expected, received } if expected == n + 1 && received == n)
        );
        // The tool's FileValue and the authorizeDownload answer are both binding.
        let wrong = FileDigest::sha256(b"other bytes");
        let e = verify(
            &[&fv(Some(n), Some(good.clone())), &fv(Some(n), Some(wrong))],
            n,
            &good,
        )
        .unwrap_err();
        assert!(matches!(e, TransferError::DigestMismatch { .. }), "{e:?}");
        let md5 = FileDigest {
            algorithm: "md5".into(),
            value: "x".into(),
        };
        let e = verify(&[&fv(Some(n), Some(md5))], n, &good).unwrap_err();
        assert!(matches!(
            e,
            TransferError::UnsupportedDigestAlgorithm { .. }
        ));
        assert_eq!(
            announced_size(&[&fv(Some(9), None), &fv(Some(4), None), &fv(None, None)]),
            Some(4)
        );
    }

    #[tokio::test]
    async fn part_files_vanish_unless_persisted() {
        let dir = std::env::temp_dir().join(format!("smcp-part-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let listing = || {
            let mut v: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        {
            let (part, mut f) = PartFile::create(&dir).await.unwrap();
            f.write_all(b"partial").await.unwrap();
            assert_eq!(listing().len(), 1);
            assert!(listing()[0].starts_with(".smcp-download-"));
            drop(part); // an error or a dropped download future
        }
        assert!(listing().is_empty(), "{:?}", listing());
        let (part, mut f) = PartFile::create(&dir).await.unwrap();
        f.write_all(b"complete").await.unwrap();
        f.flush().await.unwrap();
        part.persist(&dir.join("final.bin")).await.unwrap();
        assert_eq!(listing(), vec!["final.bin".to_owned()]);
        assert_eq!(std::fs::read(dir.join("final.bin")).unwrap(), b"complete");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
