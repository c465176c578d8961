"""Reading and writing dialogue sets (JSON Lines, one ``Dialogue`` per line)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from voicebench import builtin
from voicebench._jsonl import json_lines, write_atomic
from voicebench._model import validate_record
from voicebench.dialogues.models import Dialogue
from voicebench.errors import InputError

BUILTIN_DIALOGUES = builtin.DIALOGUES


M = TypeVar("M", bound=BaseModel)


def load_by_id(model: type[M], path: str | Path, what: str) -> list[M]:
    """Load and validate a hand-written JSONL file of ``model`` records, each with a unique
    ``id``; any problem names the file, the line (with the id) and the field."""
    path = Path(path)
    items: list[M] = []
    seen: dict[str, str] = {}
    for record, data in json_lines(path, tail="keep"):
        line = record
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            record = f"{line} ({data['id']})"
        item = validate_record(model, data, file=path, record=record)
        key = str(item.model_dump(include={"id"})["id"])
        if key in seen:
            raise InputError(
                f"duplicate id (first on {seen[key]})", file=path, record=record, field="id"
            )
        seen[key] = line
        items.append(item)
    if not items:
        raise InputError(f"no {what} in file", file=path)
    return items


def load_dialogues(path: str | Path) -> list[Dialogue]:
    """Load and validate a dialogue set; any problem names the file, the line and the field."""
    return load_by_id(Dialogue, path, "dialogues")


def save_dialogues(dialogues: Iterable[Dialogue], path: str | Path) -> None:
    """Write a dialogue set atomically: the file appears whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(d.model_dump_json(exclude_defaults=False) + "\n" for d in dialogues))
