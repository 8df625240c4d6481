//! Order statistics over repeated timings (no means: a shared box has
//! one-sided noise, so medians and minima are what is quoted).

/// Median, minimum and maximum of a non-empty sample.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Summary {
    pub fn of(xs: &[f64]) -> Summary {
        assert!(!xs.is_empty());
        let mut v = xs.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Summary {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(Summary::of(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        let s = Summary::of(&[5.0, 1.0]);
        assert_eq!((s.min, s.max), (1.0, 5.0));
    }
}
