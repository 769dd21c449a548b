//! Object-storage servers for tests, started on 127.0.0.1 free ports and
//! stopped on drop: s3s-fs (S3, checks signatures), moto (S3, second
//! opinion) and Azurite (Azure Blob).

use super::services::{free_port, have, wait_until};
use super::VenueConfig;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Test credentials (not secrets: local emulators only).
pub const ACCESS_KEY: &str = "pitchside-test-key";
/// Test secret.
pub const SECRET_KEY: &str = "pitchside-test-secret-0123456789";
/// Azurite's well-known development account.
pub const AZ_ACCOUNT: &str = "devstoreaccount1";
/// Azurite's well-known development key.
pub const AZ_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Which emulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// s3s-fs.
    S3sFs,
    /// moto_server.
    Moto,
    /// azurite-blob.
    Azurite,
}

/// A running emulator.
pub struct Server {
    child: Option<Child>,
    /// Which one.
    pub kind: Kind,
    /// Its port.
    pub port: u16,
    /// Its data folder.
    pub dir: PathBuf,
    /// Bucket or container.
    pub bucket: String,
}

fn program(kind: Kind) -> &'static str {
    match kind {
        Kind::S3sFs => "s3s-fs",
        Kind::Moto => "moto_server",
        Kind::Azurite => "azurite-blob",
    }
}

fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

impl Server {
    /// Starts an emulator with bucket "pitchside"; `None` (after a loud
    /// notice) when it is not installed and services are not required.
    pub fn start(kind: Kind, dir: &Path) -> Option<Server> {
        if !have(&[program(kind)]) {
            return None;
        }
        let mut s = Server {
            child: None,
            kind,
            port: free_port(),
            dir: dir.to_path_buf(),
            bucket: "pitchside".into(),
        };
        std::fs::create_dir_all(dir).unwrap();
        s.spawn();
        s.create_bucket();
        Some(s)
    }

    fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut cmd = match self.kind {
            Kind::S3sFs => {
                let mut c = Command::new("s3s-fs");
                c.args([
                    "--host",
                    "127.0.0.1",
                    "--port",
                    &port,
                    "--access-key",
                    ACCESS_KEY,
                    "--secret-key",
                    SECRET_KEY,
                ])
                .arg(&self.dir);
                c
            }
            Kind::Moto => {
                let mut c = Command::new("moto_server");
                c.args(["-H", "127.0.0.1", "-p", &port]);
                c
            }
            Kind::Azurite => {
                let mut c = Command::new("azurite-blob");
                c.args([
                    "--blobHost",
                    "127.0.0.1",
                    "--blobPort",
                    &port,
                    "--skipApiVersionCheck",
                    "--silent",
                    "--location",
                ])
                .arg(&self.dir);
                c
            }
        };
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        assert!(
            wait_until(Duration::from_secs(30), || port_open(self.port)),
            "{} did not listen on {}",
            program(self.kind),
            self.port
        );
    }

    /// Stops the server (an outage); data on disk stays.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        wait_until(Duration::from_secs(10), || !port_open(self.port));
    }

    /// Starts it again on the same port with the same data.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    fn create_bucket(&self) {
        match self.kind {
            // s3s-fs: a bucket is a folder.
            Kind::S3sFs => std::fs::create_dir_all(self.dir.join(&self.bucket)).unwrap(),
            // moto does not check signatures.
            Kind::Moto => {
                let status = raw_request(
                    self.port,
                    &format!(
                        "PUT /{} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
                        self.bucket
                    ),
                );
                assert!(
                    status.starts_with("HTTP/1.1 200"),
                    "moto create bucket: {status}"
                );
            }
            Kind::Azurite => {
                let date = http_date();
                let version = "2021-08-06";
                let resource = format!(
                    "/{AZ_ACCOUNT}/{AZ_ACCOUNT}/{}\nrestype:container",
                    self.bucket
                );
                let to_sign = format!("PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n{resource}");
                use base64::Engine;
                let b64 = base64::engine::general_purpose::STANDARD;
                let key =
                    ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &b64.decode(AZ_KEY).unwrap());
                let sig = b64.encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());
                let req = format!(
                    "PUT /{AZ_ACCOUNT}/{}?restype=container HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-date: {date}\r\nx-ms-version: {version}\r\nAuthorization: SharedKey {AZ_ACCOUNT}:{sig}\r\nContent-Length: 0\r\n\r\n",
                    self.bucket
                );
                let status = raw_request(self.port, &req);
                assert!(
                    status.starts_with("HTTP/1.1 201"),
                    "azurite create container: {status}"
                );
            }
        }
    }

    /// Points `[output]` of `c` at this server under `prefix`, with the
    /// store's own section (`[output.s3]`, `[output.azure]`) filled in.
    pub fn configure(&self, c: VenueConfig, prefix: &str) -> VenueConfig {
        let endpoint = format!("http://127.0.0.1:{}", self.port);
        match self.kind {
            Kind::S3sFs | Kind::Moto => c
                .set_str("output", "store", format!("s3://{}/{prefix}", self.bucket))
                .set_str("output.s3", "endpoint", endpoint)
                .set_str("output.s3", "region", "us-east-1")
                .set("output.s3", "path_style", true)
                .set("output.s3", "allow_http", true),
            Kind::Azurite => c
                .set_str("output", "store", format!("az://{}/{prefix}", self.bucket))
                .set_str("output.azure", "account", AZ_ACCOUNT)
                .set_str(
                    "output.azure",
                    "endpoint",
                    format!("{endpoint}/{AZ_ACCOUNT}"),
                )
                .set("output.azure", "allow_http", true),
        }
    }

    /// Environment with the credentials for this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        match self.kind {
            Kind::S3sFs | Kind::Moto => vec![
                ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
                ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
            ],
            Kind::Azurite => vec![("AZURE_STORAGE_ACCOUNT_KEY", AZ_KEY.into())],
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn raw_request(port: u16, req: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Now as an RFC 1123 date, for `x-ms-date`.
fn http_date() -> String {
    let now = pitchside::util::time::now_micros();
    let days = now.div_euclid(86_400_000_000);
    let secs = now.rem_euclid(86_400_000_000) / 1_000_000;
    let (y, m, d) = pitchside::util::time::civil_from_days(days);
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let mon = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][m as usize - 1];
    format!(
        "{wd}, {d:02} {mon} {y} {:02}:{:02}:{:02} GMT",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// A TCP relay (socat) from a free port on 127.0.0.1 to a server's port: an
/// uplink that can be cut and restored while the server keeps its data
/// (Azurite does not keep its containers over a restart). Down until
/// [`Uplink::up`]; cut on drop.
pub struct Uplink {
    /// The port clients connect to.
    pub port: u16,
    to: u16,
    child: Option<Child>,
}

impl Uplink {
    /// A relay to `to`, not listening yet.
    pub fn new(to: u16) -> Uplink {
        Uplink {
            port: free_port(),
            to,
            child: None,
        }
    }

    /// Starts relaying.
    pub fn up(&mut self) {
        let child = Command::new("socat")
            .arg(format!(
                "TCP-LISTEN:{},bind=127.0.0.1,reuseaddr,fork",
                self.port
            ))
            .arg(format!("TCP:127.0.0.1:{}", self.to))
            .spawn()
            .unwrap();
        self.child = Some(child);
        assert!(wait_until(Duration::from_secs(10), || port_open(self.port)));
    }

    /// `c` with `server`'s endpoint replaced by this relay.
    pub fn carry(&self, c: VenueConfig, server: &Server) -> VenueConfig {
        let endpoint = format!("http://127.0.0.1:{}", self.port);
        match server.kind {
            Kind::Azurite => c.set_str(
                "output.azure",
                "endpoint",
                format!("{endpoint}/{AZ_ACCOUNT}"),
            ),
            Kind::S3sFs | Kind::Moto => c.set_str("output.s3", "endpoint", endpoint),
        }
    }
}

impl Drop for Uplink {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
