//! A run's front as files: CSV and JSON (objectives in their natural sign: maximised objectives
//! positive), and SVG scatter plots of one or more fronts.

use std::path::Path;

use plotters::prelude::*;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::files::write_atomically;
use crate::search::{Individual, RunOutcome, SearchProblem};

/// Objective values of `ind` in natural sign.
pub(crate) fn natural_objectives<P: SearchProblem>(
    problem: &P,
    ind: &Individual<P::Genome>,
) -> Vec<f64> {
    problem
        .objectives()
        .iter()
        .zip(&ind.evaluation.objectives)
        .map(|(o, &v)| o.natural(v))
        .collect()
}

/// A number for JSON: non-finite values (which JSON cannot hold) become null.
fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// One member: `{objectives: {name: value}, extras: {name: value}, violation, genome,
/// description}`.
pub(crate) fn member_json<P: SearchProblem>(
    problem: &P,
    ind: &Individual<P::Genome>,
) -> Result<Value> {
    let mut objectives = Map::new();
    for (o, v) in problem
        .objectives()
        .iter()
        .zip(natural_objectives(problem, ind))
    {
        objectives.insert(o.name.clone(), number(v));
    }
    let mut extras = Map::new();
    for (name, &v) in problem.extra_names().iter().zip(&ind.evaluation.extras) {
        extras.insert(name.clone(), number(v));
    }
    let genome = serde_json::to_value(&ind.genome)
        .map_err(|e| Error::field("genome", format!("cannot be written as JSON: {e}")))?;
    Ok(json!({
        "objectives": objectives,
        "extras": extras,
        "violation": number(ind.evaluation.violation),
        "genome": genome,
        "description": problem.describe(&ind.genome),
    }))
}

/// The members of a front as a JSON list.
pub(crate) fn front_json<P: SearchProblem>(
    problem: &P,
    front: &[Individual<P::Genome>],
) -> Result<Value> {
    front
        .iter()
        .map(|i| member_json(problem, i))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

/// `front.json`: the run's identity, figures and front. No timings, so that the same seed
/// gives the same bytes (resume is tested that way).
pub(crate) fn run_json<P: SearchProblem>(
    problem: &P,
    outcome: &RunOutcome<P::Genome>,
    reference_point: &[f64],
) -> Result<Value> {
    let reference: Vec<Value> = problem
        .objectives()
        .iter()
        .zip(reference_point)
        .map(|(o, &r)| number(o.natural(r)))
        .collect();
    Ok(json!({
        "problem": problem.name(),
        "algorithm": outcome.algorithm.name(),
        "seed": outcome.seed,
        "evaluations": outcome.evaluations,
        "generations": outcome.generations,
        "reference_point": reference,
        "hypervolume": number(outcome.hypervolume),
        "front": front_json(problem, &outcome.front)?,
    }))
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// CSV: objective names (natural sign), extra names, then `genome` (the problem's
/// `describe()`); one row per member.
pub(crate) fn front_csv<P: SearchProblem>(problem: &P, front: &[Individual<P::Genome>]) -> String {
    let mut header: Vec<String> = problem
        .objectives()
        .iter()
        .map(|o| csv_cell(&o.name))
        .collect();
    header.extend(problem.extra_names().iter().map(|n| csv_cell(n)));
    header.push("genome".into());
    let mut out = header.join(",");
    out.push('\n');
    for ind in front {
        let mut row: Vec<String> = natural_objectives(problem, ind)
            .iter()
            .chain(&ind.evaluation.extras)
            .map(|v| v.to_string())
            .collect();
        row.push(csv_cell(&problem.describe(&ind.genome)));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// Writes `front.csv` and `front.json` into `dir` (atomically).
pub(crate) fn write_front_files<P: SearchProblem>(
    problem: &P,
    outcome: &RunOutcome<P::Genome>,
    reference_point: &[f64],
    dir: &Path,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    write_atomically(
        &dir.join("front.csv"),
        front_csv(problem, &outcome.front).as_bytes(),
    )?;
    let mut text = serde_json::to_string_pretty(&run_json(problem, outcome, reference_point)?)
        .map_err(|e| Error::field("front", e.to_string()))?;
    text.push('\n');
    write_atomically(&dir.join("front.json"), text.as_bytes())
}

/// One labelled point set of a scatter plot (natural-sign objective vectors).
pub(crate) struct FrontSeries {
    pub label: String,
    pub points: Vec<Vec<f64>>,
}

/// Scatter plot of fronts into an SVG file (written atomically): one panel for two objectives,
/// one panel per pair of objectives for more.
pub(crate) fn plot_fronts(
    path: &Path,
    title: &str,
    names: &[String],
    series: &[FrontSeries],
) -> Result<()> {
    let m = names.len();
    let draw = |e: &dyn std::fmt::Display| Error::File {
        path: path.to_path_buf(),
        reason: format!("drawing failed: {e}"),
    };
    if m < 2 {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "a front plot needs at least two objectives".into(),
        });
    }
    let pairs: Vec<(usize, usize)> = (0..m)
        .flat_map(|i| (i + 1..m).map(move |j| (i, j)))
        .collect();
    let cols = pairs.len().min(3);
    let rows = pairs.len().div_ceil(cols);
    let (w, h) = if pairs.len() == 1 {
        (800, 600)
    } else {
        (440 * cols as u32, 420 * rows as u32 + 40)
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let root = root
            .titled(title, ("sans-serif", 20))
            .map_err(|e| draw(&e))?;
        let panels = root.split_evenly((rows, cols));
        for (&(i, j), area) in pairs.iter().zip(&panels) {
            let finite = |p: &&Vec<f64>| p[i].is_finite() && p[j].is_finite();
            let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
            for p in series.iter().flat_map(|s| &s.points).filter(finite) {
                x0 = x0.min(p[i]);
                x1 = x1.max(p[i]);
                y0 = y0.min(p[j]);
                y1 = y1.max(p[j]);
            }
            if x0 > x1 {
                return Err(Error::File {
                    path: path.to_path_buf(),
                    reason: "nothing to plot (no finite points)".into(),
                });
            }
            let pad = |a: f64, b: f64| if b - a < 1e-12 { 1.0 } else { (b - a) * 0.05 };
            let (px, py) = (pad(x0, x1), pad(y0, y1));
            let mut chart = ChartBuilder::on(area)
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d((x0 - px)..(x1 + px), (y0 - py)..(y1 + py))
                .map_err(|e| draw(&e))?;
            chart
                .configure_mesh()
                .x_desc(names[i].as_str())
                .y_desc(names[j].as_str())
                .draw()
                .map_err(|e| draw(&e))?;
            for (k, s) in series.iter().enumerate() {
                let color = Palette99::pick(k).to_rgba();
                let points: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter(finite)
                    .map(|p| (p[i], p[j]))
                    .collect();
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| draw(&e))?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| Circle::new((x + 8, y), 3, color.filled()));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| draw(&e))?;
        }
        root.present().map_err(|e| draw(&e))?;
    }
    write_atomically(path, svg.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Evaluation, Objective};
    use rand_chacha::ChaCha8Rng;

    /// Two objectives, the second maximised, one extra; genome is a label.
    struct Toy(Vec<Objective>, Vec<String>);

    impl SearchProblem for Toy {
        type Genome = String;
        fn name(&self) -> String {
            "toy".into()
        }
        fn objectives(&self) -> &[Objective] {
            &self.0
        }
        fn extra_names(&self) -> &[String] {
            &self.1
        }
        fn reference_point(&self) -> Vec<f64> {
            vec![10.0, 0.0]
        }
        fn random_genome(&self, _: &mut ChaCha8Rng) -> String {
            String::new()
        }
        fn crossover(&self, a: &String, b: &String, _: &mut ChaCha8Rng) -> (String, String) {
            (a.clone(), b.clone())
        }
        fn mutate(&self, _: &mut String, _: &mut ChaCha8Rng) {}
        fn evaluate(&self, _: &String) -> Evaluation {
            unreachable!()
        }
        fn check_genome(&self, _: &String) -> Result<(), String> {
            Ok(())
        }
        fn describe(&self, g: &String) -> String {
            g.clone()
        }
    }

    fn toy() -> (Toy, Vec<Individual<String>>) {
        let p = Toy(
            vec![Objective::minimise("cost"), Objective::maximise("width")],
            vec!["diameter".into()],
        );
        let front = vec![
            Individual {
                genome: "a,b".into(),
                evaluation: Evaluation {
                    objectives: vec![1.5, -8.0],
                    violation: 0.0,
                    extras: vec![3.0],
                },
            },
            Individual {
                genome: "c".into(),
                evaluation: Evaluation {
                    objectives: vec![2.0, -9.0],
                    violation: 0.0,
                    extras: vec![4.0],
                },
            },
        ];
        (p, front)
    }

    #[test]
    fn csv_has_natural_signs_and_quoting() {
        let (p, front) = toy();
        assert_eq!(
            front_csv(&p, &front),
            "cost,width,diameter,genome\n1.5,8,3,\"a,b\"\n2,9,4,c\n"
        );
    }

    #[test]
    fn json_members_map_names_to_natural_values() {
        let (p, front) = toy();
        let v = front_json(&p, &front).unwrap();
        assert_eq!(v[0]["objectives"]["width"], 8.0);
        assert_eq!(v[0]["objectives"]["cost"], 1.5);
        assert_eq!(v[1]["extras"]["diameter"], 4.0);
        assert_eq!(v[0]["genome"], "a,b");
        assert_eq!(v[0]["violation"], 0.0);
    }

    #[test]
    fn plots_two_and_three_objectives() {
        let dir = tempfile::tempdir().unwrap();
        let two = dir.path().join("two.svg");
        let series = [
            FrontSeries {
                label: "NSGA-II".into(),
                points: vec![vec![0.0, 1.0], vec![1.0, 0.0]],
            },
            FrontSeries {
                label: "SMS-EMOA".into(),
                points: vec![vec![0.5, 0.5]],
            },
        ];
        plot_fronts(&two, "zdt1", &["f1".into(), "f2".into()], &series).unwrap();
        let text = std::fs::read_to_string(&two).unwrap();
        assert!(text.starts_with("<svg") && text.contains("SMS-EMOA") && text.contains("NSGA-II"));
        assert_eq!(
            text.matches("<circle").count(),
            3 + 2,
            "points + legend markers"
        );
        let three = dir.path().join("three.svg");
        let names: Vec<String> = ["f1", "f2", "f3"].map(String::from).to_vec();
        let series = [FrontSeries {
            label: "NSGA-II".into(),
            points: vec![vec![0.0, 0.5, 1.0], vec![1.0, 0.0, 0.2]],
        }];
        plot_fronts(&three, "dtlz2", &names, &series).unwrap();
        let text = std::fs::read_to_string(&three).unwrap();
        // Three panels of two points, plus one legend marker each.
        assert_eq!(text.matches("<circle").count(), 3 * 2 + 3);
        assert!(text.contains("f3"));
        assert!(plot_fronts(&three, "x", &names, &[]).is_err());
    }
}
