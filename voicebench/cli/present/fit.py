"""What the terminal's tables keep whole at any width: a name or an interval is never cut
short nor broken across lines, and a path folds only after a ``/``.

rich gives each column the width it asks for and, on a narrower terminal, shrinks the
columns that may wrap, cutting a word wider than its column short (``local-qwe…``). So a
column of names is ``no_wrap`` (rich shrinks the other columns first), and an interval is
written as one word (``1,100-1,400``): a cell that must wrap breaks between its value and
its interval, never inside either. A title naming a path is ``Folded``.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, JustifyMethod, OverflowMethod
from rich.containers import Lines
from rich.measure import Measurement
from rich.text import Text


def span(low: float, high: float, fmt: str = ",.0f", scale: float = 1.0) -> str:
    """An interval as one word: ``1,100-1,400``."""
    return f"{low * scale:{fmt}}-{high * scale:{fmt}}"


_PIECES = re.compile(r"\s+|[^\s/]*/+|[^\s/]+")
"""Runs of spaces, and words cut after each run of ``/``: where a folded line may break."""


def _breaks(text: str, width: int) -> list[int]:
    """Where each line after the first starts when ``text`` is folded to ``width``."""
    width = max(1, width)
    breaks: list[int] = []
    start = 0
    for m in _PIECES.finditer(text):
        begin, end = m.span()
        if m.group().isspace():
            continue
        if end - start > width and text[start:begin].strip():
            breaks.append(begin)
            start = begin
        while end - start > width:  # wider than a line: cut where it must be
            start += width
            breaks.append(start)
    return breaks


class Folded(Text):
    """Left-aligned text that breaks at spaces and after a ``/`` only, as wide as the
    terminal: a table title naming a path (``reports/runs/local-20261124-093000``) keeps
    each folder's name whole, and runs past a narrow table rather than fold early."""

    def wrap(
        self,
        console: Console,
        width: int,
        *,
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        tab_size: int = 8,
        no_wrap: bool | None = None,
    ) -> Lines:
        width = max(width, console.width)
        lines = Lines()
        for line in self.split(allow_blank=True):
            parts = line.divide(_breaks(line.plain, width))
            for part in parts:
                part.rstrip()  # and not padded out to the terminal's width
            lines.extend(parts)
        return lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max((len(p) for p in _PIECES.findall(self.plain)), default=0)
        return Measurement(longest, len(self.plain)).with_maximum(options.max_width)


def titled(text: str) -> Folded:
    """A table's title that names a path, in the style of titles."""
    return Folded(text, style="table.title")
