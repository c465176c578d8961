"""The words and the table for the hosts runs were measured on (``voicebench.host``), shared
by the report, the terminal (``summary``, the end of a run, ``check``) and ``compare``."""

from __future__ import annotations

from collections.abc import Sequence

from voicebench.host import BUSY_LOAD_PER_CPU, BUSY_STEAL_PCT, Busy, Host, HostContrast
from voicebench.reporting.models import Report
from voicebench.reporting.tables import Cell, Table, _numeric

FIELD_NAMES = {
    "cpu_model": "CPU",
    "cpu_count": "CPUs",
    "platform": "system",
    "python": "Python",
    "voicebench": "voicebench",
    "pipecat": "pipecat",
}


def machine_text(h: Host) -> str:
    """``Intel Xeon ..., 8 CPUs; Linux-...; Python 3.11.7, voicebench 0.1.0, pipecat 1.14.0``"""
    cpus = f"{h.cpu_count} CPUs" if h.cpu_count else "CPU count unknown"
    pipecat = f", pipecat {h.pipecat}" if h.pipecat else ""
    return f"{h.cpu_model}, {cpus}; {h.platform}; Python {h.python}, voicebench {h.voicebench}" + (
        pipecat
    )


def _most(value: float | None, most: float | None, fmt: str, unit: str = "") -> str:
    """``0.52 (at most 1.10)``; ``not counted`` where the system gives no figure."""
    if value is None:
        return "not counted"
    return f"{value:{fmt}}{unit}" + (f" (at most {most:{fmt}}{unit})" if most is not None else "")


def load_text(h: Host) -> str:
    """The load while the host measured: ``load average 0.52 (at most 1.10), CPU steal 0.0%
    (at most 0.4%) over 55 s``."""
    load = h.load
    return (
        f"load average {_most(load.load_mean, load.load_max, '.2f')}, "
        f"CPU steal {_most(load.steal_pct, load.steal_max_pct, '.1f', '%')} "
        f"over {load.seconds:,.0f} s"
    )


def _busy_part(b: Busy) -> str:
    if b.figure == "steal_pct":
        return f"CPU steal {b.value:.1f}% of its CPU time (bound {b.bound:g}%)"
    return f"load average {b.value:.2f} per CPU (bound {b.bound:.2f})"


def busy_text(busy: Sequence[Busy]) -> str:
    """Why a run counts as measured on a busy machine, and what that does to its figures."""
    return (
        "measured on a busy machine: "
        + "; ".join(_busy_part(b) for b in busy)
        + ". Its latencies include time spent waiting for a CPU"
    )


def _values(hosts: Sequence[Host], field: str) -> str:
    seen: list[str] = []
    for h in hosts:
        v = str(getattr(h, field))
        if v not in seen:
            seen.append(v)
    return " / ".join(seen)


def contrast_lines(c: HostContrast) -> list[tuple[str, bool]]:
    """What ``compare`` says of the two runs' hosts, each line with whether it is a warning:
    whether they share a machine and its software, and which run was measured on a busy
    machine."""
    lines = []
    if c.unknown:
        which = " and ".join(n for n, hosts in (("base", c.base), ("new", c.new)) if not hosts)
        lines.append(
            (
                f"hosts: the {which} run has none recorded (made before voicebench recorded "
                "hosts), so whether the runs share a machine is unknown",
                False,
            )
        )
    elif c.differs:
        changes = ", ".join(
            f"{FIELD_NAMES[f]} {_values(c.base, f)} -> {_values(c.new, f)}" for f in c.differs
        )
        if c.other_machine:
            text = (
                f"hosts: the runs were measured on different machines ({changes}); a change "
                "may be the machine's, not the agent's"
            )
            lines.append((text, True))
        else:
            lines.append((f"hosts: the same machine, with other software ({changes})", False))
    else:
        lines.append((f"hosts: the same machine and software ({machine_text(c.base[0])})", False))
    for name, busy in (("base", c.base_busy), ("new", c.new_busy)):
        if busy:
            lines.append((f"the {name} run was {busy_text(busy)}", True))
    return lines


def busy_banners(report: Report) -> list[str]:
    """One line per run of the report measured on a busy machine."""
    return [f"{a.agent_name} was {busy_text(a.busy)}." for a in report.agents if a.busy]


HEADERS = ("agent", "sitting", "CPU", "CPUs", "system", "software", "load average", "CPU steal")


def hosts_table(report: Report) -> Table:
    """Each run's hosts: a row per sitting (a resumed run has one per resume that finished a
    turn), busy ones marked."""
    rows = []
    for a in report.agents:
        for n, h in enumerate(a.hosts, start=1):
            load = h.load
            software = f"Python {h.python}, voicebench {h.voicebench}" + (
                f", pipecat {h.pipecat}" if h.pipecat else ""
            )
            rows.append(
                (
                    Cell(a.agent_name + (" (busy)" if a.busy else "")),
                    Cell(f"{n}, {h.started_at}", n),
                    Cell(h.cpu_model),
                    Cell("-" if h.cpu_count is None else str(h.cpu_count), h.cpu_count),
                    Cell(h.platform),
                    Cell(software),
                    Cell(_most(load.load_mean, load.load_max, ".2f"), load.load_mean),
                    Cell(_most(load.steal_pct, load.steal_max_pct, ".1f", "%"), load.steal_pct),
                )
            )
    return Table(
        "hosts",
        "Hosts",
        HEADERS,
        rows,
        caption=host_caption(),
        numeric=_numeric(HEADERS, 0, 1, 2, 4, 5),
    )


def host_caption() -> str:
    """What the host figures are and when a run counts as busy."""
    return (
        "The machine each run measured on, read every few seconds while it played its turns: "
        "the 1-minute load average (mean of the readings, and the highest) and the CPU time "
        "the hypervisor gave to other guests (CPU steal, per cent over the run, and the "
        "highest between two readings). A run is marked busy when its steal averaged above "
        f"{BUSY_STEAL_PCT:g}% or its load average above {BUSY_LOAD_PER_CPU:g} per CPU."
    )
