use fabricopt::search::SearchProblem;
use fabricopt::search::config::{BisectionMode, ExanestSearch};
use fabricopt::search::exanest::ExanestProblem;
use rand::SeedableRng;
use std::time::Instant;
fn main() {
    for (m, p_ext, mode) in [(1, 0.0, BisectionMode::Heuristic), (1, 0.0, BisectionMode::Exact), (4, 0.5, BisectionMode::Heuristic)] {
        let params = ExanestSearch { p_ext, bisection: mode, ..Default::default() };
        let p = ExanestProblem::new(8, 16, m, &params, 1).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let genomes: Vec<Vec<usize>> = (0..100).map(|_| p.random_genome(&mut rng)).collect();
        let t = Instant::now();
        let mut exact = 0; let mut sum = 0.0;
        for g in &genomes { let f = p.figures(g); if f.bisection_exact { exact += 1; } sum += f.bisection as f64; }
        println!("m={m} {mode:?}: {:.3} ms/eval, exact {exact}/100 mean f1 {}", t.elapsed().as_secs_f64() * 10.0, sum / 100.0);
    }
}
