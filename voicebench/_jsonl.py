"""Append-only JSONL files that survive a kill at any moment.

Each record is one line written with a single ``write``, flushed and fsynced before the
next. A line cut short by a kill has no newline: readers ignore it and ``drop_partial_line``
removes it before appending again, so the record is simply redone. Every JSONL file of every
kind is read through ``complete_lines``, which ends a line at ``\n`` and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from voicebench._model import parse_json, read_bytes, validate_record
from voicebench.errors import InputError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def drop_partial_line(path: Path) -> None:
    if not path.exists():
        return
    raw = path.read_bytes()
    keep = raw.rfind(b"\n") + 1
    if keep != len(raw):
        with path.open("r+b") as fh:
            fh.truncate(keep)


Tail = Literal["drop", "keep", "whole"]
"""What becomes of a last line with no newline: ``drop`` it (a write cut short by a kill),
``keep`` it (a hand-written file, whose last line often has no newline), or keep it only if it
is ``whole`` JSON (a hand-written file that a killed writer may also have appended to)."""


def complete_lines(path: Path, *, hand_written: bool = False) -> list[tuple[int, str]]:
    """(line number, text) of every non-blank line. Lines end at ``\n`` alone: U+2028, U+2029
    and U+0085 may stand inside a record's text. A last line with no newline is a write cut
    short and left out, except in a ``hand_written`` file, whose last line often has no
    newline; such a file must exist, where a log not written yet has no lines."""
    return _lines(path, hand_written=hand_written)[0]


def _lines(path: Path, *, hand_written: bool) -> tuple[list[tuple[int, str]], int | None]:
    """``complete_lines``, and the number of a kept last line that had no newline (if any)."""
    if not hand_written and not path.exists():
        return [], None
    parts = read_bytes(path).split(b"\n")
    last = parts.pop()  # after the final newline: empty, or a line with no newline
    unended = None
    if hand_written and last.strip():
        parts.append(last)
        unended = len(parts)
    out = []
    for n, chunk in enumerate(parts, start=1):
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"not UTF-8 text (byte {exc.start})", file=path, record=f"line {n}"
            ) from None
        if line.strip():
            out.append((n, line))
    return out, unended


def json_lines(path: Path, *, tail: Tail = "drop") -> list[tuple[str, Any]]:
    """(``line N``, parsed value) of every line (see ``complete_lines``; the file is taken as
    hand-written unless ``tail`` drops its last line). A line that is not JSON is an
    InputError naming the file and the line, except a ``whole`` file's last line with no
    newline, which is left out: a record a killed writer never finished."""
    lines, unended = _lines(path, hand_written=tail != "drop")
    out = []
    for n, line in lines:
        try:
            out.append((f"line {n}", parse_json(line, file=path, record=f"line {n}")))
        except InputError:
            if not (tail == "whole" and n == unended):
                raise
    return out


def append_record(path: Path, record: BaseModel) -> None:
    """Append one record durably."""
    line = record.model_dump_json() + "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def write_atomic(path: Path, content: str | bytes) -> None:
    """Replace a file's content all at once: a reader, or a machine that loses power, sees
    the old content or the new, never half. Written to a temporary file of its own in the same
    folder (two writers never share one), fsynced, renamed over ``path``, then the folder
    fsynced so the rename itself is durable."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable (a no-op where folders cannot be
    opened, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def latest_per_key(
    records: Sequence[K],
    decided: Callable[[K], bool],
    key: Callable[[K], Hashable] = lambda r: r.key,
) -> list[K]:
    """One record per ``key``: the last decided one, else the last undecided one (a failed
    record may be followed, after a retry, by a decided one for the same key)."""
    latest: dict[Hashable, K] = {}
    for r in records:
        k = key(r)
        if k not in latest or decided(r) or not decided(latest[k]):
            latest[k] = r
    return list(latest.values())


def read_models(path: Path, model: type[M], *, hand_written: bool = False) -> list[M]:
    """Every complete line validated as ``model``; errors name the file, line and field
    (a record's own checks, such as its ``schema_version``'s, are the model's).
    ``hand_written``: see ``complete_lines``."""
    return [
        validate_record(model, data, file=path, record=record)
        for record, data in json_lines(path, tail="keep" if hand_written else "drop")
    ]


async def decide_each(
    items: Sequence[T],
    decide: Callable[[T], Awaitable[M]],
    path: Path,
    *,
    concurrency: int,
    progress: Callable[[M, int, int], None] | None = None,
) -> list[M]:
    """``decide`` every item with at most ``concurrency`` in flight, appending each result to
    ``path`` as soon as it is decided (so a kill loses only the ones in flight), then calling
    ``progress(result, done, total)``. Results come back in the order they were decided."""
    semaphore = asyncio.Semaphore(concurrency)
    done: list[M] = []

    async def one(item: T) -> None:
        async with semaphore:
            result = await decide(item)
        append_record(path, result)
        done.append(result)
        if progress is not None:
            progress(result, len(done), len(items))

    tasks = [asyncio.create_task(one(item)) for item in items]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
    return done
