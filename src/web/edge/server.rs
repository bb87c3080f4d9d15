//! The accept loop, in place of `axum::serve`, which has no header-read timeout (hyper needs a
//! timer for it, and axum gives none), no idle timeout and no cap on connections: idle and
//! half-sent connections stayed open past 75 s until the file-descriptor limit ran out.
//!
//! - A cap on open connections: past it the loop stops accepting, and new clients wait in the
//!   kernel's backlog until one closes (nothing is accepted only to be dropped).
//! - A header-read timeout: a client has this long to send a request's headers, on a new
//!   connection and between requests on a kept-alive one (hyper's own timer).
//! - An idle timeout: a connection on which no byte moved either way for this long is closed,
//!   which also ends a body that trickles in a byte now and then.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// The connection limits, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// Descriptors kept back from connections: the database pool, spool files, Redis, logs.
const RESERVED_FDS: u64 = 256;

/// The connection cap that the process's descriptor limit can hold. The soft limit is raised to
/// the hard one first (Debian's default soft limit is 1,024); a cap above what is left after
/// [`RESERVED_FDS`] is lowered to it, with a warning, since past it `accept` and every file
/// and socket the server opens would fail with EMFILE.
pub fn connection_cap(wanted: usize) -> usize {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct we pass.
        let soft = unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return wanted;
            }
            if lim.rlim_cur < lim.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: lim.rlim_max,
                    rlim_max: lim.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    lim.rlim_cur = lim.rlim_max;
                }
            }
            lim.rlim_cur
        };
        let room = soft.saturating_sub(RESERVED_FDS).max(16) as usize;
        if wanted > room {
            tracing::warn!(
                wanted,
                cap = room,
                fd_limit = soft,
                "the connection cap is above what the descriptor limit holds: lowered"
            );
            return room;
        }
        wanted
    }
    #[cfg(not(unix))]
    wanted
}

/// How long a stop waits for requests in flight before it closes what is left.
const DRAIN: Duration = Duration::from_secs(30);

/// Serves `router` on `listener` until `stop` resolves, then drains.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(connection_cap(
        limits.max_connections.max(1),
    )));
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        // A turn first, then the accept: at the cap, new clients stay in the backlog.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.map_err(io::Error::other)?,
            _ = &mut stop => break,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: wait and go on,
                    // as axum::serve does.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let service = router.clone().map_request(
            move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req
            },
        );
        let service = hyper_util::service::TowerToHyperService::new(service);
        let (io, activity) = Tracked::new(stream);
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .keep_alive(true)
            .serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        let idle = limits.idle_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            tokio::select! {
                r = conn => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, %peer, "connection ended with an error");
                    }
                }
                _ = activity.idle_for(idle) => {
                    tracing::debug!(%peer, "idle connection closed");
                }
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after the drain period were cut off");
    }
    Ok(())
}

/// Milliseconds since the process started: the clock of the activity stamps.
fn now_ms() -> u64 {
    static START: LazyLock<Instant> = LazyLock::new(Instant::now);
    START.elapsed().as_millis() as u64
}

/// A connection's last activity, shared between its stream and its watchdog.
struct Activity(Arc<AtomicU64>);

impl Activity {
    /// Resolves once no byte has moved for `limit`.
    async fn idle_for(&self, limit: Duration) {
        let limit_ms = limit.as_millis() as u64;
        loop {
            let last = self.0.load(Ordering::Relaxed);
            let quiet = now_ms().saturating_sub(last);
            if quiet >= limit_ms {
                return;
            }
            tokio::time::sleep(Duration::from_millis(limit_ms - quiet)).await;
        }
    }
}

/// A TCP stream that stamps the time of every read and write that moved bytes.
struct Tracked {
    inner: TcpStream,
    last: Arc<AtomicU64>,
}

impl Tracked {
    fn new(inner: TcpStream) -> (Tracked, Activity) {
        let last = Arc::new(AtomicU64::new(now_ms()));
        (
            Tracked {
                inner,
                last: last.clone(),
            },
            Activity(last),
        )
    }
    fn touch(&self) {
        self.last.store(now_ms(), Ordering::Relaxed);
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
