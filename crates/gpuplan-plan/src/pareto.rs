//! The cost–time Pareto front, with a tolerance: a configuration beats another only where it
//! wins by more than the estimate's own error.

/// Indices of the Pareto-optimal points that no other point beats by more than `tolerance`
/// (a share: 0.1 is 10 %), sorted by cost. A point is Pareto-optimal when no other is at most
/// as costly and at most as slow while strictly better in one (equal points are all kept); it
/// is beaten when another is no worse by more than the tolerance in either cost or time and
/// better by more than it in one. Beating never cycles (each step lowers the sum of the
/// logarithms) and a point that dominates a beaten-free point is itself beaten-free, so the
/// front is never empty when there are points. With no tolerance it is the plain front.
pub fn pareto_front(points: &[(f64, f64)], tolerance: f64) -> Vec<usize> {
    let slack = 1.0 + tolerance.max(0.0);
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
            .then(a.cmp(&b))
    });
    let costs: Vec<f64> = order.iter().map(|&i| points[i].0).collect();
    // Fastest time among the k cheapest points.
    let mut fastest = vec![f64::INFINITY; order.len() + 1];
    for (k, &i) in order.iter().enumerate() {
        fastest[k + 1] = fastest[k].min(points[i].1);
    }
    let beaten = |(cost, time): (f64, f64)| {
        // Cheaper by more than the tolerance and not slower by more than it …
        let cheaper = costs.partition_point(|&c| c * slack < cost);
        // … or faster by more than it and not dearer by more than it.
        let near = costs.partition_point(|&c| c <= cost * slack);
        fastest[cheaper] <= time * slack || fastest[near] * slack < time
    };
    let mut best_time = f64::INFINITY;
    let mut last: Option<(f64, f64)> = None;
    let mut front = Vec::new();
    for index in order {
        let point = points[index];
        if point.1 < best_time || last == Some(point) {
            best_time = best_time.min(point.1);
            last = Some(point);
            if !beaten(point) {
                front.push(index);
            }
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn beaten(points: &[(f64, f64)], i: usize, tolerance: f64) -> bool {
        let s = 1.0 + tolerance;
        let p = points[i];
        points
            .iter()
            .any(|q| q.0 <= p.0 * s && q.1 <= p.1 * s && (q.0 * s < p.0 || q.1 * s < p.1))
    }

    fn dominated(points: &[(f64, f64)], i: usize) -> bool {
        beaten(points, i, 0.0)
    }

    #[test]
    fn keeps_the_trade_offs() {
        let points = [(1.0, 10.0), (2.0, 5.0), (3.0, 6.0), (4.0, 1.0)];
        assert_eq!(pareto_front(&points, 0.0), vec![0, 1, 3]);
    }

    #[test]
    fn a_second_faster_at_nine_times_the_cost_is_no_trade_off() {
        // 8 GPUs at $88.82 in 3,600 s against 64 GPUs at $793.60 in 3,599 s.
        let points = [(88.82, 3600.0), (793.60, 3599.0)];
        assert_eq!(pareto_front(&points, 0.0), vec![0, 1]);
        assert_eq!(pareto_front(&points, 0.1), vec![0]);
    }

    #[test]
    fn a_real_trade_off_survives_the_tolerance() {
        let points = [(100.0, 10.0), (150.0, 5.0)];
        assert_eq!(pareto_front(&points, 0.1), vec![0, 1]);
    }

    proptest! {
        #[test]
        fn the_front_is_exactly_the_optimal_points_nothing_beats(
            points in proptest::collection::vec((1u8..40, 1u8..40), 1..40),
            tolerance in prop_oneof![Just(0.0), Just(0.05), Just(0.1), Just(0.25)],
        ) {
            let points: Vec<(f64, f64)> = points.into_iter().map(|(a, b)| (f64::from(a), f64::from(b))).collect();
            let mut front = pareto_front(&points, tolerance);
            prop_assert!(!front.is_empty());
            front.sort_unstable();
            let expected: Vec<usize> = (0..points.len())
                .filter(|&i| !dominated(&points, i) && !beaten(&points, i, tolerance))
                .collect();
            prop_assert_eq!(front, expected);
        }
    }
}
