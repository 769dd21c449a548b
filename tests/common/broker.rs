//! A private mosquitto for one test: a generated config with a plain and a
//! TLS listener on free 127.0.0.1 ports, a password file, persistence in the
//! test's temp folder, and certificates made with the `openssl` CLI. Killed
//! on drop.

use super::services::{free_port, have, wait_until, which, Gateway};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The user the broker accepts.
pub const USER: &str = "gateway";
/// Its password.
pub const PASSWORD: &str = "s3cret-pw";
/// The environment variable the test configs read the password from, and
/// its value: pass it to [`super::services::Gateway::start`].
pub const PASSWORD_ENV: (&str, &str) = ("PITCHSIDE_TEST_MQTT_PASSWORD", PASSWORD);

/// A `[[sources.mqtt]]` section: `broker` lines (see [`Broker::login`]) as
/// its broker table and one subscription made of the `subscription` lines.
pub fn mqtt_source(broker: &str, subscription: &str) -> String {
    format!("[[sources.mqtt]]\n[sources.mqtt.broker]\n{broker}[[sources.mqtt.subscriptions]]\n{subscription}")
}

/// Programs the broker tests need.
pub const PROGRAMS: [&str; 5] = [
    "mosquitto",
    "mosquitto_pub",
    "mosquitto_sub",
    "mosquitto_passwd",
    "openssl",
];

/// A temp folder, a private broker with its files in it, and a free port
/// for the gateway's metrics.
pub struct MqttRig {
    /// The folder (store, spool, config, the broker's files).
    pub dir: tempfile::TempDir,
    /// The broker.
    pub broker: Broker,
    /// The gateway's metrics port.
    pub metrics: u16,
}

impl MqttRig {
    /// `None` (after a loud notice) where mosquitto or openssl is missing.
    pub fn new() -> Option<MqttRig> {
        if !have(&PROGRAMS) {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let broker = Broker::start(dir.path());
        Some(MqttRig {
            dir,
            broker,
            metrics: free_port(),
        })
    }

    /// Starts a gateway on `cfg` with the broker password in its environment.
    pub fn start(&self, cfg: &Path) -> Gateway {
        Gateway::start(cfg, self.metrics, &[PASSWORD_ENV])
    }

    /// The gateway's store folder.
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }
}

/// A running mosquitto.
pub struct Broker {
    child: Option<Child>,
    /// Plain MQTT port.
    pub port: u16,
    /// TLS port.
    pub tls_port: u16,
    /// The CA that signed the broker's certificate.
    pub ca: PathBuf,
    /// A CA that did not.
    pub wrong_ca: PathBuf,
    conf: PathBuf,
    dir: PathBuf,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn make_ca(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    self_signed(dir, name, name, &[])
}

/// A self-signed EC certificate for `/CN={cn}` and its key, made with the
/// `openssl` CLI as an operator would, as `{dir}/{name}.crt` and
/// `{dir}/{name}.key`; `extra` adds arguments (`-addext …`).
pub fn self_signed(dir: &Path, name: &str, cn: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let (crt, key) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    run(Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec"])
        .args(["-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"])
        .args(["-days", "2", "-subj"])
        .arg(format!("/CN={cn}"))
        .args(extra)
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&crt));
    (crt, key)
}

impl Broker {
    /// Starts a broker with its files under `dir`.
    pub fn start(dir: &Path) -> Broker {
        let dir = dir.join("broker");
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let (ca, ca_key) = make_ca(&dir, "test-ca");
        let (wrong_ca, _) = make_ca(&dir, "other-ca");
        let (key, csr, crt, ext) = (
            dir.join("server.key"),
            dir.join("server.csr"),
            dir.join("server.crt"),
            dir.join("san.ext"),
        );
        run(Command::new("openssl")
            .args([
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
            ])
            .arg(&key)
            .arg("-out")
            .arg(&csr));
        std::fs::write(&ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
        run(Command::new("openssl")
            .args(["x509", "-req", "-days", "2", "-in"])
            .arg(&csr)
            .arg("-CA")
            .arg(&ca)
            .arg("-CAkey")
            .arg(&ca_key)
            .arg("-CAcreateserial")
            .arg("-extfile")
            .arg(&ext)
            .arg("-out")
            .arg(&crt));
        let passwd = dir.join("passwd");
        std::fs::write(&passwd, "").unwrap();
        run(Command::new(which("mosquitto_passwd").unwrap())
            .arg("-b")
            .arg(&passwd)
            .args([USER, PASSWORD]));
        let (port, tls_port) = (free_port(), free_port());
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "user root\nper_listener_settings false\nallow_anonymous false\npassword_file {passwd}\n\
                 persistence true\npersistence_location {data}/\nautosave_interval 1\n\
                 max_queued_messages 0\n\
                 log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n\
                 listener {port} 127.0.0.1\n\
                 listener {tls_port} 127.0.0.1\ncafile {ca}\ncertfile {crt}\nkeyfile {key}\n",
                passwd = passwd.display(),
                data = dir.join("data").display(),
                ca = ca.display(),
                crt = crt.display(),
                key = key.display(),
            ),
        )
        .unwrap();
        let mut b = Broker {
            child: None,
            port,
            tls_port,
            ca,
            wrong_ca,
            conf,
            dir,
        };
        b.restart();
        b
    }

    /// Starts (again) on the same ports with the same persistence.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "broker already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("mosquitto.log"))
            .unwrap();
        let child = Command::new(which("mosquitto").unwrap())
            .arg("-c")
            .arg(&self.conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let port = self.port;
        let up = wait_until(Duration::from_secs(10), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "mosquitto did not start: {}", self.log());
    }

    /// Stops the broker with SIGTERM (it saves its persistence file) and waits.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
    }

    /// The broker's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("mosquitto.log")).unwrap_or_default()
    }

    /// Broker-table lines logging in as [`USER`] on `port` (plain or TLS),
    /// the password from [`PASSWORD_ENV`].
    pub fn login(&self, port: u16) -> String {
        format!(
            "host = \"127.0.0.1\"\nport = {port}\nusername = \"{USER}\"\npassword_env = \"{}\"\n",
            PASSWORD_ENV.0
        )
    }

    /// `mosquitto_pub`/`mosquitto_sub` with the options that reach this
    /// broker as [`USER`] at QoS 1.
    fn client<'a>(&self, program: &'a mut Command) -> &'a mut Command {
        program.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-u",
            USER,
            "-P",
            PASSWORD,
            "-q",
            "1",
        ])
    }

    /// Publishes each line as one QoS 1 message to `topic` with `mosquitto_pub`.
    pub fn publish(&self, topic: &str, lines: &[String]) {
        let mut child = self
            .client(&mut Command::new("mosquitto_pub"))
            .arg("-i")
            .arg(format!("test-pub-{}", std::process::id()))
            .args(["-t", topic, "-l"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            for l in lines {
                writeln!(stdin, "{l}").unwrap();
            }
        }
        let status = child.wait().unwrap();
        assert!(status.success(), "mosquitto_pub failed");
    }

    /// Publishes the file at `path` as one QoS 1 message to `topic`.
    pub fn publish_file(&self, topic: &str, path: &Path) {
        let status = self
            .client(&mut Command::new("mosquitto_pub"))
            .arg("-i")
            .arg(format!("test-pub-file-{}", std::process::id()))
            .args(["-t", topic, "-f"])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success(), "mosquitto_pub -f failed");
    }

    /// Subscribes with `mosquitto_sub -v` to `filter`; returns once subscribed.
    pub fn subscribe(&self, filter: &str) -> Subscriber {
        // stdbuf: mosquitto_sub's stdout is block-buffered on a pipe.
        let mut child = self
            .client(Command::new("stdbuf").args(["-oL", "mosquitto_sub"]))
            .args(["-v", "-d", "-t", filter])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = super::services::Lines::capture(child.stdout.take().unwrap());
        lines.wait_for("SUBACK", 1, Duration::from_secs(10));
        Subscriber { child, lines }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A running `mosquitto_sub`.
pub struct Subscriber {
    child: Child,
    /// Its output (`topic payload` lines, plus `Client …` debug lines).
    pub lines: super::services::Lines,
}

impl Subscriber {
    /// Messages received so far as (topic, payload).
    pub fn messages(&self) -> Vec<(String, String)> {
        self.lines
            .all()
            .into_iter()
            .filter_map(|l| {
                l.split_once(' ')
                    .map(|(t, p)| (t.to_string(), p.to_string()))
            })
            // -d adds "Client … sending …" and "Subscribed (mid: 1)" lines.
            .filter(|(t, p)| t != "Client" && t != "Subscribed" && p.starts_with('{'))
            .collect()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
