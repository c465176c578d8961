"""Append-only JSONL files that survive a kill at any moment.

Each record is one line written with a single ``write``, flushed and fsynced before the
next. A line cut short by a kill has no newline: readers ignore it and ``drop_partial_line``
removes it before appending again, so the record is simply redone.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel

from voicebench._model import validate_record
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


def complete_lines(path: Path, *, hand_written: bool = False) -> list[tuple[int, str]]:
    """(line number, text) of every complete, non-blank line; a trailing partial line is ignored,
    except in a ``hand_written`` file, whose last line often has no newline."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    complete = raw if hand_written else raw[: raw.rfind(b"\n") + 1]
    return [
        (n, line)
        for n, line in enumerate(complete.decode("utf-8").splitlines(), start=1)
        if line.strip()
    ]


def append_record(path: Path, record: BaseModel) -> None:
    """Append one record durably."""
    line = record.model_dump_json() + "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def write_atomic(path: Path, content: str | bytes) -> None:
    """Replace a file's content all at once (a reader never sees half of it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def latest_per_key(records: Sequence[K], decided: Callable[[K], bool]) -> list[K]:
    """One record per ``key``: the last decided one, else the last undecided one (a failed
    record may be followed, after a retry, by a decided one for the same key)."""
    latest: dict[str, K] = {}
    for r in records:
        if r.key not in latest or decided(r) or not decided(latest[r.key]):
            latest[r.key] = r
    return list(latest.values())


def read_models(
    path: Path,
    model: type[M],
    check: Callable[[object, str], None] | None = None,
    *,
    hand_written: bool = False,
) -> list[M]:
    """Every complete line validated as ``model``; errors name the file, line and field.
    ``check(data, record)`` runs first on each parsed line (e.g. a schema-version check).
    ``hand_written``: see ``complete_lines``."""
    out: list[M] = []
    for n, line in complete_lines(path, hand_written=hand_written):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=path, record=f"line {n}") from None
        if check is not None:
            check(data, f"line {n}")
        out.append(validate_record(model, data, file=path, record=f"line {n}"))
    return out


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
