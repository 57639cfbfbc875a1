//! A deliberately simple hypervolume by slicing (HSO): sort by the last objective and sum the
//! (d-1)-dimensional hypervolumes of the slabs between consecutive levels. Exponential in the
//! dimension and quadratic-or-worse in the number of points: an independent oracle for tests,
//! not for production use.

pub fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    let inside: Vec<&[f64]> = points
        .iter()
        .map(Vec::as_slice)
        .filter(|p| p.iter().zip(reference).all(|(a, r)| a < r))
        .collect();
    slice(&inside, reference)
}

fn slice(points: &[&[f64]], reference: &[f64]) -> f64 {
    let d = reference.len();
    if points.is_empty() {
        return 0.0;
    }
    if d == 1 {
        let best = points.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
        return reference[0] - best;
    }
    let mut sorted: Vec<&[f64]> = points.to_vec();
    sorted.sort_by(|a, b| a[d - 1].total_cmp(&b[d - 1]));
    let mut volume = 0.0;
    let mut active: Vec<&[f64]> = Vec::new();
    for (i, p) in sorted.iter().enumerate() {
        active.push(&p[..d - 1]);
        let next = sorted.get(i + 1).map_or(reference[d - 1], |q| q[d - 1]);
        let depth = next - p[d - 1];
        if depth > 0.0 {
            volume += depth * slice(&active, &reference[..d - 1]);
        }
    }
    volume
}

pub fn contributions(points: &[Vec<f64>], reference: &[f64]) -> Vec<f64> {
    let total = hypervolume(points, reference);
    (0..points.len())
        .map(|i| {
            let rest: Vec<Vec<f64>> = points
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, p)| p.clone())
                .collect();
            (total - hypervolume(&rest, reference)).max(0.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_and_staircases() {
        assert_eq!(hypervolume(&[vec![0.0, 0.0]], &[2.0, 3.0]), 6.0);
        // Staircase (1,3), (2,2), (3,1) with ref (4,4): 3 + 2*2... = 1*1 + 2*2 + 3*3 - overlaps.
        let pts = vec![vec![1.0, 3.0], vec![2.0, 2.0], vec![3.0, 1.0]];
        assert_eq!(hypervolume(&pts, &[4.0, 4.0]), 6.0);
        assert_eq!(contributions(&pts, &[4.0, 4.0]), vec![1.0, 1.0, 1.0]);
        let cube = vec![vec![0.0, 0.0, 0.0], vec![0.5, 0.5, 0.5]];
        assert_eq!(hypervolume(&cube, &[1.0, 1.0, 1.0]), 1.0);
        assert_eq!(
            contributions(&cube, &[1.0, 1.0, 1.0]),
            vec![1.0 - 0.125, 0.0]
        );
        // Points outside the reference box add nothing.
        assert_eq!(hypervolume(&[vec![5.0, 0.0]], &[4.0, 4.0]), 0.0);
    }
}
