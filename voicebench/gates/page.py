"""The comparison folder: ``compare.json`` (the ``Comparison``) and ``index.html``, a page with
both runs' TTFT and TTFA distributions and stage waterfalls together, and the table of changes.
The page is self-contained (figures inlined as SVG) and rendered with autoescape, like the
report."""

from __future__ import annotations

import base64
from pathlib import Path

from markupsafe import Markup

from voicebench._jsonl import write_atomic
from voicebench.gates.compare import Comparison, format_value
from voicebench.report import figures
from voicebench.report.latency import agent_latency, cold_flags
from voicebench.report.render import asset, environment
from voicebench.runlog import read_header, read_turns


def _series(run_dir: Path, name: str) -> figures.Series:
    records = read_turns(run_dir)
    timed = [
        (t.timing, c)
        for t, c in zip(records, cold_flags(records), strict=True)
        if t.timing is not None and t.error is None
    ]
    return figures.Series(
        name,
        ttft_ms=[t.ttft_ms for t, _ in timed if t.ttft_ms is not None],
        ttfa_ms=[t.ttfa_ms for t, _ in timed if t.ttfa_ms is not None],
        cold_ttfa_ms=[t.ttfa_ms for t, c in timed if c and t.ttfa_ms is not None],
    )


def write_comparison(
    c: Comparison, out_dir: Path, *, budget_ttft_ms: float = 500.0, budget_ttfa_ms: float = 1000.0
) -> Path:
    """Write the folder; returns the page's path."""
    folder = out_dir / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [(Path(c.base_dir), f"base: {c.base_name}"), (Path(c.new_dir), f"new: {c.new_name}")]
    names = [
        figures.latency_ecdf(
            [_series(d, n) for d, n in runs], budget_ttft_ms, budget_ttfa_ms, folder
        )
    ]
    latencies = []
    for d, n in runs:
        latency = agent_latency(
            d,
            read_header(d),
            read_turns(d),
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
        )
        latencies.append(latency.model_copy(update={"agent_name": n}))
    if any(a.waterfall_ms for a in latencies):
        names.append(figures.waterfall(latencies, budget_ttfa_ms, folder))
    uris = {
        n: "data:image/svg+xml;base64,"
        + base64.b64encode((folder / f"{n}.svg").read_bytes()).decode("ascii")
        for n in names
    }
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
        )
    )
    write_atomic(out_dir / "compare.json", c.model_dump_json(indent=2) + "\n")
    page = out_dir / "index.html"
    write_atomic(page, html)
    return page
