//! The `pitchside` command line: a thin shell over the library.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use pitchside::config::{self, Config, SimulatorSection};
use pitchside::model::SensorKind;
use std::io::Write as _;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(
    name = "pitchside",
    version,
    about = "Edge gateway for sports venues: sensors in, alerts and Parquet tables out."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway daemon (without --config: the built-in demo, simulator → ./outbox).
    Run {
        /// Venue config file.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Board file (boards/*.toml) whose defaults lie under the config
        /// (default: $PITCHSIDE_BOARD, which the board's systemd drop-in sets).
        #[arg(long, requires = "config")]
        board: Option<PathBuf>,
        /// Shut down (draining) when the process with this id stops being our
        /// parent: how `bench-mqtt` makes its gateway die with it.
        #[arg(long, hide = true)]
        parent_pid: Option<u32>,
    },
    /// Process a file of input lines, write every table, exit.
    Replay {
        /// Venue config file.
        #[arg(long)]
        config: PathBuf,
        /// Input file, one JSON event per line ("-" for stdin).
        #[arg(long)]
        input: PathBuf,
        /// Write the tables to this folder (laid out as the store) instead of the configured store.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Sensor kind for lines without "sensor".
        #[arg(long)]
        sensor: Option<String>,
    },
    /// Generate sensor events (with injected anomalies and fatigue) as JSON lines.
    Simulate(SimulateArgs),
    /// Validate a config and print the effective configuration.
    CheckConfig {
        /// Venue config file.
        #[arg(long)]
        config: PathBuf,
        /// Board file (boards/*.toml): its defaults lie under the config, and the
        /// result must fit the board's memory (default: $PITCHSIDE_BOARD, as for `run`).
        #[arg(long)]
        board: Option<PathBuf>,
    },
    /// Print a systemd drop-in for pitchside.service sized to a board (MemoryMax,
    /// and PITCHSIDE_BOARD for `run`). The .deb's postinst writes it for the detected board.
    ServiceDropin {
        /// Board file, or "auto": the board in --boards-dir whose models match --model-file.
        #[arg(long, default_value = "auto")]
        board: String,
        /// Where the board files are (for --board auto).
        #[arg(long, default_value = "/usr/share/pitchside/boards")]
        boards_dir: PathBuf,
        /// The device's model string (for --board auto).
        #[arg(long, default_value = "/proc/device-tree/model")]
        model_file: PathBuf,
    },
    /// Show the running gateway's state (sources, rates, keys, watermarks, spool, uploads).
    /// Exit code: 0 healthy, 1 unhealthy (the reason is printed), 2 gateway not reachable.
    Status {
        /// Read metrics.listen from this config (default: the address below).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Metrics address of the gateway.
        #[arg(long, default_value = "127.0.0.1:9898")]
        addr: String,
    },
    /// Measure replay throughput, peak memory and detector state size.
    Bench(pitchside::commands::bench::BenchArgs),
    /// Measure publish → alert latency and MQTT ingest rate through a running broker.
    BenchMqtt(pitchside::commands::bench::mqtt::BenchMqttArgs),
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// Take device counts and rates from this config's [sources.simulator].
    #[arg(long)]
    config: Option<PathBuf>,
    /// Events per second (event-time spacing, and pace with --realtime).
    #[arg(long)]
    rate: Option<f64>,
    /// Stop after this many events (default: run until stopped, in real time).
    #[arg(long)]
    count: Option<u64>,
    /// Event time of the first event, RFC 3339 (default: now).
    #[arg(long)]
    start: Option<String>,
    /// Random seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Chance per reading of an injected 4–6σ anomaly.
    #[arg(long)]
    anomaly_rate: Option<f64>,
    /// Pace output in real time even with --count.
    #[arg(long)]
    realtime: bool,
    /// Write to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Write to this serial port instead (8N1, `--baud`).
    #[arg(long, conflicts_with_all = ["output", "mqtt_host"])]
    serial: Option<String>,
    /// Baud rate for --serial.
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// Publish to this MQTT broker instead (QoS 1, topic {prefix}/{sensor}/{device_id}).
    #[arg(long, conflicts_with = "output")]
    mqtt_host: Option<String>,
    /// MQTT port (default 1883, 8883 with --mqtt-ca).
    #[arg(long)]
    mqtt_port: Option<u16>,
    /// MQTT topic prefix.
    #[arg(long, default_value = "pitchside/sensors")]
    mqtt_topic_prefix: String,
    /// MQTT user name.
    #[arg(long)]
    mqtt_username: Option<String>,
    /// Environment variable holding the MQTT password.
    #[arg(long)]
    mqtt_password_env: Option<String>,
    /// CA file: connect with TLS.
    #[arg(long)]
    mqtt_ca: Option<String>,
}

fn load(path: &std::path::Path) -> Result<Config> {
    Ok(config::load(path)?)
}

/// `$PITCHSIDE_BOARD` (set by the board's systemd drop-in), for `run` and `check-config`.
fn board_from_env() -> Option<PathBuf> {
    std::env::var_os("PITCHSIDE_BOARD")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `check-config`: the start-up checks of `run` (same errors, same words),
/// warnings on stderr.
fn check_startup(cfg: &Config) -> Result<()> {
    let report = pitchside::commands::preflight::preflight(cfg);
    let busy = pitchside::commands::preflight::busy(cfg);
    for w in report.warnings.iter().chain(&busy) {
        eprintln!("warning: {w}");
    }
    report.into_result()?;
    Ok(())
}

/// Handle to change the log level of the running process.
type LevelHandle = tracing_subscriber::reload::Handle<
    tracing_subscriber::filter::LevelFilter,
    tracing_subscriber::Registry,
>;

/// `PITCHSIDE_LOG` when set (and not empty): it overrides `log.level`.
fn env_log_level() -> Option<String> {
    std::env::var("PITCHSIDE_LOG")
        .ok()
        .filter(|v| !v.is_empty())
}

fn parse_level(level: &str) -> Option<tracing_subscriber::filter::LevelFilter> {
    level
        .parse::<tracing::Level>()
        .ok()
        .map(tracing_subscriber::filter::LevelFilter::from_level)
}

fn init_logging(config: Option<&Config>) -> LevelHandle {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = env_log_level()
        .or_else(|| config.map(|c| c.log.level.clone()))
        .unwrap_or_else(|| "info".into());
    let level = parse_level(&level).unwrap_or(tracing_subscriber::filter::LevelFilter::INFO);
    let (filter, handle) = tracing_subscriber::reload::Layer::new(level);
    let json = config.is_some_and(|c| c.log.json);
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let text = (!json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_target(false)
    });
    let json = json.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_target(false)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(text)
        .with(json)
        .init();
    handle
}

/// Cancels the token on SIGTERM or SIGINT (Ctrl-C), logging which.
fn shutdown_on_signals() -> CancellationToken {
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
fn exit_with_parent(parent: u32, token: CancellationToken) {
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

/// Writes `text` to stdout. A closed stdout (`| head`) is not an error:
/// the reader has what it wanted, so the command ends quietly.
fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// Prints an error once: its chain, leaving out causes that an outer message
/// already quotes (our errors name their cause in their own text).
fn report(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// A panic anywhere ends the process at once, as `panic = "abort"` would:
/// a daemon with a dead task must not limp on, and systemd restarts it (the
/// journal replays what was in flight). The release profile unwinds only so
/// that the unit tests under qemu can share its compiled dependencies.
fn abort_on_panic() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
}

fn main() -> std::process::ExitCode {
    abort_on_panic();
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            let _ = writeln!(std::io::stderr(), "error: {}", report(&e));
            if e.is::<pitchside::commands::replay::NothingAccepted>() {
                return pitchside::commands::replay::EXIT_NOTHING_ACCEPTED.into();
            }
            std::process::ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<std::process::ExitCode> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        match cli.command {
            Command::Run {
                config,
                board,
                parent_pid,
            } => {
                let board = board.or_else(board_from_env);
                let cfg = match (&config, &board) {
                    (Some(p), Some(b)) => config::load_with_board(p, b)?.0,
                    (Some(p), None) => load(p)?,
                    (None, _) => config::parse(config::DEMO, "embedded demo config")?.validate()?,
                };
                let level = init_logging(Some(&cfg));
                // Before anything else: from here on SIGHUP/SIGUSR1/SIGUSR2 never end the process.
                let signals = pitchside::commands::run::Signals::install()
                    .context("cannot install the signal handlers")?;
                let token = shutdown_on_signals();
                if config.is_none() {
                    tracing::info!(
                        "No --config given: running the built-in demo (config/demo.toml)."
                    );
                }
                if let Some(parent) = parent_pid {
                    exit_with_parent(parent, token.clone());
                }
                let load: Option<pitchside::commands::run::LoadConfig> = config.map(|path| {
                    Box::new(move || match &board {
                        Some(b) => config::load_with_board(&path, b).map(|(c, _)| c),
                        None => config::load(&path),
                    }) as pitchside::commands::run::LoadConfig
                });
                let set_log_level: pitchside::commands::run::SetLogLevel = Box::new(move |l: &str| {
                    if let Some(env) = env_log_level() {
                        return Err(format!("PITCHSIDE_LOG={env} overrides it"));
                    }
                    let filter = parse_level(l).ok_or_else(|| format!("{l:?} is not a level"))?;
                    level.reload(filter).map_err(|e| e.to_string())
                });
                let control = pitchside::commands::run::Control {
                    signals,
                    load,
                    set_log_level,
                };
                pitchside::commands::run::run_with(cfg, token, Some(control)).await?;
            }
            Command::Replay {
                config,
                input,
                output,
                sensor,
            } => {
                let cfg = load(&config)?;
                init_logging(Some(&cfg));
                let sensor = match sensor {
                    Some(s) => Some(SensorKind::parse(&s).with_context(|| {
                        format!("--sensor {s:?} must be wearable, pitch, crowd or generic")
                    })?),
                    None => None,
                };
                let summary =
                    pitchside::commands::replay::replay(&cfg, &input, output.as_deref(), sensor).await?;
                // A closed stdout (`| head`) must not turn a finished replay into a failure.
                emit(&summary.to_string())?;
                summary.check_accepted()?;
            }
            Command::Simulate(args) => simulate(args).await?,
            Command::CheckConfig { config, board } => match board.or_else(board_from_env) {
                Some(b) => {
                    let (cfg, board) = config::load_with_board(&config, &b)?;
                    check_startup(&cfg)?;
                    let i = &board.info;
                    emit(&format!(
                        "# {}: valid on {} ({}; serial {}; MemoryMax {})\n{}\n",
                        config.display(),
                        i.name,
                        i.target,
                        i.serial_device,
                        i.memory_max,
                        cfg.to_toml()
                    ))?;
                }
                None => {
                    let cfg = load(&config)?;
                    check_startup(&cfg)?;
                    emit(&format!("# {}: valid\n{}\n", config.display(), cfg.to_toml()))?;
                }
            },
            Command::ServiceDropin {
                board,
                boards_dir,
                model_file,
            } => {
                let (path, board) = if board == "auto" {
                    let model = std::fs::read_to_string(&model_file).with_context(|| {
                        format!(
                            "cannot read the device model from {}: not a Raspberry Pi? pass --board <file>",
                            model_file.display()
                        )
                    })?;
                    config::detect_board(&boards_dir, &model)?
                } else {
                    let p = PathBuf::from(board);
                    let b = config::Board::load(&p)?;
                    (std::fs::canonicalize(&p).unwrap_or(p), b)
                };
                emit(&board.systemd_dropin(&path))?;
            }
            Command::Status { config, addr } => {
                use pitchside::commands::status::EXIT_UNREACHABLE;
                let addr = match &config {
                    Some(p) => match load(p).and_then(|c| {
                        c.metrics.listen.context(
                            "metrics.listen is \"\" in that config: the gateway exposes no status",
                        )
                    }) {
                        Ok(a) => a,
                        Err(e) => {
                            let _ = writeln!(std::io::stderr(), "error: {}", report(&e));
                            return Ok(std::process::ExitCode::from(EXIT_UNREACHABLE));
                        }
                    },
                    None => addr,
                };
                return match pitchside::commands::status::report(&addr) {
                    Ok(r) => {
                        emit(&r.text)?;
                        Ok(std::process::ExitCode::from(r.exit_code()))
                    }
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "error: {e}");
                        Ok(std::process::ExitCode::from(EXIT_UNREACHABLE))
                    }
                };
            }
            Command::BenchMqtt(args) => {
                init_logging(None);
                emit(&pitchside::commands::bench::mqtt::run(&args).await?)?;
            }
            Command::Bench(args) => {
                let report = pitchside::commands::bench::run(&args).await?;
                emit(&format!("{report}\n"))?;
            }
        }
        Ok(std::process::ExitCode::SUCCESS)
    })
}

async fn simulate(a: SimulateArgs) -> Result<()> {
    use std::io::Write;
    let mut sim_cfg = match &a.config {
        Some(p) => load(p)?.sources.simulator.unwrap_or_default(),
        None => SimulatorSection::default(),
    };
    if let Some(r) = a.rate {
        anyhow::ensure!(
            r.is_finite() && (0.001..=10_000_000.0).contains(&r),
            "--rate must be between 0.001 and 10000000 events per second"
        );
        sim_cfg.rate = r;
    }
    if let Some(s) = a.seed {
        sim_cfg.seed = s;
    }
    if let Some(x) = a.anomaly_rate {
        anyhow::ensure!(
            (0.0..=1.0).contains(&x),
            "--anomaly-rate is a chance per reading, between 0 and 1"
        );
        sim_cfg.anomaly_rate = x;
    }
    let start = match &a.start {
        Some(s) => pitchside::util::time::parse_rfc3339(s)
            .map_err(|e| anyhow::anyhow!("--start {s:?}: {e}"))?,
        None => pitchside::util::time::now_micros(),
    };
    let mut sim = pitchside::sources::simulator::Simulator::new(&sim_cfg, start);
    if a.serial.is_some() || a.mqtt_host.is_some() {
        return simulate_to_device(&a, sim, start).await;
    }
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let realtime = a.realtime || a.count.is_none();
    let token = shutdown_on_signals();
    let wall0 = pitchside::util::time::now_micros();
    let mut n = 0u64;
    while a.count.is_none_or(|c| n < c) && !token.is_cancelled() {
        if realtime {
            let due = wall0 + (sim.next_time() - start);
            let now = pitchside::util::time::now_micros();
            if due > now {
                if let Err(e) = out.flush() {
                    if e.kind() == std::io::ErrorKind::BrokenPipe {
                        return Ok(());
                    }
                    return Err(e.into());
                }
                tokio::time::sleep(std::time::Duration::from_micros((due - now) as u64)).await;
            }
        }
        let (line, _) = sim.next_line();
        if let Err(e) = writeln!(out, "{line}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e.into());
        }
        n += 1;
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `simulate --serial` / `--mqtt-host`: the same stream, to a device or broker.
async fn simulate_to_device(
    a: &SimulateArgs,
    mut sim: pitchside::sources::simulator::Simulator,
    start: i64,
) -> Result<()> {
    use pitchside::sources::sim_output::SimOutput;
    init_logging(None);
    let mut out = match (&a.serial, &a.mqtt_host) {
        (Some(path), _) => SimOutput::serial(path, a.baud)?,
        (None, Some(host)) => {
            let broker = pitchside::config::MqttBroker {
                host: host.clone(),
                port: a.mqtt_port,
                client_id: None,
                username: a.mqtt_username.clone(),
                password_env: a.mqtt_password_env.clone(),
                password_file: None,
                keep_alive: "30s".into(),
                tls: a.mqtt_ca.as_ref().map(|ca| pitchside::config::MqttTls {
                    ca_file: ca.clone(),
                    client_cert: None,
                    client_key: None,
                }),
            };
            SimOutput::mqtt(&broker, &a.mqtt_topic_prefix).await?
        }
        (None, None) => anyhow::bail!("--serial or --mqtt-host is needed"),
    };
    let realtime = a.realtime || a.count.is_none();
    let token = shutdown_on_signals();
    let wall0 = pitchside::util::time::now_micros();
    let mut n = 0u64;
    while a.count.is_none_or(|c| n < c) && !token.is_cancelled() {
        if realtime {
            let due = wall0 + (sim.next_time() - start);
            let now = pitchside::util::time::now_micros();
            if due > now {
                tokio::time::sleep(std::time::Duration::from_micros((due - now) as u64)).await;
            }
        }
        let (line, _) = sim.next_line();
        out.send(&line).await?;
        n += 1;
    }
    let acked = out.finish().await?;
    tracing::info!(events = n, acked, "Simulation sent.");
    Ok(())
}
