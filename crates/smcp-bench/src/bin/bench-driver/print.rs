//! The printed report of `bench-driver`: the tables it writes to stdout from the JSON report
//! (`--out` holds the same figures).

use serde_json::Value;

/// `v` with `decimals` decimals, or `-` when it is not a number.
fn fmt(v: &Value, decimals: usize) -> String {
    v.as_f64()
        .map_or_else(|| "-".to_owned(), |x| format!("{x:.decimals$}"))
}

/// The report as tables on stdout: every case × concurrency with its candidate/baseline
/// ratios, the targets, then the B/A table of an A/B run.
pub(crate) fn print_table(report: &Value) {
    let empty = Vec::new();
    let rows = report["results"].as_array().unwrap_or(&empty);
    let ratios = report["ratios"].as_array().unwrap_or(&empty);
    let candidates: Vec<&str> = report["candidates"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let w = candidates.iter().map(|c| c.len()).fold(11, usize::max);
    println!(
        "{:<9} {:>5} {:<w$} {:>10} {:>9} {:>9} {:>11} {:>6} {:>6} {:>18} {:>8}",
        "case",
        "conc",
        "server",
        "req/s",
        "p50 µs",
        "p99 µs",
        "CPU µs/req",
        "load",
        "other",
        "×req/s",
        "×p99"
    );
    let mut load_bound = false;
    let mut noisy = false;
    let max_other = report["settings"]["max_other_cores"]
        .as_f64()
        .unwrap_or(0.1);
    for row in rows {
        let m = &row["median"];
        let (rr, pr) = if row["server"] == "baseline" {
            (String::new(), String::new())
        } else {
            let r = ratios.iter().find(|r| {
                r["case"] == row["case"]
                    && r["concurrency"] == row["concurrency"]
                    && r["server"] == row["server"]
            });
            r.map_or_else(Default::default, |r| {
                let spread = match (r["rps_min"].as_f64(), r["rps_max"].as_f64()) {
                    (Some(lo), Some(hi)) if r["rps_rounds"].as_array().map_or(0, Vec::len) > 1 => {
                        format!(" ({lo:.2}–{hi:.2})")
                    }
                    _ => String::new(),
                };
                (format!("{}{spread}", fmt(&r["rps"], 2)), fmt(&r["p99"], 2))
            })
        };
        let util = m["load_cpu_util"].as_f64().unwrap_or(0.0);
        load_bound |= util >= 0.9;
        noisy |= m["other_cores_max"].as_f64().unwrap_or(0.0) >= max_other;
        println!(
            "{:<9} {:>5} {:<w$} {:>10} {:>9} {:>9} {:>11} {:>5}% {:>6} {:>18} {:>8}",
            row["case"].as_str().unwrap_or("?"),
            row["concurrency"].as_u64().unwrap_or(0),
            row["server"].as_str().unwrap_or("?"),
            fmt(&m["rps"], 0),
            fmt(&m["p50_us"], 1),
            fmt(&m["p99_us"], 1),
            fmt(&m["cpu_us_per_req"], 2),
            format!("{:.0}", util * 100.0),
            fmt(&m["other_cores"], 2),
            rr,
            pr
        );
    }
    println!(
        "(medians of {} round(s); ratios are {}/baseline, ×req/s with the lowest and highest of \
         the rounds' own ratios; `load` = CPU share of the load generator's core; `other` = cores \
         used by anything else on the machine during the round)",
        report["settings"]["rounds"],
        candidates.join("/baseline and ")
    );
    if load_bound {
        println!(
            "note: the load generator used ≥ 90% of its core in some rows: there the baseline's \
             req/s is a floor, not the ceiling, and req/s ratios are flattered; compare CPU µs/req."
        );
    }
    if noisy {
        println!(
            "note: other work used ≥ --max-other cores during some rounds even after retries (see `other`, and \
             `other_cores_max` in the JSON): those figures are disturbed; rerun on a quiet machine."
        );
    }
    for (key, candidate) in ["bytes_match", "bytes_match_b"].iter().zip(&candidates) {
        let Some(bm) = report[key].as_object() else {
            continue;
        };
        let who = if candidates.len() > 1 {
            format!(" ({candidate})")
        } else {
            String::new()
        };
        for (case, v) in bm {
            println!(
                "bytes {case}{who}: {}",
                if v["match"] == true {
                    "identical".to_owned()
                } else {
                    format!("DIFFER {}", v["first_difference"].as_str().unwrap_or(""))
                }
            );
        }
    }
    println!("targets (informational):");
    for t in report["targets"].as_array().unwrap_or(&empty) {
        let who = if candidates.len() > 1 {
            format!("{:<w$} ", t["server"].as_str().unwrap_or("?"))
        } else {
            String::new()
        };
        println!(
            "  {who}{:<9} c={:<3} {:<22} {:>6}  {}",
            t["case"].as_str().unwrap_or("?"),
            t["concurrency"].as_u64().unwrap_or(0),
            t["target"].as_str().unwrap_or("?"),
            fmt(&t["value"], 2),
            t["verdict"].as_str().unwrap_or("?")
        );
    }
    print_ab(&report["ab"]);
}

/// The B/A table of an A/B run (nothing without `--smcpd-b`).
fn print_ab(ab: &Value) {
    let Some(rows) = ab["rows"].as_array() else {
        return;
    };
    let (a, b) = (
        ab["a"].as_str().unwrap_or("A"),
        ab["b"].as_str().unwrap_or("B"),
    );
    println!("B/A: B = {b}, A = {a} (req/s ratio > 1, p99 and CPU ratios < 1: B is better)");
    println!(
        "{:<9} {:>5} {:>10} {:>10} {:>7} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
        "case",
        "conc",
        "A req/s",
        "B req/s",
        "×req/s",
        "A p99 µs",
        "B p99 µs",
        "×p99",
        "A CPU µs",
        "B CPU µs",
        "×CPU"
    );
    for r in rows {
        println!(
            "{:<9} {:>5} {:>10} {:>10} {:>7} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
            r["case"].as_str().unwrap_or("?"),
            r["concurrency"].as_u64().unwrap_or(0),
            fmt(&r["rps_a"], 0),
            fmt(&r["rps_b"], 0),
            fmt(&r["rps"], 3),
            fmt(&r["p99_us_a"], 1),
            fmt(&r["p99_us_b"], 1),
            fmt(&r["p99"], 3),
            fmt(&r["cpu_us_per_req_a"], 2),
            fmt(&r["cpu_us_per_req_b"], 2),
            fmt(&r["cpu_us_per_req"], 3)
        );
    }
    println!("(CPU µs = server CPU µs per request, median of the rounds)");
}
