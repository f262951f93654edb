//! Bounds on a connection's life, beyond hyper's own header timeout:
//! a client must send its first byte within the header timeout (hyper
//! starts that timer only once a request has begun), and a response
//! whose writes make no progress for a while (a client that stopped
//! reading) ends the connection. How many connections are open at once is
//! bounded by a semaphore in the accept loop (`max_connections`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// Wait for the client's first byte: false when none came within `within`
/// (or the client closed first), and the connection should be dropped.
pub async fn first_byte(stream: &TcpStream, within: Duration) -> bool {
    let mut b = [0u8; 1];
    matches!(
        tokio::time::timeout(within, stream.peek(&mut b)).await,
        Ok(Ok(n)) if n > 0
    )
}

/// A stream whose writes fail once one has waited `stall` without progress.
pub struct WriteDeadline<S> {
    inner: S,
    stall: Duration,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    pub fn new(inner: S, stall: Duration) -> WriteDeadline<S> {
        WriteDeadline {
            inner,
            stall,
            timer: None,
        }
    }

    /// `Pending` from the inner stream: arm the timer (once), and fail when it fired.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let stall = self.stall;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progress<T>(&mut self, r: Poll<io::Result<T>>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match r {
            Poll::Pending => self.pending(cx),
            ready => {
                self.timer = None;
                ready
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progress(r, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.progress(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.progress(r, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The open-file limit of this process (soft), if it can be read.
pub fn open_file_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own and reads nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// Connections served at once: the setting, but never so many that the
/// process runs out of files for its indexes (128 kept for them).
pub fn connection_limit(setting: usize, open_files: Option<u64>) -> usize {
    let room = open_files.map_or(usize::MAX, |n| n.saturating_sub(128) as usize);
    setting.min(room).max(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn the_limit_leaves_files_for_the_indexes() {
        assert_eq!(connection_limit(512, Some(1024)), 512);
        assert_eq!(connection_limit(512, Some(256)), 128);
        assert_eq!(connection_limit(512, Some(100)), 8);
        assert_eq!(connection_limit(512, None), 512);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_write_that_makes_no_progress_fails_after_the_stall() {
        // a pipe of 64 bytes whose reader never reads
        let (a, _b) = tokio::io::duplex(64);
        let mut w = WriteDeadline::new(a, Duration::from_secs(5));
        w.write_all(&[0u8; 64]).await.unwrap();
        let err = w.write_all(&[0u8; 64]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_slow_but_moving_reader_is_fine() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = WriteDeadline::new(a, Duration::from_secs(5));
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let mut got = 0;
            while got < 256 {
                tokio::time::sleep(Duration::from_secs(3)).await;
                got += b.read(&mut buf).await.unwrap();
            }
            got
        });
        w.write_all(&[0u8; 256]).await.unwrap();
        assert_eq!(reader.await.unwrap(), 256);
    }
}
