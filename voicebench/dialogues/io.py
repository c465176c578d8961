"""Reading and writing dialogue sets (JSON Lines, one ``Dialogue`` per line)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from voicebench import builtin
from voicebench._jsonl import json_lines, write_atomic
from voicebench._model import validate_record
from voicebench.dialogues.models import Dialogue
from voicebench.errors import InputError

BUILTIN_DIALOGUES = builtin.DIALOGUES


def load_dialogues(path: str | Path) -> list[Dialogue]:
    """Load and validate a dialogue set; any problem names the file, the line and the field."""
    path = Path(path)
    dialogues: list[Dialogue] = []
    seen: dict[str, str] = {}
    for record, data in json_lines(path, tail="keep"):
        line = record
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            record = f"{line} ({data['id']})"
        dialogue = validate_record(Dialogue, data, file=path, record=record)
        if dialogue.id in seen:
            raise InputError(
                f"duplicate id (first on {seen[dialogue.id]})",
                file=path,
                record=record,
                field="id",
            )
        seen[dialogue.id] = line
        dialogues.append(dialogue)
    if not dialogues:
        raise InputError("no dialogues in file", file=path)
    return dialogues


def save_dialogues(dialogues: Iterable[Dialogue], path: str | Path) -> None:
    """Write a dialogue set atomically: the file appears whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(d.model_dump_json(exclude_defaults=False) + "\n" for d in dialogues))
