//! Why `pitchside run` could not start.

/// Start-up failures; once running, errors are counted and logged instead.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The spool folder cannot be used.
    #[error(transparent)]
    Spool(#[from] crate::sinks::spool::SpoolError),
    /// The store cannot be opened (boxed: it is large, and rare).
    #[error(transparent)]
    Store(Box<crate::sinks::store::StoreError>),
    /// The metrics endpoint cannot listen.
    #[error("metrics.listen {addr}: {source} (is another pitchside running? set metrics.listen = \"\" to turn it off)")]
    Listen {
        /// Address.
        addr: String,
        /// OS error.
        source: std::io::Error,
    },
    /// An MQTT connection cannot be set up (password, certificates).
    #[error(transparent)]
    Mqtt(#[from] crate::mqtt::conn::ConnError),
    /// The venue console cannot start (address, token, certificate).
    #[error(transparent)]
    Console(#[from] crate::console::ConsoleError),
    /// No source is configured.
    #[error("{}", crate::commands::preflight::NO_SOURCES)]
    NoSources,
    /// A start-up check failed (the same checks as `check-config`).
    #[error(transparent)]
    Preflight(#[from] crate::config::ConfigError),
}

impl From<crate::sinks::store::StoreError> for AppError {
    fn from(e: crate::sinks::store::StoreError) -> Self {
        AppError::Store(Box::new(e))
    }
}
