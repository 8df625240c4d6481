//! The HTML sweep report: one self-contained file (no JS): the summary, an
//! inline-SVG chart of per-program CPU ratios against the reference (with
//! the null band when an arm is listed twice), a table with each arm's
//! result, first divergence and counters, and the final frames of every arm
//! side by side (PNG data URIs, each distinct frame embedded once as a CSS
//! class). Owns HTML formatting only; it must not compute results, and
//! renders nothing timing-dependent when the report has no timings.

use super::markdown::{arm_cell, arm_labels, null_band_line, timing_cells, TIMING_HEADER};
use super::{ProgramResult, Status, SweepReport};
use std::fmt::Write as _;

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) const STYLE: &str = "body{font-family:sans-serif;font-size:13px;margin:16px}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;vertical-align:top;text-align:left}\
th{background:#f0f0f0;white-space:nowrap}th.s::after{content:' \\21C5';color:#999}\
tr.exact td.st{background:#e8f5e9}tr.diverged td.st{background:#ffebee}tr.failed td.st{background:#fff3e0}\
.frames{display:flex;gap:6px}.fr{width:320px;height:200px;background-size:contain;background-repeat:no-repeat;\
background-position:center;background-color:#000;image-rendering:pixelated;border:1px solid #888}\
.fl{font-size:11px;color:#555;text-align:center}code,pre{font-size:12px}pre{margin:2px 0;white-space:pre-wrap}\
.bad{color:#b71c1c;font-weight:bold}";

/// The HTML report.
pub fn render(r: &SweepReport) -> String {
    let labels = arm_labels(&r.arms);
    let mut h = String::new();
    h.push_str(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>oracle sweep</title><style>",
    );
    h.push_str(STYLE);
    // Each distinct frame once.
    for (hash, uri) in &r.frames {
        let _ = write!(h, "\n.f{}{{background-image:url({})}}", esc(hash), uri);
    }
    h.push_str("\n</style></head><body>\n");
    let _ = writeln!(
        h,
        "<h1>oracle sweep</h1><p><b>{}</b></p><p>corpus <code>{}</code>; arms {} (reference <b>{}</b>); budget {}; samples every {} dispatches{}{}.</p>",
        esc(&r.summary.line()),
        esc(&r.corpus),
        labels.iter().map(|l| format!("<b>{}</b>", esc(l))).collect::<Vec<_>>().join(", "),
        esc(r.arms.first().map(String::as_str).unwrap_or("")),
        r.dispatches
            .map(|d| format!("{d} dispatches per program"))
            .unwrap_or_else(|| "per program (manifest)".into()),
        r.interval,
        if r.frame_edges { " and at every frame edge" } else { "" },
        r.shard.as_ref().map(|s| format!("; shard {s}")).unwrap_or_default(),
    );
    if r.timings.is_some() {
        timing_section(&mut h, r, &labels);
    }
    table(&mut h, r, &labels);
    h.push_str("</body></html>\n");
    h
}

fn timing_section(h: &mut String, r: &SweepReport, labels: &[String]) {
    let Some(t) = &r.timings else { return };
    h.push_str("<h2>Host CPU time against the reference</h2><table><tr>");
    for c in TIMING_HEADER {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for a in &t.arms {
        h.push_str("<tr>");
        for (k, c) in timing_cells(a).iter().enumerate() {
            if k == 0 && a.null_band {
                let _ = write!(h, "<td><i>{}</i></td>", esc(c));
            } else {
                let _ = write!(h, "<td>{}</td>", esc(c));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>\n");
    if let Some(nb) = &t.null_band {
        let _ = writeln!(h, "<p>{}</p>", esc(&null_band_line(nb)));
    }
    chart(h, r, labels);
}

/// Horizontal bars, one group per program, one bar per non-reference arm,
/// log2 scale centred on x1.
fn chart(h: &mut String, r: &SweepReport, labels: &[String]) {
    let n_arms = r.arms.len();
    if n_arms < 2 {
        return;
    }
    let colors = [
        "#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f",
    ];
    let ratios: Vec<Vec<Option<f64>>> = r
        .programs
        .iter()
        .map(|p| {
            (1..n_arms)
                .map(|i| p.arms.get(i).and_then(|a| a.timing.as_ref()?.ratio))
                .collect()
        })
        .collect();
    // Programs too short to time are drawn pale and clamped to the scale,
    // which the timed ones set.
    let timed: Vec<bool> = r
        .programs
        .iter()
        .map(|p| {
            p.arms
                .first()
                .and_then(|a| a.timing.as_ref())
                .is_some_and(|t| t.cpu_ns >= super::MIN_TIMED_NS)
        })
        .collect();
    let any_timed = timed.iter().any(|t| *t);
    let max_l2 = ratios
        .iter()
        .zip(&timed)
        .filter(|(_, t)| **t || !any_timed)
        .flat_map(|(r, _)| r.iter().flatten())
        .map(|r| r.log2().abs())
        .fold(1.0f64, f64::max)
        .min(6.0)
        .ceil();
    let bar = 10.0;
    let group = bar * (n_arms - 1) as f64 + 4.0;
    let (left, width) = (170.0, 640.0);
    let height = 30.0 + group * r.programs.len() as f64;
    let x =
        |ratio: f64| left + width / 2.0 + (ratio.log2() / max_l2).clamp(-1.0, 1.0) * (width / 2.0);
    let _ = write!(
        h,
        "<h2>CPU ratio per program against the reference (log scale; grey: null band; pale: under 5 ms of reference CPU)</h2><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-size=\"10\">",
        left + width + 60.0,
        height + 16.0
    );
    // Ticks at powers of two.
    let m = max_l2 as i32;
    for k in -m..=m {
        let r2 = 2f64.powi(k);
        let label = if k < 0 {
            format!("x1/{}", 1u64 << (-k))
        } else {
            format!("x{}", 1u64 << k)
        };
        let _ = write!(
            h,
            "<line x1=\"{0:.1}\" y1=\"14\" x2=\"{0:.1}\" y2=\"{height}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\" fill=\"#777\">{label}</text>",
            x(r2),
            height + 12.0
        );
    }
    if let Some(nb) = r.timings.as_ref().and_then(|t| t.null_band.as_ref()) {
        if nb.max > 0.0 && nb.min.is_finite() {
            let _ = write!(
                h,
                "<rect x=\"{:.1}\" y=\"20\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#ddd\"><title>null band x{:.3}..x{:.3}</title></rect>",
                x(nb.min),
                (x(nb.max) - x(nb.min)).max(1.0),
                height - 20.0,
                nb.min,
                nb.max
            );
        }
    }
    for (k, lab) in labels.iter().enumerate().skip(1) {
        let _ = write!(
            h,
            "<rect x=\"{:.0}\" y=\"4\" width=\"10\" height=\"8\" fill=\"{}\"/><text x=\"{:.0}\" y=\"12\">{}</text>",
            left + (k - 1) as f64 * 120.0,
            colors[(k - 1) % colors.len()],
            left + (k - 1) as f64 * 120.0 + 14.0,
            esc(lab)
        );
    }
    for (j, p) in r.programs.iter().enumerate() {
        let y0 = 20.0 + group * j as f64;
        let _ = write!(
            h,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            y0 + group / 2.0 + 3.0,
            esc(&p.name)
        );
        for (k, ratio) in ratios[j].iter().enumerate() {
            let Some(rt) = ratio else { continue };
            let (a, b) = (x(1.0), x(*rt));
            let _ = write!(
                h,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"{}><title>{} {}: x{:.3}{}</title></rect>",
                a.min(b),
                y0 + bar * k as f64,
                (a - b).abs().max(0.5),
                bar - 1.0,
                colors[k % colors.len()],
                if timed[j] { "" } else { " fill-opacity=\"0.25\"" },
                esc(&p.name),
                esc(&labels[k + 1]),
                rt,
                if timed[j] { "" } else { " (under 5 ms: noise)" }
            );
        }
    }
    let _ = writeln!(
        h,
        "<line x1=\"{0:.1}\" y1=\"16\" x2=\"{0:.1}\" y2=\"{height}\" stroke=\"#000\"/></svg>",
        x(1.0)
    );
}

fn table(h: &mut String, r: &SweepReport, labels: &[String]) {
    h.push_str("<h2>Programs</h2><table><tr><th class=\"s\">#</th><th class=\"s\">program</th><th class=\"s\">result</th><th class=\"s\">dispatches</th><th class=\"s\">end</th>");
    for l in labels {
        let _ = write!(h, "<th class=\"s\">{}</th>", esc(l));
    }
    h.push_str("<th>final frames</th></tr>\n");
    for (i, p) in r.programs.iter().enumerate() {
        row(h, i, p, r.arms.len(), labels);
    }
    h.push_str("</table>\n");
}

fn row(h: &mut String, i: usize, p: &ProgramResult, n: usize, labels: &[String]) {
    let (disp, end) = p
        .arms
        .first()
        .map(|a| (a.last.dispatches.to_string(), a.last.end.clone()))
        .unwrap_or_default();
    let _ = write!(
        h,
        "<tr class=\"{}\"><td>{}</td><td><b>{}</b><br><small>{} &middot; {}</small></td><td class=\"st\">{}",
        p.status.word(),
        i + 1,
        esc(&p.name),
        esc(&p.family),
        esc(&p.binary),
        p.status.word()
    );
    if let Some(e) = &p.error {
        let _ = write!(h, "<br><span class=\"bad\">{}</span>", esc(e));
    }
    let _ = write!(h, "</td><td>{disp}</td><td>{}</td>", esc(&end));
    for k in 0..n {
        h.push_str("<td>");
        if p.status == Status::Failed {
            h.push('-');
        } else if let Some(a) = p.arms.get(k) {
            h.push_str(&esc(&arm_cell(a, k == 0)));
            if let Some(d) = &a.divergence {
                if let Some(f) = &d.first {
                    if let Some(ins) = &f.instruction {
                        let _ = write!(h, "<pre>{}</pre>", esc(&ins.line()));
                    }
                    for (arm, site) in f.arms.iter().zip(&f.sites) {
                        if let Some(s) = site {
                            let _ = write!(h, "<small>{}: {}</small><br>", esc(arm), esc(s));
                        }
                    }
                }
                if let Some(e) = &d.bisect_error {
                    let _ = write!(h, "<br><span class=\"bad\">{}</span>", esc(e));
                }
                if let Some(rp) = &d.repro {
                    let _ = write!(h, "<br><small>repro <code>{}</code></small>", esc(rp));
                }
            }
        }
        h.push_str("</td>");
    }
    h.push_str("<td><div class=\"frames\">");
    for (k, a) in p.arms.iter().enumerate() {
        let _ = write!(
            h,
            "<div><div class=\"fr f{}\" title=\"{}\"></div><div class=\"fl\">{} &middot; {}</div></div>",
            esc(&a.last.frame_hash),
            esc(&a.last.frame_hash),
            esc(labels.get(k).map(String::as_str).unwrap_or("")),
            esc(&a.last.frame_hash[..8.min(a.last.frame_hash.len())])
        );
    }
    h.push_str("</div></td></tr>\n");
}
