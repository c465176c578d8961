"""The report as a self-contained page and as Markdown, from a ``Report``.

The page inlines its figures (SVG data URIs), its style and one small script (click a column
heading to sort a table). Its Content-Security-Policy allows images from data URIs, inline
style, and that one script by hash, nothing else: no request leaves the page. Every piece of
text from a run (replies, dialogue text, error reasons, names) is escaped.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from pathlib import Path

from voicebench.judging import SMOKE_WARNING
from voicebench.report import tables as tb
from voicebench.report.models import Report, StrategySummary
from voicebench.runlog import kinds_text
from voicebench.timing import STAGE_LABELS, STAGES

FIGURE_CAPTIONS = {
    "latency_ecdf": "Share of turns answered within a given time: LLM time to first token (left) "
                    "and time to first audio (right). Dashed: the budgets. Triangles: cold turns.",
    "waterfall": "Where the time to first audio goes: mean time per stage, in pipeline order.",
    "frontier_ttft": "HEART Elo against median TTFT (log scale): vertical bars are the Elo 95% "
                     "CI, horizontal bars the median's 95% CI; the dotted steps join the "
                     "Pareto frontier; dashed horizontal lines are human replies.",
    "frontier_ttfa": "HEART Elo against median time to first audio (log scale), as above.",
    "radar": "Per-dimension win rate: H human alignment, E empathic responsiveness, "
             "A attunement, R resonance, T task-following.",
    "strategy_heatmap": "How often each contestant uses each of the 15 support strategies: "
                        "the share of its replies in which the classifier marked it present.",
}

SORT_SCRIPT = (
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){"
    "var table=th.closest('table'),body=table.tBodies[0],i=th.cellIndex,"
    "asc=th.getAttribute('data-asc')!=='1';th.setAttribute('data-asc',asc?'1':'0');"
    "var rows=Array.prototype.slice.call(body.rows);"
    "rows.sort(function(x,y){var a=x.cells[i],b=y.cells[i];"
    "var na=parseFloat(a.getAttribute('data-v')),nb=parseFloat(b.getAttribute('data-v'));"
    "var r=(!isNaN(na)&&!isNaN(nb))?na-nb:a.textContent.localeCompare(b.textContent);"
    "return asc?r:-r;});"
    "rows.forEach(function(r){body.appendChild(r);});});});"
)

STYLE = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2329;
margin:0;background:#f6f7f9}
main{max-width:1200px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{margin-top:40px;border-bottom:2px solid #e3e6ea;
padding-bottom:4px}h3{margin-top:28px}
.meta{color:#5b6570;font-size:13px}
.banner{border:2px solid #c0392b;background:#fdecea;color:#7b241c;padding:12px 16px;
border-radius:6px;margin:16px 0;font-weight:600}
.note{background:#f0f4f8;border-left:4px solid #7f8c9a;padding:8px 14px;margin:12px 0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid #dde2e7;border-radius:8px;padding:10px 14px;min-width:220px}
.card b{display:block;font-size:16px;margin-bottom:4px}
.card .big{font-size:22px;font-weight:600}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#eef1f4;cursor:pointer;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfc}
caption{caption-side:bottom;text-align:left;color:#5b6570;font-size:12px;padding-top:4px}
figure{margin:16px 0}figure img{max-width:100%;height:auto;border:1px solid #eceff2}
figcaption{color:#5b6570;font-size:13px}
.pair{display:flex;flex-wrap:wrap;gap:16px}.pair figure{flex:1 1 480px}
nav a{margin-right:14px}
"""


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table_html(t: tb.Table) -> str:
    if not t.rows:
        return f'<p class="note" id="{e(t.key)}">{e(t.title)}: none.</p>'
    head = "".join(f"<th>{e(h)}</th>" for h in t.headers)
    body = []
    for row in t.rows:
        cells = []
        for k, c in enumerate(row):
            cls = ' class="num"' if k in t.numeric else ""
            sort = f' data-v="{c.sort}"' if c.sort is not None else ""
            cells.append(f"<td{cls}{sort}>{e(c.text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    caption = f"<caption>{e(t.caption)}</caption>" if t.caption else ""
    return (f'<h3>{e(t.title)}</h3><div class="scroll"><table class="sortable" id="{e(t.key)}">'
            f"{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _figure_html(name: str, folder: Path) -> str:
    svg = (folder / f"{name}.svg").read_bytes()
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    caption = FIGURE_CAPTIONS.get(name, name)
    return (f'<figure id="fig-{e(name)}"><img src="{uri}" alt="{e(caption)}">'
            f'<figcaption>{e(caption)} Files: <a href="figures/{e(name)}.png">PNG</a>, '
            f'<a href="figures/{e(name)}.svg">SVG</a>.</figcaption></figure>')


def _cards(report: Report) -> str:
    elo = {}
    if report.judging and report.judging.ratings:
        elo = {r.contestant: r for r in report.judging.ratings.ratings}
    out = []
    for a in report.agents:
        ttfa = a.ttfa.quantile(50)
        ttft = a.ttft.quantile(50)
        r = elo.get(a.agent_name)
        lines = [
            f'<span class="big">{e(tb.ms(ttfa.value_ms if ttfa else None).text)} ms</span> '
            "median time to first audio",
            f"TTFT p50 {e(tb.ms(ttft.value_ms if ttft else None).text)} ms; within both budgets "
            f"{e(tb.pct(a.within_budget).text)} of {a.turns} turns ({a.failed} failed"
            + (f": {e(kinds_text(a.failed_by_kind))}" if a.failed else "") + ")",
        ]
        if r is not None:
            lines.append(f"HEART Elo {r.elo:,.0f}")
        out.append(f'<div class="card"><b>{e(a.agent_name)}</b>{"<br>".join(lines)}</div>')
    return f'<div class="cards">{"".join(out)}</div>'


def _paragraphs(lines: Iterable[str]) -> str:
    return "".join(f"<p>{e(line)}</p>" for line in lines)


def strategy_note(s: StrategySummary) -> str:
    return (f"Each judged reply was labelled with the 15 HEART support strategies by "
            f"{s.classifier} (voicebench strategies). Humans tend to spread their support over "
            "more strategies; a narrow repertoire shows as low coverage, low entropy and a high "
            "usage SD.")


def quality_notes(report: Report) -> list[str]:
    j = report.judging
    if j is None:
        return ["No judging folder: judge the runs (voicebench judge RUN_DIR...) and pass the "
                "judging folder to voicebench report for the quality-latency frontier."]
    notes = [f"Judging folder {j.judging_dir}: {len(j.contestants)} contestants, {j.pairs} "
             f"pairs, {j.decided_pairs} decided; {j.verdicts} verdicts, {j.failed_verdicts} "
             "failed" + (f" ({kinds_text(j.failed_by_kind)})" if j.failed_by_kind else "")
             + f". Rubric sha256 {j.rubric_sha256[:12]}."]
    if j.ratings is None:
        notes.append(f"No ratings: {j.no_ratings}")
    return notes


def render_html(report: Report, figure_dir: Path) -> str:
    script_hash = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src 'sha256-{script_hash}'")
    j = report.judging
    smoke = j is not None and j.smoke
    parts = [
        f"<header><h1>{e(report.title)}</h1><p class=\"meta\">Made {e(report.created_at)} by "
        f"voicebench {e(report.voicebench_version)}. Budgets: TTFT \u2264 "
        f"{report.budget_ttft_ms:,.0f} ms, TTFA \u2264 {report.budget_ttfa_ms:,.0f} ms.</p>",
    ]
    if smoke:
        parts.append(f'<div class="banner" id="smoke-banner">{e(SMOKE_WARNING)}. '
                     "The quality figures in this report are not meaningful.</div>")
    parts.append('<nav><a href="#latency">Latency budget</a><a href="#quality">Quality and '
                 'latency</a>'
                 + ('<a href="#strategies">Support strategies</a>' if report.strategies else "")
                 + '<a href="#judging">Judging health</a><a href="#method">Method</a>'
                 "</nav></header>")
    parts.append(_cards(report))
    latency = [_table_html(tb.budget_table(report))]
    if "latency_ecdf" in report.figures:
        latency.append(_figure_html("latency_ecdf", figure_dir))
    latency.append(_table_html(tb.distribution_table(report)))
    if "waterfall" in report.figures:
        latency.append(_figure_html("waterfall", figure_dir))
    latency.append(_table_html(tb.waterfall_table(report)))
    for a in report.agents:
        latency.append(_table_html(tb.slowest_table(a)))
        if a.failures:
            latency.append(_table_html(tb.failures_table(a)))
    parts.append(f'<section id="latency"><h2>Latency budget</h2>{"".join(latency)}</section>')

    quality = [_paragraphs(quality_notes(report))]
    if j is not None and j.ratings is not None:
        pair = "".join(_figure_html(n, figure_dir) for n in ("frontier_ttft", "frontier_ttfa")
                       if n in report.figures)
        quality.append(f'<div class="pair">{pair}</div>')
        quality.append(_table_html(tb.leaderboard_table(j)))
        if "radar" in report.figures:
            quality.append(_figure_html("radar", figure_dir))
    parts.append(f'<section id="quality"><h2>Quality and latency</h2>{"".join(quality)}</section>')
    if report.strategies is not None:
        s = report.strategies
        strategies = [_paragraphs([strategy_note(s)])]
        if s.smoke:
            strategies.append(f'<p class="banner">{e(SMOKE_WARNING)}: the strategy labels are '
                              "not meaningful.</p>")
        if "strategy_heatmap" in report.figures:
            strategies.append(_figure_html("strategy_heatmap", figure_dir))
        strategies.append(_table_html(tb.strategies_table(s)))
        parts.append('<section id="strategies"><h2>Support strategies</h2>'
                     f'{"".join(strategies)}</section>')

    judging = []
    if j is None:
        judging.append('<p class="note">No judging in this report.</p>')
    else:
        judging.append(f"<p>Judges: {e(', '.join(j.judges))}"
                       + (" (offline smoke judge)" if smoke else "") + "</p>")
        if smoke:
            judging.append(f'<p class="banner">{e(SMOKE_WARNING)}.</p>')
        judging.append(_table_html(tb.health_table(j)))
        judging.append(_paragraphs(tb.agreement_lines(j)))
    parts.append(f'<section id="judging"><h2>Judging health</h2>{"".join(judging)}</section>')

    stages = "".join(f"<tr><td>{e(STAGE_LABELS[name])}</td><td>{e(what)}</td></tr>"
                     for name, _, what in STAGES)
    parts.append(
        '<section id="method"><h2>Method</h2><p>Every seeker turn is replayed as speech in real '
        "time; each latency is measured from the true end of the seeker's speech (known from "
        "the audio) on one monotonic clock. TTFT runs from the LLM request to its first token; "
        "TTFA from the end of speech to the first audible sample of the reply. The stages cut "
        f"TTFA at these milestones:</p><table><tbody>{stages}</tbody></table>"
        "<p>Quality: the final reply of each item, transcribed from the agent's audio, is "
        "judged pairwise in both orders; a pair counts only when both orders agree. Ratings "
        "are strength-weighted Bradley-Terry on the decided pairs, as Elo.</p>"
        f"<p>Runs: {e('; '.join(f'{a.agent_name}: {a.run_dir}' for a in report.agents))}</p>"
        "</section>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(report.title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{''.join(parts)}</main><script>{SORT_SCRIPT}</script></body></html>\n"
    )


# Markdown ---------------------------------------------------------------------------------

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]#|~"})


def md(value: object) -> str:
    """Text safe in a Markdown table cell: no markup, no HTML, one line."""
    return html.escape(" ".join(str(value).split()), quote=False).translate(_MD_SPECIAL)


def _table_md(t: tb.Table) -> str:
    if not t.rows:
        return f"**{md(t.title)}**: none.\n"
    lines = [f"### {md(t.title)}", "", "| " + " | ".join(md(h) for h in t.headers) + " |",
             "|" + "|".join("---:" if k in t.numeric else "---" for k in range(len(t.headers)))
             + "|"]
    lines += ["| " + " | ".join(md(c.text) for c in row) + " |" for row in t.rows]
    if t.caption:
        lines += ["", md(t.caption)]
    return "\n".join(lines) + "\n"


def _figure_md(name: str) -> str:
    return f"![{md(FIGURE_CAPTIONS.get(name, name))}](figures/{name}.svg)\n"


def render_markdown(report: Report) -> str:
    j = report.judging
    out = [f"# {md(report.title)}", "",
           f"Made {md(report.created_at)} by voicebench {md(report.voicebench_version)}. Budgets: "
           f"TTFT <= {report.budget_ttft_ms:,.0f} ms, TTFA <= {report.budget_ttfa_ms:,.0f} ms.", ""]
    if j is not None and j.smoke:
        out += [f"> **{md(SMOKE_WARNING)}. The quality figures in this report are not "
                "meaningful.**", ""]
    out += ["## Latency budget", "", _table_md(tb.budget_table(report))]
    out += [_figure_md(n) for n in ("latency_ecdf",) if n in report.figures]
    out += [_table_md(tb.distribution_table(report))]
    out += [_figure_md(n) for n in ("waterfall",) if n in report.figures]
    out += [_table_md(tb.waterfall_table(report))]
    for a in report.agents:
        out.append(_table_md(tb.slowest_table(a)))
        if a.failures:
            out.append(_table_md(tb.failures_table(a)))
    out += ["## Quality and latency", ""] + [md(n) + "\n" for n in quality_notes(report)]
    if j is not None and j.ratings is not None:
        out += [_figure_md(n) for n in ("frontier_ttft", "frontier_ttfa") if n in report.figures]
        out.append(_table_md(tb.leaderboard_table(j)))
        out += [_figure_md(n) for n in ("radar",) if n in report.figures]
    if report.strategies is not None:
        s = report.strategies
        out += ["## Support strategies", "", md(strategy_note(s)) + "\n"]
        if s.smoke:
            out += [f"> **{md(SMOKE_WARNING)}: the strategy labels are not meaningful.**", ""]
        out += [_figure_md(n) for n in ("strategy_heatmap",) if n in report.figures]
        out.append(_table_md(tb.strategies_table(s)))
    out += ["## Judging health", ""]
    if j is None:
        out.append("No judging in this report.\n")
    else:
        out.append(f"Judges: {md(', '.join(j.judges))}" + (" (offline smoke judge)\n" if j.smoke
                                                            else "\n"))
        out.append(_table_md(tb.health_table(j)))
        out += [md(line) + "\n" for line in tb.agreement_lines(j)]
    return "\n".join(out)
