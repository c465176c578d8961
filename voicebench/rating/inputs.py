"""What a rating table is fitted from, as one digest: a table whose inputs still hash the same
is reused as it is (``table.current_ratings``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from voicebench.judging import (
    HEADER_FILE,
    REPLIES_FILE,
    VERDICTS_FILE,
    judged_runs,
    read_judging_header,
)
from voicebench.rating.people import human_files
from voicebench.runlog import TURNS_FILE


def inputs_sha256(
    judging_dir: Path, *, human_judgments: Path | None = None, **settings: float
) -> str:
    """A digest of the settings and of every file a rating table is fitted from."""
    header = read_judging_header(judging_dir)
    h = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    files = [
        judging_dir / HEADER_FILE,
        judging_dir / REPLIES_FILE,
        judging_dir / VERDICTS_FILE,
        *(d / TURNS_FILE for d in judged_runs(judging_dir, header)),
        *human_files(judging_dir),
    ]
    if human_judgments is not None:
        files.append(Path(human_judgments))
    for path in files:
        h.update(f"\n{path.name}\n".encode())
        h.update(path.read_bytes() if path.is_file() else b"(missing)")
    return h.hexdigest()
