//! Window statistics with exact numerics.
//!
//! A key's sums are kept relative to a shift `k` (a recent mean): `s1 = Σ(v−k)`,
//! `s2 = Σ(v−k)²`. Shifting removes the catastrophic cancellation of the
//! textbook `Σx²/n − mean²` at large offsets (1e9 + noise of 1e-3). Adding and
//! removing values one at a time accumulates rounding error proportional to
//! the magnitude of the terms involved; `mag` tracks that magnitude, and when
//! it could cost more than ~1e-9 relative on the variance the sums are
//! recomputed from the stored values with a two-pass algorithm. In steady
//! state that is rare, so a reading costs O(1); the result always agrees with
//! an exact computation far inside the 1e-7 the spec requires.

/// Relative error in `s2` that would be too much: eps · mag / m2 must stay below 1e-10.
const TRUST_RATIO: f64 = 1e-10 / (4.0 * f64::EPSILON);

/// Mean, population standard deviation and count of a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    /// Mean of the values.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Number of values.
    pub count: usize,
}

/// Shifted running sums over a window of values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ShiftedSums {
    /// Shift.
    pub k: f64,
    /// Σ(v−k).
    pub s1: f64,
    /// Σ(v−k)².
    pub s2: f64,
    /// Σ of the squared terms added or removed since the last exact recompute.
    pub mag: f64,
}

impl ShiftedSums {
    /// Adds a value.
    #[inline]
    pub fn add(&mut self, v: f64) {
        let d = v - self.k;
        self.s1 += d;
        self.s2 += d * d;
        self.mag += d * d;
    }

    /// Removes a value that was added before.
    #[inline]
    pub fn remove(&mut self, v: f64) {
        let d = v - self.k;
        self.s1 -= d;
        self.s2 -= d * d;
        self.mag += d * d;
    }

    /// Recomputes exactly from the values now in the window.
    pub fn recompute(&mut self, values: impl Iterator<Item = f64> + Clone, n: usize) {
        if n == 0 {
            *self = ShiftedSums::default();
            return;
        }
        // First pass: a provisional mean to shift by.
        let naive = values.clone().sum::<f64>() / n as f64;
        let k = if naive.is_finite() {
            naive
        } else {
            // Sums of huge values overflow; shift by any member instead.
            values.clone().next().unwrap_or(0.0)
        };
        // Second pass on shifted values, with the correction term of the
        // corrected two-pass algorithm (Chan, Golub, LeVeque).
        let (mut s1, mut s2) = (0.0, 0.0);
        for v in values {
            let d = v - k;
            s1 += d;
            s2 += d * d;
        }
        *self = ShiftedSums {
            k,
            s1,
            s2,
            mag: 0.0,
        };
    }

    /// The window's statistics, if the running sums are still precise enough.
    #[inline]
    pub fn baseline(&self, n: usize) -> Option<Baseline> {
        let nf = n as f64;
        let mean_d = self.s1 / nf;
        let m2 = self.s2 - self.s1 * mean_d;
        if m2.is_nan() || m2 < 0.0 || !m2.is_finite() || self.mag > m2 * TRUST_RATIO {
            return None;
        }
        Some(Baseline {
            mean: self.k + mean_d,
            std: (m2 / nf).sqrt(),
            count: n,
        })
    }

    /// z-score of `x` against this window's baseline (computed in shifted
    /// form so that large offsets lose no precision).
    #[inline]
    pub fn z_score(&self, x: f64, n: usize, std: f64) -> f64 {
        ((x - self.k) - self.s1 / n as f64) / std
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recompute_then_baseline_matches_two_pass() {
        let v = [1e9 + 0.001, 1e9 - 0.002, 1e9 + 0.0005, 1e9];
        let mut s = ShiftedSums::default();
        s.recompute(v.iter().copied(), v.len());
        let b = s.baseline(v.len()).unwrap();
        // Values minus 1e9 are exact (Sterbenz), so this is an exact reference.
        let mean_d = v.iter().map(|x| x - 1e9).sum::<f64>() / 4.0;
        let var = v.iter().map(|x| ((x - 1e9) - mean_d).powi(2)).sum::<f64>() / 4.0;
        assert!((b.std - var.sqrt()).abs() / var.sqrt() < 1e-9);
        assert!((b.mean - (1e9 + mean_d)).abs() / 1e9 < 1e-12);
    }

    #[test]
    fn constant_window_has_zero_std_and_stays_trusted() {
        let v = [72.0; 20];
        let mut s = ShiftedSums::default();
        s.recompute(v.iter().copied(), v.len());
        assert_eq!(s.baseline(20).unwrap().std, 0.0);
        s.add(72.0);
        s.remove(72.0);
        assert_eq!(s.baseline(20).unwrap().std, 0.0);
    }

    #[test]
    fn big_jumps_make_running_sums_untrusted_until_recomputed() {
        let mut s = ShiftedSums::default();
        let v = [0.0, 1.0, 2.0];
        s.recompute(v.iter().copied(), 3);
        s.add(1e12);
        s.remove(1e12);
        assert!(s.baseline(3).is_none());
    }
}
