"""What the terminal says of the machine a run measured on: its host line, and a warning
when it was busy (the end of a run, ``summary``, ``check``, ``compare``, a report)."""

from __future__ import annotations

from collections.abc import Sequence

from voicebench.api.views import (
    BuiltReport,
    Comparison,
    Host,
    busy,
    busy_banners,
    busy_text,
    contrast_lines,
    load_text,
    machine_text,
)
from voicebench.cli.common import show

WARNING = "bold yellow"


def show_hosts(name: str, hosts: Sequence[Host]) -> None:
    """A line per sitting of the run (its machine and load), then a warning if it was busy;
    a run made before hosts were recorded says so."""
    if not hosts:
        show("host: not recorded (a run made before voicebench recorded hosts)")
    for h in hosts:
        show(f"host: {machine_text(h)}; {load_text(h)}")
    found = busy(hosts)
    if found:
        show(f"warning: {name} was {busy_text(found)}.", style=WARNING)


def show_report_hosts(built: BuiltReport) -> None:
    """A warning per run of a report measured on a busy machine."""
    for line in busy_banners(built.report):
        show(f"warning: {line}", style=WARNING)


def show_contrast(c: Comparison) -> None:
    """Whether the compared runs share a machine and its software, and which was busy."""
    if c.hosts is None:
        return
    for text, warning in contrast_lines(c.hosts):
        show(f"warning: {text}." if warning else f"{text}.", style=WARNING if warning else None)
