"""``voicebench check``: gates on a run folder's or a judging folder's figures, for CI.

A gate is ``max_FIGURE`` or ``min_FIGURE`` with a bound (``max_ttft_p50_ms = 350``), given as a
command-line option or in a gates file::

    [gates]
    max_ttft_p50_ms = 350
    max_ttfa_p90_ms = 1200
    max_failed_pct = 5

Each gate is decided on the figure's point value; its 95% interval says whether that is sure.
When the interval lies on both sides of the bound the run is too small to decide, and the gate
says so. ``strict`` decides by the interval's far end instead (a ``max`` gate passes only when
the interval's top is within the bound), so an undecided gate fails. A gate whose figure the
folder does not have (a stop latency without barge-in turns) fails, saying why. A figure that
rests on too few dialogues for an interval (``bootstrap.clusters_needed``: 6 for a p50 or a
share, 30 for a p90) has none: its gate is decided by the value alone and says it is too few
to tell whether that is sure, and a ``strict`` gate, decided by an interval, abstains (neither
passes nor fails). ``voicebench check`` exits with its own code (``TOO_FEW_EXIT``) when
nothing failed but something was too few to tell.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from voicebench._model import FrozenModel, read_toml
from voicebench.bootstrap import TOO_FEW
from voicebench.errors import InputError, MissingFileError
from voicebench.gates.figures import FIGURE_KEYS, Figure
from voicebench.host import Busy

TOO_FEW_EXIT = 4
"""``voicebench check``'s and ``compare --fail-on-regression``'s exit code when nothing failed
but something rests on too few dialogues to tell (1: a gate failed or a figure regressed)."""


class Gate(FrozenModel):
    name: str
    """``max_ttft_p50_ms``: the direction, then the figure's key."""
    bound: float

    @property
    def direction(self) -> Literal["max", "min"]:
        return "max" if self.name.startswith("max_") else "min"

    @property
    def figure(self) -> str:
        return self.name[4:]


class GateResult(FrozenModel):
    gate: Gate
    figure: Figure | None
    passed: bool
    decided: bool
    """The whole 95% interval is on one side of the bound."""
    note: str = ""
    too_few: bool = False
    """Its figure rests on too few dialogues for an interval."""
    abstained: bool = False
    """A strict gate on such a figure: neither passed nor failed."""
    passes: tuple[float | None, ...] = ()
    """An every-repeat gate (pass^k): the figure in each pass of a repeated run (None where a
    pass lacks it). It passes only when every pass did; ``figure`` is the pooled one."""

    @property
    def status(self) -> str:
        if self.abstained:
            return TOO_FEW
        word = "pass" if self.passed else "FAIL"
        if self.passes:
            k = len(self.passes)
            word += f" (every one of {k} repeats)" if self.passed else f" (not all {k} repeats)"
        if self.too_few:
            return f"{word} ({TOO_FEW})"
        return word if self.decided else f"{word} (unsure)"


def make_gate(name: str, bound: float, *, source: str | Path) -> Gate:
    """A gate from its name and bound; an unknown name is an error naming ``source``."""
    direction, _, figure = name.partition("_")
    if direction not in ("max", "min") or figure not in FIGURE_KEYS:
        raise InputError(
            f"unknown gate {name!r}; gates are max_ or min_ and one of: {', '.join(FIGURE_KEYS)}",
            field=str(source),
        )
    return Gate(name=name, bound=float(bound))


def read_gates(path: Path) -> list[Gate]:
    """The ``[gates]`` table of a TOML file."""
    if not path.is_file():
        raise MissingFileError("gates file", path)
    data = read_toml(path)
    table = data.get("gates")
    if not isinstance(table, dict) or not table:
        raise InputError("needs a [gates] table of NAME = BOUND", file=path, field="gates")
    gates = []
    for name, bound in table.items():
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise InputError("a bound must be a number", file=path, field=f"gates.{name}")
        gates.append(make_gate(name, bound, source=f"{path}: gates.{name}"))
    return gates


def evaluate(gate: Gate, figures: Mapping[str, Figure], *, strict: bool = False) -> GateResult:
    f = figures.get(gate.figure)
    if f is None:
        return GateResult(
            gate=gate, figure=None, passed=False, decided=True, note="not measured in this folder"
        )

    def within(x: float) -> bool:
        return x <= gate.bound if gate.direction == "max" else x >= gate.bound

    if f.low is None or f.high is None:
        k = f.clusters
        of = "" if k is None else f" in {k} dialogue" + ("s" if k != 1 else "")
        note = f"{TOO_FEW} (n={f.n} turns{of})"
        return GateResult(
            gate=gate,
            figure=f,
            passed=not strict and within(f.value),
            decided=False,
            too_few=True,
            abstained=strict,
            note=note + ("; a strict gate abstains" if strict else ": decided by the value"),
        )
    near, far = (f.low, f.high) if gate.direction == "max" else (f.high, f.low)
    decided = within(far) or not within(near)
    passed = within(far) if strict else within(f.value)
    note = ""
    if not decided:
        note = f"the 95% interval spans the bound: {f.n} observations are too few to decide"
        if strict:
            note += "; failed by the interval's far end (--strict)"
    return GateResult(gate=gate, figure=f, passed=passed, decided=decided, note=note)


def evaluate_every_pass(
    gate: Gate,
    pooled: Mapping[str, Figure],
    passes: Sequence[Mapping[str, Figure]],
    *,
    strict: bool = False,
) -> GateResult:
    """pass^k: the gate decided in each of a repeated run's passes, passed only when it passed in
    every one. A pass that fails fails it; one too few to tell (when none failed) makes it too
    few to tell, and a strict gate then abstains."""
    each = [evaluate(gate, figures, strict=strict) for figures in passes]
    values = tuple(r.figure.value if r.figure is not None else None for r in each)
    k = len(each)
    failed = [i for i, r in enumerate(each) if not r.passed and not r.abstained]
    few = sum(r.too_few for r in each)
    unit = next((r.figure.unit for r in each if r.figure is not None), "")
    shown = ", ".join("-" if v is None else _number(v, unit) for v in values)
    if failed:
        which = ", ".join(str(i + 1) for i in failed)
        note = f"not within the bound in pass {which} of {k} ({shown})"
    else:
        note = f"every one of {k} passes: {shown}"
        if few:
            note += f"; {TOO_FEW} in {few} of {k} passes" + (
                ", so a strict gate abstains" if strict else ""
            )
        elif not all(r.decided for r in each):
            note += "; in some pass the 95% interval spans the bound"
    return GateResult(
        gate=gate,
        figure=pooled.get(gate.figure),
        passed=not failed and not any(r.abstained for r in each),
        decided=all(r.decided for r in each if not r.too_few),
        note=note,
        too_few=bool(few) and not failed,
        abstained=not failed and any(r.abstained for r in each),
        passes=values,
    )


def check(
    gates: Sequence[Gate],
    figures: Mapping[str, Figure],
    *,
    strict: bool = False,
    passes: Sequence[Mapping[str, Figure]] | None = None,
) -> list[GateResult]:
    """Each gate decided on the figures; with a repeated run's ``passes``, in every pass
    (pass^k) instead."""
    if not gates:
        raise InputError("no gates given: pass --gates FILE or options such as --max-ttfa-p90-ms")
    if passes is not None:
        return [evaluate_every_pass(g, figures, passes, strict=strict) for g in gates]
    return [evaluate(g, figures, strict=strict) for g in gates]


def _number(x: float, unit: str) -> str:
    text = f"{x:,.1f}" if abs(x) < 1e5 else f"{x:,.0f}"
    return f"{text} {unit}".strip() if unit not in ("%",) else f"{text}%"


def describe(r: GateResult) -> tuple[str, str, str, str]:
    """(value, interval, bound, result) as text."""
    sign = "<=" if r.gate.direction == "max" else ">="
    unit = r.figure.unit if r.figure is not None else ""
    bound = f"{sign} {_number(r.gate.bound, unit)}"
    if r.figure is None:
        return "-", "-", bound, f"FAIL ({r.note})"
    f = r.figure
    if f.low is None or f.high is None:
        return _number(f.value, f.unit), "-", bound, r.status
    interval = f"[{_number(f.low, f.unit)}, {_number(f.high, f.unit)}]"
    return _number(f.value, f.unit), interval, bound, r.status


def failure_text(r: GateResult) -> str:
    value, interval, bound, _ = describe(r)
    if r.passes:
        return f"{r.gate.figure} (every repeat), bound {bound}: {r.note}"
    if r.figure is None:
        return f"{r.gate.figure}: {r.note}"
    if r.too_few:
        return f"{r.gate.figure} = {value} (no interval), bound {bound}: {r.note}"
    return f"{r.gate.figure} = {value} (95% CI {interval}, n={r.figure.n}), bound {bound}" + (
        f"; {r.note}" if r.note else ""
    )


def junit_xml(results: Sequence[GateResult], folder: Path) -> str:
    """One testsuite, one testcase per gate; a failed gate's failure names value and bound."""
    failed = sum(not r.passed and not r.abstained for r in results)
    suites = ET.Element("testsuites", tests=str(len(results)), failures=str(failed))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"voicebench check {folder}",
        tests=str(len(results)),
        failures=str(failed),
        errors="0",
    )
    for r in results:
        case = ET.SubElement(suite, "testcase", classname="voicebench.check", name=r.gate.name)
        if r.abstained:
            ET.SubElement(case, "skipped", message=failure_text(r))
        elif not r.passed:
            ET.SubElement(case, "failure", message=failure_text(r), type="GateFailed")
        elif r.note:
            ET.SubElement(case, "system-out").text = r.note
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def summary_markdown(
    results: Sequence[GateResult], folder: Path, *, busy: Sequence[Busy] = ()
) -> str:
    """A Markdown table for a CI job summary; ``busy``: the bounds the run's host passed,
    said under it."""
    from voicebench.reporting.hosts import busy_text
    from voicebench.reporting.render import md

    passed = sum(r.passed for r in results)
    lines = [
        f"### voicebench check: {passed}/{len(results)} gates passed ({md(folder)})",
        "",
        "| gate | value | 95% CI | bound | result |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        value, interval, bound, status = describe(r)
        lines.append(
            f"| {md(r.gate.name)} | {md(value)} | {md(interval)} | {md(bound)} | {md(status)} |"
        )
    notes = [f"- {md(r.gate.name)}: {md(r.note)}" for r in results if r.note]
    if busy:
        notes.append(f"- **the run was {md(busy_text(busy))}**")
    return "\n".join(lines + (["", *notes] if notes else [])) + "\n"
