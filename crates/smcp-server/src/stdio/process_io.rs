//! The process's standard input and output as async streams, without the blocking pool where
//! the operating system allows it.
//!
//! tokio's `stdin()` and `stdout()` do every read and write on a blocking thread: a round trip
//! is four thread hand-offs, about 30 µs of CPU on a 2-core VM, more than the MCP work of an
//! echo. On Unix, when a standard stream is a pipe (what a host that spawns the server gives
//! it) or a Unix stream socket (what libuv-based hosts such as Node give it), it is served by
//! the runtime's reactor instead: a duplicate of the descriptor is put in non-blocking mode
//! and registered with epoll, so reading and writing happen on the task that asked.
//!
//! Anything else (a terminal, a regular file, another kind of socket, a platform without
//! this) falls back to tokio's blocking-pool streams, which work with any descriptor.
//!
//! Non-blocking mode belongs to the open file description, so it is shared with every process
//! holding the same pipe or socket end. A host's end is a separate description, so this is
//! invisible to it; for a description shared with another process (a shell's pipe also held by
//! a sibling), the modes found are put back when the last switched stream is dropped, and
//! `StdioOptions::blocking_io` keeps to the blocking pool altogether. A terminal is never
//! switched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Standard input as an [`AsyncRead`]: through the reactor when it is a pipe or a Unix stream
/// socket (on Unix), through tokio's blocking pool otherwise. See [`StdioInput::open`].
/// Once it and any [`StdioOutput`] are dropped, the descriptors get back the modes they were
/// found in.
#[derive(Debug)]
pub struct StdioInput(Input);

#[derive(Debug)]
enum Input {
    #[cfg(unix)]
    Pipe {
        io: tokio::net::unix::pipe::Receiver,
        _restore: unix::Restore,
    },
    #[cfg(unix)]
    Socket {
        io: tokio::net::UnixStream,
        _restore: unix::Restore,
    },
    Blocking(tokio::io::Stdin),
}

/// Standard output as an [`AsyncWrite`]: through the reactor when it is a pipe or a Unix
/// stream socket (on Unix), through tokio's blocking pool otherwise. See
/// [`StdioOutput::open`]. Once it and any [`StdioInput`] are dropped, the descriptors get back
/// the modes they were found in.
#[derive(Debug)]
pub struct StdioOutput(Output);

#[derive(Debug)]
enum Output {
    #[cfg(unix)]
    Pipe {
        io: tokio::net::unix::pipe::Sender,
        _restore: unix::Restore,
    },
    #[cfg(unix)]
    Socket {
        io: tokio::net::UnixStream,
        _restore: unix::Restore,
    },
    Blocking(tokio::io::Stdout),
}

impl StdioInput {
    /// Standard input of this process. Must be called inside a tokio runtime with I/O
    /// enabled (the reactor path registers the descriptor there).
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some(input) = unix::input() {
            return Self(input);
        }
        Self(Input::Blocking(tokio::io::stdin()))
    }

    /// Standard input of this process through tokio's blocking pool, whatever it is.
    pub fn blocking() -> Self {
        Self(Input::Blocking(tokio::io::stdin()))
    }

    /// Whether reads go through the reactor (`true`) or the blocking pool.
    pub fn is_nonblocking(&self) -> bool {
        !matches!(self.0, Input::Blocking(_))
    }
}

impl StdioOutput {
    /// Standard output of this process. Must be called inside a tokio runtime with I/O
    /// enabled (the reactor path registers the descriptor there).
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some(output) = unix::output() {
            return Self(output);
        }
        Self(Output::Blocking(tokio::io::stdout()))
    }

    /// Standard output of this process through tokio's blocking pool, whatever it is.
    pub fn blocking() -> Self {
        Self(Output::Blocking(tokio::io::stdout()))
    }

    /// Whether writes go through the reactor (`true`) or the blocking pool.
    pub fn is_nonblocking(&self) -> bool {
        !matches!(self.0, Output::Blocking(_))
    }
}

impl AsyncRead for StdioInput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Input::Pipe { io: r, .. } => Pin::new(r).poll_read(cx, buf),
            #[cfg(unix)]
            Input::Socket { io: s, .. } => Pin::new(s).poll_read(cx, buf),
            Input::Blocking(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

/// Delegates one `AsyncWrite` method to whichever stream the output is.
macro_rules! each_output {
    ($self:ident, $w:ident => $call:expr) => {
        match &mut $self.get_mut().0 {
            #[cfg(unix)]
            Output::Pipe { io: $w, .. } => $call,
            #[cfg(unix)]
            Output::Socket { io: $w, .. } => $call,
            Output::Blocking($w) => $call,
        }
    };
}

impl AsyncWrite for StdioOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        each_output!(self, w => Pin::new(w).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        each_output!(self, w => Pin::new(w).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            #[cfg(unix)]
            Output::Pipe { io: w, .. } => w.is_write_vectored(),
            #[cfg(unix)]
            Output::Socket { io: w, .. } => w.is_write_vectored(),
            Output::Blocking(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each_output!(self, w => Pin::new(w).poll_flush(cx))
    }

    /// Flushes; the descriptor itself stays open (it is the process's standard output).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each_output!(self, w => Pin::new(w).poll_flush(cx))
    }
}

#[cfg(unix)]
mod unix {
    //! Which standard streams can be served by the reactor, and opening them so.

    use std::fs::File;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt as _;

    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    use tokio::net::unix::pipe;

    use super::{Input, Output};

    /// The status flags of some descriptors as found before this process switched any of them
    /// to non-blocking mode, and how many switched streams are alive.
    ///
    /// The mode belongs to the open file description, which the process that gave us the
    /// stream may share and use after we are done; stdin and stdout may even be one
    /// description (a socket given as both). So the modes are read once, before either is
    /// switched, and put back only when the last switched stream is dropped: never under a
    /// stream still in use.
    #[derive(Debug)]
    pub(super) struct Modes {
        found: Vec<(OwnedFd, OFlags)>,
        switched: AtomicUsize,
    }

    impl Modes {
        /// The modes of `fds` as they are now.
        pub(super) fn read(fds: &[BorrowedFd<'_>]) -> Self {
            let found = fds
                .iter()
                .filter_map(|fd| {
                    let owned = fd.try_clone_to_owned().ok()?;
                    let flags = fcntl_getfl(&owned).ok()?;
                    Some((owned, flags))
                })
                .collect();
            Self {
                found,
                switched: AtomicUsize::new(0),
            }
        }

        /// A guard for one switched stream: the last one dropped restores the modes.
        pub(super) fn guard(&'static self) -> Restore {
            self.switched.fetch_add(1, Ordering::SeqCst);
            Restore(self)
        }
    }

    /// Standard input's and output's modes, read the first time either is opened.
    fn standard_modes() -> &'static Modes {
        static MODES: OnceLock<Modes> = OnceLock::new();
        MODES.get_or_init(|| Modes::read(&[std::io::stdin().as_fd(), std::io::stdout().as_fd()]))
    }

    /// Held by a switched stream; see [`Modes`].
    #[derive(Debug)]
    pub(super) struct Restore(&'static Modes);

    impl Drop for Restore {
        fn drop(&mut self) {
            if self.0.switched.fetch_sub(1, Ordering::SeqCst) != 1 {
                return;
            }
            for (fd, flags) in &self.0.found {
                if let Err(error) = fcntl_setfl(fd, *flags) {
                    tracing::debug!(%error, "could not give a standard stream its mode back");
                }
            }
        }
    }

    /// What a descriptor is, as far as the reactor is concerned.
    #[derive(Debug, PartialEq, Eq)]
    pub(super) enum Kind {
        Pipe,
        UnixSocket,
        Other,
    }

    /// A duplicate of `fd` and what it is.
    pub(super) fn classify(fd: BorrowedFd<'_>) -> std::io::Result<(OwnedFd, Kind)> {
        let owned = fd.try_clone_to_owned()?;
        let file = File::from(owned);
        let kind = file.metadata()?.file_type();
        let owned = OwnedFd::from(file);
        let kind = if kind.is_fifo() {
            Kind::Pipe
        } else if kind.is_socket() && is_unix_stream(&owned) {
            Kind::UnixSocket
        } else {
            Kind::Other
        };
        Ok((owned, kind))
    }

    /// Whether a socket descriptor is a Unix-domain stream socket (a TCP or datagram socket
    /// is not served as one).
    fn is_unix_stream(fd: &OwnedFd) -> bool {
        let Ok(dup) = fd.try_clone() else {
            return false;
        };
        let stream = std::os::unix::net::UnixStream::from(dup);
        // getsockname fails unless the family is AF_UNIX; SO_TYPE is not reachable without
        // unsafe code, and a Unix datagram socket on a standard stream is not something a host
        // makes, so a Unix socket is taken as a stream.
        stream.local_addr().is_ok()
    }

    pub(super) fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(fd);
        stream.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(stream)
    }

    /// Standard input through the reactor, when it is a pipe or a Unix socket and a runtime
    /// with I/O is current; otherwise `None` (the reason is logged at debug).
    pub(super) fn input() -> Option<Input> {
        let opened = classify(std::io::stdin().as_fd()).and_then(|(fd, kind)| {
            let restore = standard_modes().guard();
            Ok(match kind {
                Kind::Pipe => Some(Input::Pipe {
                    io: pipe::Receiver::from_file(File::from(fd))?,
                    _restore: restore,
                }),
                Kind::UnixSocket => Some(Input::Socket {
                    io: socket(fd)?,
                    _restore: restore,
                }),
                Kind::Other => None,
            })
        });
        settle("input", opened)
    }

    /// Standard output through the reactor, as [`input`].
    pub(super) fn output() -> Option<Output> {
        let opened = classify(std::io::stdout().as_fd()).and_then(|(fd, kind)| {
            let restore = standard_modes().guard();
            Ok(match kind {
                Kind::Pipe => Some(Output::Pipe {
                    io: pipe::Sender::from_file(File::from(fd))?,
                    _restore: restore,
                }),
                Kind::UnixSocket => Some(Output::Socket {
                    io: socket(fd)?,
                    _restore: restore,
                }),
                Kind::Other => None,
            })
        });
        settle("output", opened)
    }

    fn settle<T>(stream: &'static str, opened: std::io::Result<Option<T>>) -> Option<T> {
        match opened {
            Ok(Some(io)) => Some(io),
            Ok(None) => {
                tracing::debug!(
                    stream,
                    "standard {stream} is not a pipe or a Unix socket: blocking pool"
                );
                None
            }
            Err(error) => {
                tracing::debug!(stream, %error, "standard {stream} cannot be made non-blocking: blocking pool");
                None
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::fd::AsFd;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::unix::{Kind, classify};

    #[test]
    fn a_pipe_a_unix_socket_and_a_file_are_told_apart() {
        let (reader, writer) = std::io::pipe().unwrap();
        assert_eq!(classify(reader.as_fd()).unwrap().1, Kind::Pipe);
        assert_eq!(classify(writer.as_fd()).unwrap().1, Kind::Pipe);
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(classify(a.as_fd()).unwrap().1, Kind::UnixSocket);
        let file = std::fs::File::open("Cargo.toml").unwrap();
        assert_eq!(classify(file.as_fd()).unwrap().1, Kind::Other);
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert_eq!(classify(tcp.as_fd()).unwrap().1, Kind::Other);
    }

    #[tokio::test]
    async fn a_classified_pipe_reads_and_writes_through_the_reactor() {
        let (reader, writer) = std::io::pipe().unwrap();
        let (r, _) = classify(reader.as_fd()).unwrap();
        let (w, _) = classify(writer.as_fd()).unwrap();
        drop((reader, writer));
        let mut r = tokio::net::unix::pipe::Receiver::from_owned_fd(r).unwrap();
        let mut w = tokio::net::unix::pipe::Sender::from_owned_fd(w).unwrap();
        w.write_all(b"{\"id\":1}\n").await.unwrap();
        drop(w);
        let mut got = String::new();
        r.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "{\"id\":1}\n");
    }

    #[tokio::test]
    async fn modes_are_given_back_when_the_last_switched_stream_goes() {
        use rustix::fs::{OFlags, fcntl_getfl};
        // One socket given as both streams: one description, switched by both.
        let (end, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let nonblocking = || fcntl_getfl(&end).unwrap().contains(OFlags::NONBLOCK);
        assert!(!nonblocking());
        let modes: &'static super::unix::Modes = Box::leak(Box::new(super::unix::Modes::read(&[
            end.as_fd(),
            end.as_fd(),
        ])));
        let (input_fd, _) = classify(end.as_fd()).unwrap();
        let (output_fd, _) = classify(end.as_fd()).unwrap();
        let input = (super::unix::socket(input_fd).unwrap(), modes.guard());
        let output = (super::unix::socket(output_fd).unwrap(), modes.guard());
        assert!(nonblocking(), "the reactor's mode is the description's");
        drop(input);
        assert!(nonblocking(), "not put back under the output still in use");
        drop(output);
        assert!(!nonblocking(), "put back once both are gone");
    }

    #[tokio::test]
    async fn a_classified_socket_reads_through_the_reactor() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let (fd, kind) = classify(a.as_fd()).unwrap();
        assert_eq!(kind, Kind::UnixSocket);
        drop(a);
        let mut stream = super::unix::socket(fd).unwrap();
        let mut b = tokio::net::UnixStream::from_std({
            b.set_nonblocking(true).unwrap();
            b
        })
        .unwrap();
        b.write_all(b"ping\n").await.unwrap();
        drop(b);
        let mut got = String::new();
        stream.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "ping\n");
    }
}
