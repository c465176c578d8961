"""``check`` and ``compare`` from Python: gates on a run's or a judging's figures, and two runs
compared figure by figure, each change with its interval."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from voicebench._jsonl import write_atomic
from voicebench.api.results import GateResults, Judging, PathLike, Run, folder
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.errors import InputError
from voicebench.gates import (
    Comparison,
    Gate,
    compare_runs,
    figures_by_pass,
    folder_figures,
    make_gate,
    read_gates,
)
from voicebench.gates import check as decide
from voicebench.gates.check import junit_xml, summary_markdown
from voicebench.gates.page import write_comparison
from voicebench.runlog import HEADER_FILE, read_header


def check(
    target: Run | Judging | PathLike,
    *,
    strict: bool = False,
    every_repeat: bool = False,
    contestant: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    **gates: float,
) -> GateResults:
    """Check a run (latency, failures, WER) or a judging (Elo, judge accuracy) against gates.

    Gates are keyword arguments ``max_FIGURE`` or ``min_FIGURE`` with a bound, shares in per
    cent: ``check(run, max_ttfa_p90_ms=1200, max_failed_pct=5)``. Each is decided on the
    figure's value; with ``strict`` on its 95% interval's far end, so a run too small to be
    sure fails. With ``every_repeat``, on a run replayed several times (``replay(...,
    repeat=K)``), each gate must hold in every pass apart (pass^k), not only pooled. An
    unknown gate name is an ``InputError`` listing the figures.

    Returns:
        The results, true when every gate passed; ``.failed`` lists the others.
    """
    if not gates:
        raise InputError("no gates given: pass them as keywords, e.g. max_ttfa_p90_ms=1200")
    if "min_elo" in gates and contestant is None:
        raise InputError("min_elo needs contestant=NAME", field="contestant")
    chosen = [make_gate(name, bound, source=name) for name, bound in gates.items()]
    return check_gates(
        target,
        chosen,
        strict=strict,
        every_repeat=every_repeat,
        contestant=contestant,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
    )


def check_gates(
    target: Run | Judging | PathLike,
    gates: Sequence[Gate],
    *,
    strict: bool = False,
    every_repeat: bool = False,
    contestant: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
) -> GateResults:
    """``check`` with the gates already made (``voicebench check`` reads them from options
    and a file): the folder's figures are read first, so a folder of the wrong kind is named
    before missing gates are."""
    path = folder(target)
    budgets = {"budget_ttft_ms": budget_ttft_ms, "budget_ttfa_ms": budget_ttfa_ms}
    figures = folder_figures(path, contestant=contestant, **budgets)
    passes = None
    if every_repeat:
        if not (path / "run.json").is_file():
            raise InputError("every-repeat gates need a run folder", file=path)
        passes = figures_by_pass(path, **budgets)
    hosts = read_header(path).hosts if (path / HEADER_FILE).is_file() else ()
    return GateResults(path, tuple(decide(gates, figures, strict=strict, passes=passes)), hosts)


def compare(
    base: Run | PathLike,
    new: Run | PathLike,
    *,
    judging: Judging | PathLike | None = None,
    min_change_ms: float = 10.0,
    out: PathLike | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
) -> Comparison:
    """Compare two runs: TTFT and TTFA percentiles, every stage's median, WER, failures (and,
    with a judging holding both agents, their Elo), each change with a 95% bootstrap interval
    and a verdict (``faster``, ``slower``, ``no clear change``...).

    With ``out``, ``compare.json`` and a page (``index.html``, drawn at the budgets) are
    written there.

    Returns:
        The comparison; ``.regressions`` lists what got clearly slower or worse.
    """
    comparison = compare_runs(
        folder(base),
        folder(new),
        min_change_ms=min_change_ms,
        judging=folder(judging) if judging is not None else None,
    )
    if out is not None:
        write_comparison(
            comparison, Path(out), budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms
        )
    return comparison


def gates_file(file: PathLike) -> list[Gate]:
    """The gates of a TOML file's ``[gates]`` table (``NAME = BOUND``)."""
    return read_gates(Path(file))


def gate(name: str, bound: float, *, source: str | None = None) -> Gate:
    """One gate, ``max_FIGURE`` or ``min_FIGURE``; an unknown name is an ``InputError``
    naming ``source`` (where the gate was given) and listing the figures."""
    return make_gate(name, bound, source=source or name)


def parse_gate(text: str, *, source: str = "gate") -> Gate:
    """A gate written ``NAME=BOUND`` (``max_ttfa_p95_ms=1500``)."""
    name, _, bound = text.partition("=")
    try:
        number = float(bound)  # no "=" leaves it empty: not a number either
    except ValueError:
        raise InputError(f"{text!r} is not NAME=NUMBER", field=source) from None
    return make_gate(name.strip(), number, source=source)


def write_junit(results: GateResults, path: PathLike) -> None:
    """The gates as JUnit XML, a testcase per gate (CI systems show them as tests)."""
    write_atomic(Path(path), junit_xml(list(results.results), results.path))


def write_summary(results: GateResults, path: PathLike) -> None:
    """The gates as a Markdown table (a CI job summary)."""
    write_atomic(
        Path(path), summary_markdown(list(results.results), results.path, busy=results.busy)
    )
