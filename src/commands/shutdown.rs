//! When a command stops: SIGTERM or SIGINT (Ctrl-C), or, for the gateway
//! `bench-mqtt` starts, its parent going away. Both mean drain, not abort.

use tokio_util::sync::CancellationToken;

/// Cancels the token on SIGTERM or SIGINT (Ctrl-C), logging which.
pub fn shutdown_on_signals() -> CancellationToken {
    use tokio::signal::unix::{signal, SignalKind};
    let token = CancellationToken::new();
    let t = token.clone();
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    tokio::spawn(async move {
        let name = match (term, int) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        };
        tracing::info!("{name} received: shutting down (draining).");
        t.cancel();
    });
    token
}

/// Shuts down (cancels `token`) once `parent` is no longer this process's
/// parent: it died, and we were handed to init. Polled, so no unsafe
/// `pre_exec`/`PR_SET_PDEATHSIG` is needed, and a parent that died before
/// this started is caught on the first check.
pub fn exit_with_parent(parent: u32, token: CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(200));
        loop {
            tokio::select! {
                _ = token.cancelled() => return,
                _ = tick.tick() => {}
            }
            if std::os::unix::process::parent_id() != parent {
                tracing::warn!(parent, "Parent process is gone: shutting down (draining).");
                token.cancel();
                return;
            }
        }
    });
}
