//! The roster file of `[load]`: one player a line, as a club's spreadsheet
//! exports it (CSV, RFC 4180 quoting, a header line naming the columns in
//! any order). Every problem names the file, the line and the column.

use crate::util::formats::csv;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// A roster larger than this is refused: a roster is a few KiB, and a wrong
/// path (a log, a device) must not be read into memory whole.
pub const MAX_ROSTER_BYTES: u64 = 4 << 20;

/// The columns a roster may have; `player_id` is required.
const COLUMNS: [&str; 8] = [
    "player_id",
    "name",
    "position",
    "hr_max",
    "hr_rest",
    "hsr_speed",
    "sprint_speed",
    "target_trimp",
];

/// One roster line; an empty cell is `None` (the default applies).
#[derive(Debug, Clone, PartialEq)]
pub struct RosterEntry {
    /// `player_id` as the wearable events carry it.
    pub player_id: i64,
    /// Name.
    pub name: Option<Arc<str>>,
    /// Position (selects `[[load.positions]]`).
    pub position: Option<Arc<str>>,
    /// HRmax, bpm.
    pub hr_max: Option<f64>,
    /// Resting heart rate, bpm.
    pub hr_rest: Option<f64>,
    /// High-speed running threshold, m/s.
    pub hsr_speed: Option<f64>,
    /// Sprint threshold, m/s.
    pub sprint_speed: Option<f64>,
    /// Edwards TRIMP target for a match.
    pub target_trimp: Option<f64>,
}

/// The players of a roster by `player_id`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Roster {
    players: HashMap<i64, RosterEntry>,
}

impl Roster {
    /// Reads and checks the roster at `path`; every problem, each starting
    /// with `load.roster`.
    pub fn read(path: &Path) -> Result<Roster, Vec<String>> {
        let origin = path.display();
        let mut text = String::new();
        let read = std::fs::File::open(path).and_then(|f| {
            f.take(MAX_ROSTER_BYTES + 1)
                .read_to_string(&mut text)
                .map(|n| n as u64)
        });
        match read {
            Err(e) => Err(vec![format!(
                "load.roster: cannot read {origin}: {e} (a relative path is taken from the \
                 working directory, / under systemd: give an absolute one)"
            )]),
            Ok(n) if n > MAX_ROSTER_BYTES => Err(vec![format!(
                "load.roster: {origin} is larger than {} MiB: is it the roster (a CSV file)?",
                MAX_ROSTER_BYTES >> 20
            )]),
            Ok(_) => Roster::parse(&text, &origin.to_string()),
        }
    }

    /// Parses roster text; `origin` names it in problems.
    pub fn parse(text: &str, origin: &str) -> Result<Roster, Vec<String>> {
        let mut problems = Vec::new();
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let Some((n, header)) = lines.next() else {
            return Err(vec![format!(
                "load.roster: {origin} has no header line (player_id,name,position,hr_max,…)"
            )]);
        };
        let columns = header_columns(header.trim_start_matches('\u{feff}'), origin, n)?;
        let mut players = HashMap::new();
        let mut cells = Vec::new();
        for (n, line) in lines {
            let at = format!("load.roster: {origin} line {n}");
            if let Err(e) = csv::split(line, b',', &mut cells) {
                problems.push(format!("{at}: not CSV ({e})"));
                continue;
            }
            if cells.len() != columns.len() {
                problems.push(format!(
                    "{at}: {} cells, but the header names {} columns",
                    cells.len(),
                    columns.len()
                ));
                continue;
            }
            let row = Row {
                at: &at,
                columns: &columns,
                cells: &cells,
            };
            if let Some(e) = row.entry(&mut problems) {
                if players.insert(e.player_id, e).is_some() {
                    problems.push(format!("{at}: player_id is on the roster twice"));
                }
            }
        }
        if problems.is_empty() {
            Ok(Roster { players })
        } else {
            Err(problems)
        }
    }

    /// The line of `player_id`.
    pub fn get(&self, player_id: i64) -> Option<&RosterEntry> {
        self.players.get(&player_id)
    }

    /// Players on the roster.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// Whether the roster is empty.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// The entries, by player_id.
    pub fn entries(&self) -> Vec<&RosterEntry> {
        let mut v: Vec<_> = self.players.values().collect();
        v.sort_by_key(|e| e.player_id);
        v
    }
}

/// The header's column names, each known and once, `player_id` among them.
fn header_columns(header: &str, origin: &str, n: usize) -> Result<Vec<String>, Vec<String>> {
    let mut cells = Vec::new();
    let at = format!("load.roster: {origin} line {n} (the header)");
    csv::split(header, b',', &mut cells).map_err(|e| vec![format!("{at}: not CSV ({e})")])?;
    let columns: Vec<String> = cells.iter().map(|c| c.trim().to_string()).collect();
    let mut problems = Vec::new();
    for (i, c) in columns.iter().enumerate() {
        if !COLUMNS.contains(&c.as_str()) {
            problems.push(format!(
                "{at}: unknown column {c:?}; the columns are {}",
                COLUMNS.join(", ")
            ));
        } else if columns[..i].contains(c) {
            problems.push(format!("{at}: column {c:?} is named twice"));
        }
    }
    if !columns.iter().any(|c| c == "player_id") {
        problems.push(format!("{at}: a player_id column is required"));
    }
    if problems.is_empty() {
        Ok(columns)
    } else {
        Err(problems)
    }
}

/// One data line with its header.
struct Row<'a> {
    at: &'a str,
    columns: &'a [String],
    cells: &'a [std::borrow::Cow<'a, str>],
}

impl Row<'_> {
    fn cell(&self, name: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == name)?;
        Some(self.cells[i].trim()).filter(|c| !c.is_empty())
    }

    /// A number in `lo..=hi`, or a problem.
    fn number(&self, name: &str, lo: f64, hi: f64, problems: &mut Vec<String>) -> Option<f64> {
        let text = self.cell(name)?;
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Some(v),
            _ => {
                problems.push(format!(
                    "{}: {name} {text:?} must be a number from {lo} to {hi}",
                    self.at
                ));
                None
            }
        }
    }

    fn entry(&self, problems: &mut Vec<String>) -> Option<RosterEntry> {
        let before = problems.len();
        let player_id = match self.cell("player_id").map(str::parse::<i64>) {
            Some(Ok(id)) => Some(id),
            _ => {
                problems.push(format!("{}: player_id must be a whole number", self.at));
                None
            }
        };
        let text = |name| self.cell(name).map(Arc::<str>::from);
        let name = text("name");
        if name.as_deref().is_some_and(|n| n.chars().count() > 64) {
            problems.push(format!("{}: name is longer than 64 characters", self.at));
        }
        let e = RosterEntry {
            player_id: player_id.unwrap_or_default(),
            name,
            position: text("position"),
            hr_max: self.number("hr_max", 100.0, 250.0, problems),
            hr_rest: self.number("hr_rest", 20.0, 150.0, problems),
            hsr_speed: self.number("hsr_speed", 0.1, 15.0, problems),
            sprint_speed: self.number("sprint_speed", 0.1, 15.0, problems),
            target_trimp: self.number("target_trimp", 1.0, 10_000.0, problems),
        };
        (problems.len() == before).then_some(e)
    }
}
