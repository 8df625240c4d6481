//! The HTML page of a mainemu comparison (`oracle diff/sweep --engine
//! mainemu`): the summary line, one row per program (dispatches, ending,
//! samples, verdict) and each arm's frame side by side (the end, or the
//! first differing dispatch), as PNG data URIs embedded once per distinct
//! frame, like the toyvm sweep page (`report::html`, whose style it shares).
//!
//! Owns HTML formatting of [`crate::win32::Verdict`]s only; it must not run
//! anything or compute results. Nothing in it depends on host time, so
//! the same runs give the same bytes.

use super::html::{esc, STYLE};
use crate::win32::Verdict;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The page for `verdicts` over `corpus` (a directory, or one program for
/// `diff`), with `failed` programs as (path, error) rows.
pub fn render(
    title: &str,
    corpus: &str,
    arms: &[String],
    verdicts: &[Verdict],
    failed: &[(String, String)],
) -> String {
    let mut pngs = BTreeMap::new();
    for v in verdicts {
        pngs.extend(v.pngs.iter());
    }
    let exact = verdicts.iter().filter(|v| v.exact()).count();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}",
        esc(title)
    );
    for (hash, uri) in &pngs {
        let _ = write!(h, "\n.f{}{{background-image:url({})}}", esc(hash), uri);
    }
    let _ = writeln!(
        h,
        "\n</style></head><body>\n<h1>{}</h1><p><b>{} programs, {exact} exact, {} diverged, {} failed</b></p><p>mainemu, corpus <code>{}</code>; arms {} (reference <b>{}</b>). Frames: each arm's screen at its end, or at the first differing dispatch.</p>",
        esc(title),
        verdicts.len() + failed.len(),
        verdicts.len() - exact,
        failed.len(),
        esc(corpus),
        arms.iter().map(|a| format!("<b>{}</b>", esc(a))).collect::<Vec<_>>().join(", "),
        esc(arms.first().map(String::as_str).unwrap_or("")),
    );
    h.push_str("<table><tr><th>#</th><th>program</th><th>result</th><th>dispatches</th><th>end</th><th>samples</th><th>frames</th></tr>\n");
    for (i, v) in verdicts.iter().enumerate() {
        let (class, what) = match &v.first_difference {
            None => ("exact", "exact".to_string()),
            Some((n, arm, fields)) => (
                "diverged",
                format!("{arm} differs at dispatch {n} ({})", fields.join(", ")),
            ),
        };
        let _ = write!(
            h,
            "<tr class=\"{class}\"><td>{}</td><td><b>{}</b></td><td class=\"st\">{}</td><td>{}</td><td>{}</td><td>{}</td><td><div class=\"frames\">",
            i + 1,
            esc(&v.program),
            esc(&what),
            v.end.dispatches,
            esc(v.end.ending.lines().next().unwrap_or("")),
            v.samples.len()
        );
        for f in &v.frames {
            let _ = write!(
                h,
                "<div><div class=\"fr f{0}\" title=\"{0}\"></div><div class=\"fl\">{1} &middot; {2} &middot; at {3}</div></div>",
                esc(&f.hash),
                esc(&f.arm),
                esc(&f.hash[..8.min(f.hash.len())]),
                f.dispatches
            );
        }
        h.push_str("</div></td></tr>\n");
    }
    for (i, (prog, e)) in failed.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr class=\"failed\"><td>{}</td><td><b>{}</b></td><td class=\"st\">failed<br><span class=\"bad\">{}</span></td><td></td><td></td><td></td><td></td></tr>",
            verdicts.len() + i + 1,
            esc(prog),
            esc(e)
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}
