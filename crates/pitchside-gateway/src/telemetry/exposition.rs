//! The Prometheus text exposition format (version 0.0.4): writing the
//! families `/metrics` serves, and reading such text back (`pitchside
//! status` reads the gateway's own `/metrics` with it).

use std::collections::BTreeMap;
use std::fmt::{Display, Write};

/// A family's `# TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (until a restart).
    Counter,
    /// Goes up and down.
    Gauge,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// Exposition text, written one family after the other.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// An empty exposition with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> Exposition {
        Exposition {
            text: String::with_capacity(bytes),
        }
    }

    /// The `# HELP` and `# TYPE` lines of a family; its samples follow.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let kind = kind.as_str();
        // Writing to a String cannot fail.
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// One sample, `name{label="value",…} value`, label values escaped.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.text.push_str(name);
        for (i, (label, v)) in labels.iter().enumerate() {
            let open = if i == 0 { '{' } else { ',' };
            let _ = write!(self.text, "{open}{label}=\"{}\"", label_value(v));
        }
        if !labels.is_empty() {
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }

    /// A family of labelled samples: `(labels, value)` each.
    pub fn labelled<'a, L, V>(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        samples: impl IntoIterator<Item = (L, V)>,
    ) where
        L: AsRef<[(&'a str, &'a str)]>,
        V: Display,
    {
        self.family(name, kind, help);
        for (labels, value) in samples {
            self.sample(name, labels.as_ref(), value);
        }
    }

    /// A family of one counter without labels.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, Kind::Counter, help);
        self.sample(name, &[], value);
    }

    /// A family of one gauge without labels.
    pub fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.family(name, Kind::Gauge, help);
        self.sample(name, &[], value);
    }

    /// The text written so far.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn label_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Every sample of an exposition: `name{labels}` (as written) → value.
/// Comment lines and lines without a number are skipped.
pub fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_lines_with_labels_parse() {
        let m = parse_metrics("# HELP x y\nx_total 3\nw{sensor=\"pitch\"} 1.5e9\n");
        assert_eq!(m["x_total"], 3.0);
        assert_eq!(m["w{sensor=\"pitch\"}"], 1.5e9);
    }

    #[test]
    fn a_family_is_written_with_help_type_and_escaped_labels() {
        let mut o = Exposition::default();
        o.family("x_total", Kind::Counter, "Xs.");
        o.sample("x_total", &[("a", "p"), ("b", "q\"\\\n")], 2);
        o.gauge("g", "A gauge.", 0.5);
        assert_eq!(
            o.into_text(),
            "# HELP x_total Xs.\n# TYPE x_total counter\nx_total{a=\"p\",b=\"q\\\"\\\\\\n\"} 2\n\
             # HELP g A gauge.\n# TYPE g gauge\ng 0.5\n"
        );
    }
}
