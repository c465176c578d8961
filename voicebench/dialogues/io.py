"""Reading and writing dialogue sets (JSON Lines, one ``Dialogue`` per line)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from voicebench._model import read_utf8, validate_record
from voicebench.dialogues.models import Dialogue
from voicebench.errors import InputError

BUILTIN_DIALOGUES = Path(__file__).resolve().parents[2] / "audio_fixtures" / "dialogues.jsonl"


def load_dialogues(path: str | Path) -> list[Dialogue]:
    """Load and validate a dialogue set; any problem names the file, the line and the field."""
    path = Path(path)
    text = read_utf8(path)
    dialogues: list[Dialogue] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = f"line {lineno}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=path, record=record) from None
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            record = f"line {lineno} ({data['id']})"
        dialogue = validate_record(Dialogue, data, file=path, record=record)
        if dialogue.id in seen:
            raise InputError(
                f"duplicate id (first on line {seen[dialogue.id]})",
                file=path,
                record=record,
                field="id",
            )
        seen[dialogue.id] = lineno
        dialogues.append(dialogue)
    if not dialogues:
        raise InputError("no dialogues in file", file=path)
    return dialogues


def save_dialogues(dialogues: Iterable[Dialogue], path: str | Path) -> None:
    """Write a dialogue set atomically: the file appears whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for d in dialogues:
            fh.write(d.model_dump_json(exclude_defaults=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
