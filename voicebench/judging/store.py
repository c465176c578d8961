"""Reading and writing judging folders; appends survive a kill at any moment.

A judging folder (``voicebench judge``) holds::

    judging.json     the header: runs judged, judge spec and models, rubric hash, the keys of
                     the verdicts it asked for (JudgingHeader)
    replies.jsonl    every contestant's reply as heard, one Reply per line
    verdicts.jsonl   every verdict, one Verdict per line, appended as decided
    pairs.jsonl      pair results combined from the verdicts (rewritten at the end of a job)
    audio/           the human reference replies, spoken
    ratings.json     written by ``voicebench rate``
    strategies.jsonl written by ``voicebench strategies``

Appends are one ``write`` of a whole line, flushed and fsynced; a line cut short by a kill has
no newline and is dropped when the folder is opened again. A verdict key may appear more than
once (a failed verdict asked again later): readers keep the latest answered one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from voicebench._jsonl import (
    append_record,
    drop_partial_line,
    latest_per_key,
    read_models,
    write_atomic,
)
from voicebench._model import read_model
from voicebench.dialogues import Dialogue, load_dialogues
from voicebench.errors import InputError
from voicebench.judging.models import JudgingHeader, PairResult, Reply, Verdict, locate_run
from voicebench.runlog import read_header

HEADER_FILE = "judging.json"
REPLIES_FILE = "replies.jsonl"
VERDICTS_FILE = "verdicts.jsonl"
PAIRS_FILE = "pairs.jsonl"


def default_out_dir(spec_name: str, run_dirs: Sequence[Path]) -> Path:
    """The same runs and judge spec land in the same folder, so re-running the command resumes."""
    digest = hashlib.sha256("\n".join(sorted(str(p.resolve()) for p in run_dirs)).encode())
    return Path("reports") / "judgments" / f"{spec_name}-{digest.hexdigest()[:8]}"


def read_judging_header(folder: Path) -> JudgingHeader:
    """A judging folder's ``judging.json``; InputError naming the file when it is missing or bad."""
    path = Path(folder) / HEADER_FILE
    if not path.is_file():
        raise InputError(
            "not a judging folder (no judging.json); run voicebench judge first", file=Path(folder)
        )
    return read_model(JudgingHeader, path)


def judged_runs(folder: Path, header: JudgingHeader | None = None) -> list[Path]:
    """The run folders a judging folder judged, found where they are now (``locate_run``)."""
    header = header or read_judging_header(folder)
    return [locate_run(stored, folder) for stored in header.run_dirs]


def read_replies(out_dir: Path) -> list[Reply]:
    return read_models(out_dir / REPLIES_FILE, Reply)


def read_verdicts(out_dir: Path) -> list[Verdict]:
    """The latest verdict per key and pair of contestants (a failed one may have been asked
    again later). Two contestants who gave one item the same reply share their comparisons'
    keys: each pair keeps its own copy of the one answer (``judge_runs``)."""
    return latest_per_key(
        read_models(out_dir / VERDICTS_FILE, Verdict),
        lambda v: v.answer is not None,
        key=lambda v: (v.key, v.contestant_a, v.contestant_b),
    )


def current_verdicts(out_dir: Path) -> list[Verdict]:
    """The verdicts of the judging as it last ran: those its header's ``keys`` name (every
    verdict when it names none), each checklist judge's weighed as the header says."""
    from voicebench.judging.logprob import reweigh_by_judge

    verdicts = read_verdicts(out_dir)
    if not (Path(out_dir) / HEADER_FILE).is_file():
        return verdicts
    header = read_judging_header(out_dir)
    if header.keys is not None:
        keys = set(header.keys)
        verdicts = [v for v in verdicts if v.key in keys]
    return reweigh_by_judge(verdicts, header.weights or {})


def judged_items(run_dirs: Sequence[Path]) -> dict[str, Dialogue]:
    """The dialogues of every run, by id; one id must mean one dialogue in all runs."""
    items: dict[str, Dialogue] = {}
    for run_dir in run_dirs:
        header = read_header(run_dir)
        dialogues = {d.id: d for d in load_dialogues(Path(header.dialogues_path))}
        for did in header.dialogue_ids:
            if did not in dialogues:
                raise InputError(
                    f"dialogue {did!r} is no longer in {header.dialogues_path}",
                    file=run_dir / "run.json",
                    field="dialogue_ids",
                )
            if did in items and items[did] != dialogues[did]:
                raise InputError(
                    f"dialogue {did!r} differs from the one other runs answered",
                    file=run_dir / "run.json",
                    field="dialogues_path",
                )
            items[did] = dialogues[did]
    return items


class JudgingStore:
    """An open judging folder: header written, replies and verdicts appended."""

    def __init__(self, folder: str | Path) -> None:
        self.dir = Path(folder)

    def open(self, header: JudgingHeader) -> None:
        """Create the folder or reopen it, (re)writing the header and dropping any line a
        kill cut short."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.write_header(header)
        for name in (REPLIES_FILE, VERDICTS_FILE):
            drop_partial_line(self.dir / name)

    def write_header(self, header: JudgingHeader) -> None:
        """(Re)write ``judging.json`` whole."""
        write_atomic(self.dir / HEADER_FILE, header.model_dump_json(indent=2) + "\n")

    def append_reply(self, reply: Reply) -> None:
        append_record(self.dir / REPLIES_FILE, reply)

    def write_pairs(self, pairs: Iterable[PairResult]) -> None:
        write_atomic(self.dir / PAIRS_FILE, "".join(p.model_dump_json() + "\n" for p in pairs))


class Asked(Protocol):
    """A comparison as asked (``judging.run.Matchup``): its key and its two replies."""

    @property
    def key(self) -> str: ...
    @property
    def a(self) -> Reply: ...
    @property
    def b(self) -> Reply: ...


def labelled_verdicts(comparisons: Sequence[Asked], out_dir: Path) -> list[Verdict]:
    """The verdict of every comparison. Comparisons of the same two texts share a key and
    were asked once; each pair of contestants that gave them gets its own copy of the answer,
    appended to the verdict file, so ratings read every pair."""
    have = {(v.key, v.contestant_a, v.contestant_b): v for v in read_verdicts(out_dir)}
    answered = {k: v for (k, _, _), v in have.items() if v.answer is not None}
    out: list[Verdict] = []
    for c in comparisons:
        v = have.get((c.key, c.a.contestant, c.b.contestant))
        if (v is None or v.answer is None) and c.key in answered:
            v = answered[c.key].model_copy(
                update={"contestant_a": c.a.contestant, "contestant_b": c.b.contestant}
            )
            append_record(out_dir / VERDICTS_FILE, v)
        if v is not None:
            out.append(v)
    return out
