//! The tuner's output: the Pareto table, the verdict (the recommended
//! `io.cost.qos` line, or which target binds and the best achievable
//! value), and the candidates as CSV (the trade-off data for a plot).

use std::fmt::Write as _;

use super::{Outcome, Setup};
use crate::sweep::table::field;

fn target_head(setup: &Setup) -> Vec<String> {
    setup
        .targets
        .iter()
        .map(|t| {
            let name = t.text.split(['<', '>']).next().unwrap_or("").trim();
            match t.unit() {
                "" => name.to_string(),
                u => format!("{name}({u})"),
            }
        })
        .collect()
}

/// The Pareto front, best throughput first; `*` marks the recommendation,
/// `ok` the candidates that meet every target.
pub fn table(setup: &Setup, out: &Outcome) -> String {
    let scaled = setup.candidates.iter().any(|q| q.scale.is_some());
    let mut s = String::new();
    let _ = write!(
        s,
        "  {:>5} {:>7} {:>5} {:>7} {:>6} {:>6}",
        "rpct", "rlat", "wpct", "wlat", "min", "max"
    );
    if scaled {
        let _ = write!(s, " {:>6}", "scale");
    }
    for h in target_head(setup) {
        let _ = write!(s, " {:>10}", h);
    }
    let _ = writeln!(s, " {:>12}  meets", "others MB/s");
    for &i in &out.front {
        let c = &out.scored[i];
        let q = &c.qos;
        let mark = if out.recommended == Some(i) { '*' } else { ' ' };
        let _ = write!(
            s,
            "{mark} {:>5} {:>7} {:>5} {:>7} {:>6} {:>6}",
            q.rpct, q.rlat_us, q.wpct, q.wlat_us, q.min, q.max
        );
        if scaled {
            let _ = write!(s, " {:>6}", q.scale.map_or("-".into(), |v| v.to_string()));
        }
        for v in &c.worst {
            let _ = write!(s, " {:>10.2}", v);
        }
        let _ = writeln!(
            s,
            " {:>12.2}  {}",
            c.others_mbps,
            if c.feasible { "ok" } else { "no" }
        );
    }
    s
}

/// The recommended setting, or why there is none.
pub fn verdict(setup: &Setup, out: &Outcome) -> String {
    let mut s = String::new();
    let protected = setup.protected.join(", ");
    match out.recommended {
        Some(i) => {
            let c = &out.scored[i];
            let _ = writeln!(
                s,
                "recommended (meets {} for {protected}; others get {:.2} MB/s):",
                setup
                    .targets
                    .iter()
                    .map(|t| t.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                c.others_mbps
            );
            if let Some(m) = setup.model_line(&c.qos) {
                let _ = writeln!(s, "io.cost.model: {m}");
            }
            let _ = writeln!(s, "io.cost.qos: {}", setup.qos_line(&c.qos));
        }
        None => {
            let _ = writeln!(s, "no searched setting meets every target for {protected}.");
            for (ti, best) in &out.binding {
                let t = &setup.targets[*ti];
                match best {
                    Some((v, i)) => {
                        let _ = writeln!(
                            s,
                            "binding: {} — best achievable {} {v:.2}{}{}, at io.cost.qos: {}",
                            t.text,
                            t.text.split(['<', '>']).next().unwrap_or("").trim(),
                            t.unit(),
                            if out.joint {
                                " with the other targets met"
                            } else {
                                ""
                            },
                            setup.qos_line(&out.scored[*i].qos)
                        );
                    }
                    None => {
                        let _ = writeln!(
                            s,
                            "binding: {} — no candidate meets the other targets either",
                            t.text
                        );
                    }
                }
            }
        }
    }
    s
}

/// Every candidate as CSV: its parameters, the worst value of each target,
/// the others' MB/s, whether it meets every target and is on the front.
pub fn csv(setup: &Setup, out: &Outcome) -> String {
    let mut head: Vec<String> = ["rpct", "rlat_us", "wpct", "wlat_us", "min", "max", "scale"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    head.extend(setup.targets.iter().map(|t| field(&t.text)));
    head.extend(["others_mbps", "feasible", "pareto", "recommended"].map(String::from));
    let mut s = head.join(",") + "\n";
    for (i, c) in out.scored.iter().enumerate() {
        let q = &c.qos;
        let mut cells = vec![
            q.rpct.to_string(),
            q.rlat_us.to_string(),
            q.wpct.to_string(),
            q.wlat_us.to_string(),
            q.min.to_string(),
            q.max.to_string(),
            q.scale.map_or(String::new(), |v| v.to_string()),
        ];
        cells.extend(c.worst.iter().map(|v| v.to_string()));
        cells.push(c.others_mbps.to_string());
        cells.push(c.feasible.to_string());
        cells.push(out.front.contains(&i).to_string());
        cells.push((out.recommended == Some(i)).to_string());
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}
