//! `[venue]`: who this gateway is.

use super::error::Problems;

crate::config::section! {
    /// `[venue]`.
    #[serde(deny_unknown_fields)]
    pub struct VenueSection {
        /// Venue id, `[a-z0-9-]{1,32}`.
        id: String,
        /// Gateway id, `[a-z0-9-]{1,32}`.
        gateway_id: String,
    }
}

/// `[venue]`, checked.
#[derive(Debug, Clone)]
pub struct VenueConfig {
    /// Venue id.
    pub id: String,
    /// Gateway id.
    pub gateway_id: String,
}

fn valid_id(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

impl VenueSection {
    /// Checks both ids.
    pub fn validate(&self) -> Result<VenueConfig, Vec<String>> {
        let mut p = Problems::default();
        for (key, id) in [
            ("venue.id", &self.id),
            ("venue.gateway_id", &self.gateway_id),
        ] {
            p.check(valid_id(id), || {
                format!("{key}: {id:?} must be 1-32 characters of a-z, 0-9 and '-'")
            });
        }
        p.finish(VenueConfig {
            id: self.id.clone(),
            gateway_id: self.gateway_id.clone(),
        })
    }
}
