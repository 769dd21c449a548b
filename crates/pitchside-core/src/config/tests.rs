use super::*;

const MINIMAL: &str = r#"
[venue]
id = "wankhede"
gateway_id = "gw-north"
[output]
store = "file:///tmp/outbox"
spool_dir = "/tmp/spool"
"#;

/// The checked config of a file that must be valid.
fn valid(text: &str) -> Config {
    parse(text, "test").unwrap().validate().unwrap()
}

/// Every problem `validate` finds in a file that parses.
fn problems(text: &str) -> String {
    parse(text, "test")
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string()
}

#[test]
fn every_file_in_config_dir_loads_and_validates() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("config");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) == Some("toml") {
            load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen += 1;
        }
    }
    assert!(seen >= 2, "expected demo.toml and example-venue.toml");
}

#[test]
fn minimal_config_gets_spec_defaults() {
    let c = valid(MINIMAL);
    assert_eq!(c.detector.window, 100);
    assert_eq!(c.detector.threshold, 3.5);
    assert_eq!(c.detector.min_baseline, 10);
    assert_eq!(c.detector.idle_timeout, 30 * 60 * 1_000_000);
    assert_eq!(c.detector.max_keys, 10_000);
    assert_eq!(c.windows.size, 60_000_000);
    assert_eq!(c.windows.watermark_delay, 30_000_000);
    assert_eq!(c.fatigue.baseline_windows, 3);
    assert_eq!(c.fatigue.k, 1.5);
    assert_eq!(c.limits.max_event_bytes, 4096);
    assert_eq!(c.limits.max_future, 300_000_000);
    assert_eq!(c.output.flush_interval, 60_000_000);
    assert_eq!(c.metrics.progress_interval, 10_000_000);
    assert!(c.output.raw && !c.output.snappy);
    assert_eq!(c.metrics.listen.as_deref(), Some("127.0.0.1:9898"));
}

#[test]
fn every_invalid_value_is_reported_with_its_key() {
    let text = r#"
[venue]
id = "Wankhede Stadium"
gateway_id = ""
[detector]
window = 1
idle_timeout = "30 minutes"
[windows]
size = "1x"
[output]
store = "ftp://x"
spool_dir = "/tmp/spool"
compression = "lz4"
"#;
    let err = parse(text, "test").unwrap().validate().unwrap_err();
    let msg = err.to_string();
    for key in [
        "venue.id",
        "venue.gateway_id",
        "detector.window",
        "detector.idle_timeout",
        "windows.size",
        "output.store",
        "output.compression",
    ] {
        assert!(msg.contains(key), "missing {key} in:\n{msg}");
    }
}

#[test]
fn unknown_keys_are_refused_with_their_name() {
    let text = format!("{MINIMAL}\n[detector]\nwindw = 5\n");
    let err = parse(&text, "test").unwrap_err().to_string();
    assert!(err.contains("windw"), "{err}");
}

#[test]
fn effective_config_prints_and_parses_back() {
    let c = valid(MINIMAL);
    let again = parse(&c.to_toml(), "printed").unwrap().validate().unwrap();
    assert_eq!(again.detector.window, c.detector.window);
    assert_eq!(again.output.store, c.output.store);
}

#[test]
fn embedded_demo_runs_the_simulator_into_a_local_folder() {
    let c = parse(DEMO, "demo").unwrap().validate().unwrap();
    assert!(c.output.store.starts_with("file://"));
    assert!(c.file.sources.simulator.is_some());
}

#[test]
fn store_urls_must_name_a_folder_or_bucket() {
    for (store, ok) in [
        ("file:///var/lib/x", true),
        ("file://./outbox", true),
        ("file://host/tmp/x", false),
        ("file://", false),
        ("s3://", false),
        ("s3://bucket/prefix", true),
        ("az://container", true),
    ] {
        let text = MINIMAL.replace("file:///tmp/outbox", store);
        let r = parse(&text, "test").unwrap().validate();
        assert_eq!(
            r.is_ok(),
            ok,
            "{store}: {:?}",
            r.err().map(|e| e.to_string())
        );
    }
}

/// A cloud endpoint the HTTP client cannot use is refused at the check,
/// not found at the first upload (no scheme: the client panicked at
/// start-up; plain HTTP without `allow_http`: every upload failed).
#[test]
fn cloud_endpoints_must_be_urls_the_client_can_use() {
    for (section, store, endpoint, allow_http, wrong) in [
        (
            "s3",
            "s3://b/p",
            "localhost:9000",
            false,
            Some("must be a URL with http:// or https://"),
        ),
        ("s3", "s3://b/p", "minio", false, Some("must be a URL")),
        (
            "s3",
            "s3://b/p",
            "http://localhost:9000",
            false,
            Some("allow_http = true"),
        ),
        ("s3", "s3://b/p", "http://localhost:9000", true, None),
        ("s3", "s3://b/p", "https://minio.local:9000", false, None),
        ("s3", "s3://b/p", "", false, None),
        (
            "azure",
            "az://c/p",
            "127.0.0.1:10000/devstoreaccount1",
            true,
            Some("must be a URL"),
        ),
        (
            "azure",
            "az://c/p",
            "http://127.0.0.1:10000/devstoreaccount1",
            false,
            Some("allow_http"),
        ),
        (
            "azure",
            "az://c/p",
            "http://127.0.0.1:10000/devstoreaccount1",
            true,
            None,
        ),
    ] {
        let text = format!(
            "{}[output.{section}]\nendpoint = \"{endpoint}\"\nallow_http = {allow_http}\n",
            MINIMAL.replace("file:///tmp/outbox", store)
        );
        let r = parse(&text, "test").unwrap().validate();
        match wrong {
            Some(why) => {
                let e = r.err().map(|e| e.to_string()).unwrap_or_default();
                let key = format!("output.{section}.endpoint");
                assert!(e.contains(&key) && e.contains(why), "{endpoint}: {e}");
            }
            None => assert!(
                r.is_ok(),
                "{endpoint}: {:?}",
                r.err().map(|e| e.to_string())
            ),
        }
    }
}

#[test]
fn detector_sizes_that_cannot_be_allocated_are_refused() {
    let text = format!("{MINIMAL}\n[detector]\nwindow = 100000\nmax_keys = 10000000\n");
    let err = problems(&text);
    assert!(err.contains("detector.max_keys x detector.window"), "{err}");
}

#[test]
fn sizes_take_numbers_or_unit_strings() {
    let text = format!(
        "{MINIMAL}\n[limits]\nmax_event_bytes = \"8KiB\"\n[metrics]\nlisten = \"localhost:9899\"\n"
    );
    let c = valid(&text);
    assert_eq!(c.limits.max_event_bytes, 8192);
    let text = format!("{MINIMAL}\n[limits]\nmax_event_bytes = \"8 parsecs\"\n");
    let err = problems(&text);
    assert!(err.contains("limits.max_event_bytes"), "{err}");
}

#[test]
fn generic_range_metric_names_follow_the_metric_rule() {
    let text = format!(
        "{MINIMAL}\n[[limits.range]]\nsensor = \"generic\"\nmetric = \"temp c\"\nmin = 0\n"
    );
    let err = problems(&text);
    assert!(err.contains("limits.range[0].metric"), "{err}");
}

/// Every problem `load` finds in `extra` appended to [`MINIMAL`], as one text.
fn load_problems(extra: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("venue.toml");
    std::fs::write(&path, format!("{MINIMAL}{extra}")).unwrap();
    load(&path).unwrap_err().to_string()
}

#[test]
fn a_typo_and_a_type_error_in_one_file_are_both_reported() {
    let err = load_problems("[detector]\nwindw = 5\n[windows]\nwatermark_delay = 30\n");
    assert!(
        err.contains("detector.windw: unknown key in [detector]; did you mean window?"),
        "{err}"
    );
    assert!(err.contains("windows.watermark_delay:"), "{err}");
}

#[test]
fn a_number_for_a_duration_suggests_the_duration_string() {
    let err = load_problems("[windows]\nwatermark_delay = 30\n");
    assert!(
        err.contains("windows.watermark_delay: must be a duration string such as \"30s\""),
        "{err}"
    );
    assert!(
        err.contains("write \"30s\" if you meant 30 seconds"),
        "{err}"
    );
    assert!(!err.contains("expected a string"), "library words: {err}");
}

#[test]
fn a_number_for_a_size_suggests_a_size_string() {
    let err = load_problems("spool_max_bytes = 268435456\n");
    assert!(
        err.contains("output.spool_max_bytes: must be a size string such as \"256MiB\""),
        "{err}"
    );
    assert!(
        err.contains("write \"256MiB\" if you meant 268435456 bytes"),
        "{err}"
    );
}

#[test]
fn whole_numbers_are_asked_for_in_words() {
    let err = load_problems("[detector]\nwindow = -1\nmax_keys = \"100\"\nthreshold = \"high\"\n");
    assert!(
        err.contains("detector.window: must be a whole number ≥ 0, but it is the number -1"),
        "{err}"
    );
    assert!(err.contains("detector.max_keys: must be a whole number ≥ 0, but it is the text \"100\"; write 100 without quotes"), "{err}");
    assert!(
        err.contains("detector.threshold: must be a number"),
        "{err}"
    );
    assert!(
        !err.contains("u32") && !err.contains("expected"),
        "library words: {err}"
    );
}

#[test]
fn shape_problems_and_value_problems_are_reported_together() {
    let err = load_problems("compression = \"lz4\"\nraw = \"yes\"\n[detector]\nwindw = 5\n");
    for key in ["output.compression", "output.raw", "detector.windw"] {
        assert!(err.contains(key), "missing {key} in:\n{err}");
    }
}

#[test]
fn every_missing_required_key_is_listed() {
    let err = parse("[venue]\nid = \"v\"\n", "test")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("venue.gateway_id: required but missing"),
        "{err}"
    );
    assert!(
        err.contains("[output]: this section is required but missing"),
        "{err}"
    );
}

#[test]
fn a_key_in_the_wrong_section_is_sent_to_its_section() {
    let err = load_problems("[detector]\nspool_dir = \"/x\"\n");
    assert!(err.contains("spool_dir belongs in [output]"), "{err}");
}

#[test]
fn a_single_bracket_list_section_is_explained() {
    let err = load_problems("[sources.serial]\npath = \"/dev/ttyUSB0\"\n");
    assert!(
        err.contains("write [[sources.serial]] (double brackets)"),
        "{err}"
    );
}

#[test]
fn every_section_reports_its_problems_in_the_order_of_the_sections() {
    let text = r#"
[venue]
id = "V"
gateway_id = "g"
[detector]
window = 1
[windows]
max_open_groups = 0
[fatigue]
k = -1.0
[limits]
max_future = "soon"
[output]
store = "file:///tmp/outbox"
spool_dir = "/tmp/spool"
compression = "lz4"
[metrics]
listen = "nohost"
[pipeline]
input_queue = 0
[sources.simulator]
rate = 0.0
[alerts]
queue = 0
[log]
level = "loud"
"#;
    let msg = problems(text);
    let keys = [
        "venue.id",
        "detector.window",
        "windows.max_open_groups",
        "fatigue.k",
        "limits.max_future",
        "output.compression",
        "metrics.listen",
        "pipeline.input_queue",
        "sources.simulator.rate",
        "alerts.queue",
        "log.level",
    ];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| {
            msg.find(k)
                .unwrap_or_else(|| panic!("missing {k} in:\n{msg}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{msg}");
}
