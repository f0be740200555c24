//! The cost–time Pareto front.

/// Indices of the points not dominated by any other: no other point is at most as costly and
/// at most as slow while strictly better in one. Equal points are all kept. Sorted by cost.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    let mut front = Vec::new();
    let mut best_time = f64::INFINITY;
    let mut last: Option<(f64, f64)> = None;
    for index in order {
        let point = points[index];
        if point.1 < best_time || last == Some(point) {
            front.push(index);
            best_time = best_time.min(point.1);
            last = Some(point);
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dominated(points: &[(f64, f64)], i: usize) -> bool {
        points.iter().enumerate().any(|(j, p)| {
            j != i && p.0 <= points[i].0 && p.1 <= points[i].1 && (p.0 < points[i].0 || p.1 < points[i].1)
        })
    }

    #[test]
    fn keeps_the_trade_offs() {
        let points = [(1.0, 10.0), (2.0, 5.0), (3.0, 6.0), (4.0, 1.0)];
        assert_eq!(pareto_front(&points), vec![0, 1, 3]);
    }

    proptest! {
        #[test]
        fn the_front_is_exactly_the_non_dominated_points(points in proptest::collection::vec((0u8..20, 0u8..20), 0..30)) {
            let points: Vec<(f64, f64)> = points.into_iter().map(|(a, b)| (f64::from(a), f64::from(b))).collect();
            let mut front = pareto_front(&points);
            front.sort_unstable();
            let expected: Vec<usize> = (0..points.len()).filter(|&i| !dominated(&points, i)).collect();
            prop_assert_eq!(front, expected);
        }
    }
}
