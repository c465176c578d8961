"""A run's openings: what the agent said when a call started, before the caller said anything
(a LiveKit agent's greeting, from ``session.generate_reply`` at the session's start or its
agent's ``on_enter``).

``openings.jsonl`` in the run folder holds one ``TurnRecord`` a line, ``opening: true``, for
each start of the agent that spoke first, appended and fsynced as each ends, as turns are (a
resumed run's restarted agent greets again, and that opening is added). Its TTFA runs from the
call's start to the first audible sample of the greeting, its stages cut the same way; its
``turn_index`` is the seeker turn played after it, its audio ``audio/DIALOGUE__opening.wav``
and its place on the call's recording ``call``. The openings are kept apart from
``turns.jsonl``: nothing the seeker said is answered in them, so the turns' figures, judging
and gates never count them; the summary and the report show them as figures of their own.
"""

from __future__ import annotations

from pathlib import Path

from voicebench._jsonl import append_record, drop_partial_line, read_models
from voicebench.runlog.models import TurnRecord

OPENINGS_FILE = "openings.jsonl"


def read_openings(run_dir: str | Path) -> list[TurnRecord]:
    """Every complete opening of a run (none in a run whose agent never spoke first)."""
    return read_models(Path(run_dir) / OPENINGS_FILE, TurnRecord)


def append_opening(run_dir: str | Path, record: TurnRecord) -> None:
    """Add one finished opening durably (after any line a killed write left unfinished)."""
    assert record.opening, "only an opening goes in openings.jsonl"
    path = Path(run_dir) / OPENINGS_FILE
    drop_partial_line(path)
    append_record(path, record)
