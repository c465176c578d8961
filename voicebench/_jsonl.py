"""Append-only JSONL files that survive a kill at any moment.

Each record is one line written with a single ``write``, flushed and fsynced before the
next. A line cut short by a kill has no newline: readers ignore it and ``drop_partial_line``
removes it before appending again, so the record is simply redone.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel


def drop_partial_line(path: Path) -> None:
    if not path.exists():
        return
    raw = path.read_bytes()
    keep = raw.rfind(b"\n") + 1
    if keep != len(raw):
        with path.open("r+b") as fh:
            fh.truncate(keep)


def complete_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every complete, non-blank line; a trailing partial line is ignored."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    return [(n, line) for n, line in enumerate(complete.decode("utf-8").splitlines(), start=1)
            if line.strip()]


def append_record(path: Path, record: BaseModel) -> None:
    """Append one record durably."""
    line = record.model_dump_json() + "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def write_atomic(path: Path, text: str) -> None:
    """Replace a file's content all at once (a reader never sees half of it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
