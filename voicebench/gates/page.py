"""The comparison folder: ``compare.json`` (the ``Comparison``) and ``index.html``, a page with
both runs' TTFT and TTFA distributions and stage waterfalls together, and the table of changes.
The page is self-contained (figures inlined as SVG) and rendered with autoescape, like the
report."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from voicebench._jsonl import write_atomic
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.gates.changes import Comparison, format_value
from voicebench.gates.figures import read_run
from voicebench.metrics.latency import agent_latency
from voicebench.reporting import figures
from voicebench.reporting.hosts import contrast_lines
from voicebench.reporting.render import asset, environment, figure_uri


def write_comparison(
    c: Comparison,
    out_dir: Path,
    *,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
) -> Path:
    """Write the folder; returns the page's path."""
    folder = out_dir / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    series, latencies = [], []
    for run_dir, name in ((c.base_dir, f"base: {c.base_name}"), (c.new_dir, f"new: {c.new_name}")):
        header, records = read_run(Path(run_dir))
        series.append(figures.Series.of(name, records))
        latency = agent_latency(
            Path(run_dir),
            header,
            records,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
        )
        latencies.append(latency.model_copy(update={"agent_name": name}))
    names = [figures.latency_ecdf(series, budget_ttft_ms, budget_ttfa_ms, folder)]
    if any(a.waterfall_ms for a in latencies):
        names.append(figures.waterfall(latencies, budget_ttfa_ms, folder))
    uris = {n: figure_uri(folder, n) for n in names}
    uris.setdefault("waterfall", "")
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    html = (
        environment("voicebench.gates")
        .get_template("compare.html.j2")
        .render(
            c=c,
            title=f"{c.new_name} against {c.base_name}",
            csp=Markup(csp),
            style=Markup(asset("report.css")),
            figure_uris=uris,
            fmt=format_value,
            hosts=contrast_lines(c.hosts) if c.hosts is not None else [],
        )
    )
    write_atomic(out_dir / "compare.json", c.model_dump_json(indent=2) + "\n")
    page = out_dir / "index.html"
    write_atomic(page, html)
    return page
