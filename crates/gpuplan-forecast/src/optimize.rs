//! Nelder–Mead minimisation (Nelder & Mead 1965, "A simplex method for function
//! minimization"; the adaptive coefficients of Gao & Han 2012 are not needed at the few
//! dimensions the forecast models fit). Parameters are kept inside the unit box by the
//! caller's objective, which returns infinity outside it.

/// Coefficients of the standard method: reflection, expansion, contraction, shrink.
const REFLECT: f64 = 1.0;
const EXPAND: f64 = 2.0;
const CONTRACT: f64 = 0.5;
const SHRINK: f64 = 0.5;

/// The point minimising `f` from `start`, each coordinate first stepped by `step`, stopping
/// after `iterations` or when the simplex's values differ by less than `tolerance`.
pub fn minimize(f: impl Fn(&[f64]) -> f64, start: &[f64], step: f64, iterations: usize, tolerance: f64) -> Vec<f64> {
    let n = start.len();
    if n == 0 {
        return Vec::new();
    }
    let mut simplex: Vec<(Vec<f64>, f64)> = (0..=n)
        .map(|i| {
            let mut point = start.to_vec();
            if i > 0 {
                point[i - 1] += step;
            }
            let value = f(&point);
            (point, value)
        })
        .collect();
    for _ in 0..iterations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= tolerance * (best.abs() + tolerance) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|(p, _)| p[j]).sum::<f64>() / n as f64)
            .collect();
        let toward = |coefficient: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[n].0)
                .map(|(c, w)| c + coefficient * (c - w))
                .collect()
        };
        let reflected = toward(REFLECT);
        let reflected_value = f(&reflected);
        if reflected_value < simplex[0].1 {
            let expanded = toward(EXPAND);
            let expanded_value = f(&expanded);
            simplex[n] = if expanded_value < reflected_value {
                (expanded, expanded_value)
            } else {
                (reflected, reflected_value)
            };
        } else if reflected_value < simplex[n - 1].1 {
            simplex[n] = (reflected, reflected_value);
        } else {
            let contracted = toward(-CONTRACT);
            let contracted_value = f(&contracted);
            if contracted_value < simplex[n].1 {
                simplex[n] = (contracted, contracted_value);
            } else {
                let best_point = simplex[0].0.clone();
                for vertex in simplex.iter_mut().skip(1) {
                    let point: Vec<f64> = best_point
                        .iter()
                        .zip(&vertex.0)
                        .map(|(b, v)| b + SHRINK * (v - b))
                        .collect();
                    let value = f(&point);
                    *vertex = (point, value);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_bowl_and_of_rosenbrock() {
        let bowl = minimize(
            |x| (x[0] - 0.3).powi(2) + (x[1] + 0.7).powi(2),
            &[0.0, 0.0],
            0.5,
            500,
            1e-12,
        );
        assert!((bowl[0] - 0.3).abs() < 1e-4 && (bowl[1] + 0.7).abs() < 1e-4, "{bowl:?}");
        let rosenbrock = minimize(
            |x| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2),
            &[-1.2, 1.0],
            0.5,
            5000,
            1e-14,
        );
        assert!((rosenbrock[0] - 1.0).abs() < 1e-3, "{rosenbrock:?}");
    }
}
