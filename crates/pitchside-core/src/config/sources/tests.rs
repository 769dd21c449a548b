use crate::util::bounded::WhenFull;

const HEAD: &str = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n";

/// As `run` and `check-config` read a file: every problem of both steps.
fn check(extra: &str) -> Result<crate::config::Config, String> {
    crate::config::parse_validated(&format!("{HEAD}{extra}"), "test").map_err(|e| e.to_string())
}

#[test]
fn serial_mqtt_and_alert_sections_parse_with_their_defaults() {
    let c = check(
        r#"
[[sources.serial]]
path = "/dev/ttyUSB0"
sensor = "wearable"
[[sources.mqtt]]
broker = { host = "10.0.0.5", username = "gw", password_env = "MQTT_PW" }
subscriptions = [{ topic = "venue/wearable/#", sensor = "wearable" }, { topic = "venue/+/raw" }]
[alerts]
topic_prefix = "venue/alerts"
[alerts.mqtt]
host = "10.0.0.5"
tls = { ca_file = "/etc/pitchside/ca.pem" }
"#,
    )
    .unwrap();
    let s = &c.file.sources.serial[0];
    assert_eq!((s.baud, s.data_bits, s.stop_bits), (115_200, 8, 1));
    assert_eq!(s.parity, crate::config::sources::serial::Parity::None);
    assert_eq!(c.file.sources.mqtt[0].max_held, 1024);
    assert_eq!(s.max_held, 1024);
    assert_eq!(c.file.sources.mqtt[0].broker.keep_alive, "30s");
    assert_eq!(c.file.alerts.when_full, "drop-oldest");
    assert_eq!(c.file.alerts.queue, 10_000);
    assert_eq!(c.alerts.when_full, WhenFull::DropOldest);
    assert_eq!((c.alerts.max_inflight, c.alerts.input_queue), (64, 4096));
    // Printed back, it still parses (check-config output).
    let again = crate::config::parse(&c.to_toml(), "printed").unwrap();
    assert_eq!(again.validate().unwrap().file.sources.mqtt.len(), 1);
}

#[test]
fn bad_source_and_alert_values_are_reported_with_their_keys() {
    let err = check(
        r#"
[[sources.serial]]
path = "/dev/ttyUSB0"
baud = 0
parity = "mark"
sensor = "boat"
max_held = 0
[[sources.mqtt]]
broker = { host = "", password_env = "X", password_file = "/x", keep_alive = "0s", tls = { ca_file = "/ca", client_cert = "/c" } }
subscriptions = [{ topic = "a/#/b" }]
max_held = 0
[alerts]
topic_prefix = "alerts/#"
when_full = "block"
max_inflight = 0
input_queue = 0
"#,
    )
    .unwrap_err();
    for key in [
        "sources.serial[0].baud",
        "sources.serial[0].parity",
        "sources.serial[0].sensor",
        "sources.serial[0].max_held",
        "sources.mqtt[0].broker.host",
        "sources.mqtt[0].broker.username",
        "sources.mqtt[0].broker: set password_env or password_file",
        "sources.mqtt[0].broker.keep_alive",
        "sources.mqtt[0].broker.tls: client_cert and client_key",
        "sources.mqtt[0].subscriptions[0].topic",
        "sources.mqtt[0].max_held",
        "alerts.topic_prefix",
        "alerts.when_full: \"block\" must be \"drop-oldest\" or \"drop-newest\"",
        "alerts.max_inflight",
        "alerts.input_queue",
    ] {
        assert!(err.contains(key), "missing {key} in:\n{err}");
    }
}

#[test]
fn a_password_in_the_toml_is_refused() {
    let err = check("[[sources.mqtt]]\nbroker = { host = \"h\", username = \"u\", password = \"p\" }\nsubscriptions = [{ topic = \"t\" }]\n").unwrap_err();
    assert!(err.contains("password"), "{err}");
}

#[test]
fn unknown_keys_of_serial_ports_and_subscriptions_are_found_beside_the_flattened_input_keys() {
    let e = check(
        "[[sources.serial]]\npath = \"/dev/x\"\nformt = \"csv\"\n\
         [[sources.mqtt]]\nbroker = { host = \"h\" }\nsubscriptions = [{ topic = \"a/#\", sensr = \"crowd\" }]\n",
    )
    .unwrap_err();
    assert!(
        e.contains(
            "sources.serial[0].formt: unknown key in [sources.serial[0]]; did you mean format?"
        ),
        "{e}"
    );
    assert!(
        e.contains("sources.mqtt[0].subscriptions[0].sensr: unknown key"),
        "{e}"
    );
}

/// A broker's `host` is a name or an address: a URL or a port in it would
/// pass to the connector and fail there, retried forever.
#[test]
fn a_broker_host_written_as_a_url_or_with_a_port_is_refused() {
    for (host, wrong) in [
        ("mqtt://localhost:1883", Some("is a URL")),
        ("tcp://10.0.0.5", Some("is a URL")),
        ("localhost:1883", Some("has a ':'")),
        ("broker.local/mqtt", Some("without spaces or '/'")),
        ("broker local", Some("without spaces or '/'")),
        ("localhost", None),
        ("10.0.0.5", None),
        ("::1", None),
        ("fd00::5", None),
        ("broker.venue.local", None),
    ] {
        let r = check(&format!(
            "[[sources.mqtt]]\nbroker = {{ host = \"{host}\" }}\nsubscriptions = [{{ topic = \"t\" }}]\n"
        ));
        match wrong {
            Some(why) => {
                let e = r.err().unwrap_or_default();
                assert!(
                    e.contains("sources.mqtt[0].broker.host") && e.contains(why),
                    "{host}: {e}"
                );
            }
            None => assert!(r.is_ok(), "{host}: {:?}", r.err()),
        }
    }
}
