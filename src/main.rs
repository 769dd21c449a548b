//! The `pitchside` command line: parses the arguments and hands each
//! command to its module in [`pitchside::commands`].

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use pitchside::commands::{self, terminal};
use std::process::ExitCode;

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
    Run(commands::run::cli::RunArgs),
    /// Process a file of input lines, write every table, exit.
    Replay(commands::replay::ReplayArgs),
    /// Generate sensor events (with injected anomalies and fatigue) as JSON lines.
    Simulate(commands::simulate::SimulateArgs),
    /// Print what a source's inputs decode to, one JSON line each, without
    /// the pipeline or the spool (live, or a sample file with --input).
    Tap(commands::tap::TapArgs),
    /// Validate a config and print the effective configuration.
    CheckConfig(commands::check_config::CheckConfigArgs),
    /// Print a systemd drop-in for pitchside.service sized to a board (MemoryMax,
    /// and PITCHSIDE_BOARD for `run`). The .deb's postinst writes it for the detected board.
    ServiceDropin(commands::service_dropin::ServiceDropinArgs),
    /// Show the running gateway's state (sources, rates, keys, watermarks, spool, uploads).
    /// Exit code: 0 healthy, 1 unhealthy (the reason is printed), 2 gateway not reachable.
    Status(commands::status::StatusArgs),
    /// Follow the venue console's live alerts, fatigue alerts, device events and
    /// acks, one line each (`--json`: their JSON); reconnects when the gateway restarts.
    Alerts(commands::alerts::AlertsArgs),
    /// Measure replay throughput, peak memory and detector state size.
    Bench(commands::bench::BenchArgs),
    /// Measure publish → alert latency and MQTT ingest rate through a running broker.
    BenchMqtt(commands::bench::mqtt::BenchMqttArgs),
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

fn main() -> ExitCode {
    abort_on_panic();
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            terminal::print_error(terminal::error_text(&e));
            if e.is::<commands::replay::NothingAccepted>() {
                return commands::replay::EXIT_NOTHING_ACCEPTED.into();
            }
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        match cli.command {
            Command::Run(args) => commands::run::cli::execute(args).await?,
            Command::Replay(args) => commands::replay::execute(args).await?,
            Command::Simulate(args) => commands::simulate::execute(args).await?,
            Command::Tap(args) => commands::tap::execute(args).await?,
            Command::CheckConfig(args) => commands::check_config::execute(args)?,
            Command::ServiceDropin(args) => commands::service_dropin::execute(args)?,
            Command::Status(args) => return commands::status::execute(args),
            Command::Alerts(args) => return commands::alerts::execute(args).await,
            Command::Bench(args) => commands::bench::execute(&args).await?,
            Command::BenchMqtt(args) => commands::bench::mqtt::execute(&args).await?,
        }
        Ok(ExitCode::SUCCESS)
    })
}
