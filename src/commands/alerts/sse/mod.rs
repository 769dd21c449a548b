//! A Server-Sent Events parser (the WHATWG `text/event-stream` rules) fed
//! with bytes as they arrive, however the stream is cut: lines end with LF,
//! CR or CRLF (a CR at the end of one chunk and an LF at the start of the
//! next are one line end); `data:` lines of one event are joined with `\n`;
//! `:` lines are comments; a blank line dispatches the event. Pure, no I/O.
//! Bounded: an event bigger than its cap is skipped and counted.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The last `id:` seen on the stream so far (as the spec's "last event ID").
    pub id: Option<String>,
    /// `event:`; `message` when the event named none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// The parser's state between chunks.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// The last byte seen was a CR: an LF next belongs to that line end.
    after_cr: bool,
    /// A byte-order mark may still come (nothing read yet).
    at_start: bool,
    event: String,
    data: String,
    /// `data` has had a line (an event with `data:` empty still dispatches).
    has_data: bool,
    last_id: Option<String>,
    /// `retry:` in milliseconds, when the server sent one.
    retry_ms: Option<u64>,
    /// Bytes one event may take (its lines together); past it the event is skipped.
    cap: usize,
    /// Bytes of the current event so far.
    size: usize,
    /// Events skipped for being over `cap`.
    skipped: u64,
}

impl SseParser {
    /// A parser skipping events over `cap` bytes.
    pub fn new(cap: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: String::new(),
            data: String::new(),
            has_data: false,
            last_id: None,
            retry_ms: None,
            cap,
            size: 0,
            skipped: 0,
        }
    }

    /// Feeds `bytes`; the events they complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(&mut out);
                }
                _ => {
                    self.size += 1;
                    if self.size <= self.cap {
                        self.line.push(b);
                    }
                }
            }
        }
        out
    }

    /// The server's `retry:` in ms, if it sent one.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Events skipped so far for being over the cap.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// A stream ended (the connection closed): a half-read event is
    /// dropped, as the spec says; the last id is kept.
    pub fn reset(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.at_start = true;
        self.clear_event();
    }

    fn clear_event(&mut self) {
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        self.size = 0;
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let mut raw = std::mem::take(&mut self.line);
        {
            let text = String::from_utf8_lossy(&raw);
            let bom = std::mem::take(&mut self.at_start) && text.starts_with('\u{feff}');
            let text = if bom {
                &text['\u{feff}'.len_utf8()..]
            } else {
                &text
            };
            if text.is_empty() {
                self.dispatch(out);
            } else if self.size <= self.cap {
                self.field(text);
            }
        }
        raw.clear();
        self.line = raw;
    }

    /// A blank line: the event so far goes out, unless it had no data or was too big.
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.size > self.cap {
            self.skipped += 1;
        } else if self.has_data {
            out.push(SseEvent {
                id: self.last_id.clone(),
                event: if self.event.is_empty() {
                    "message".into()
                } else {
                    self.event.clone()
                },
                data: self.data.clone(),
            });
        }
        self.clear_event();
    }

    /// One `field: value` line (a leading space of the value dropped).
    fn field(&mut self, line: &str) {
        if line.starts_with(':') {
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match name {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
