"""What the Python calls return: runs, judgings, Elo differences and gate results, each
carrying data (figures with their intervals), never sentences."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from voicebench.calling import CallRecord, read_calls
from voicebench.calling.records import FIXTURES_DIR, ITEMS_FILE
from voicebench.gates import Figure, GateResult, folder_figures
from voicebench.host import Busy, Host, busy
from voicebench.judging import (
    JudgingHeader,
    JudgingResult,
    Verdict,
    current_verdicts,
    read_judging_header,
    read_replies,
)
from voicebench.metrics import summarize
from voicebench.metrics.summary import RunSummary
from voicebench.rating import elo_difference
from voicebench.runlog import RunHeader, TurnRecord, read_header, read_openings, read_turns

T = TypeVar("T")
PathLike = str | Path


def _in_event_loop() -> bool:
    """Whether this thread runs an event loop (asked apart from running the work, so that an
    error of the work is not shown as raised while handling "no running event loop")."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end from synchronous code, inside a running event loop too."""
    if not _in_event_loop():
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="voicebench") as pool:
        return pool.submit(asyncio.run, work).result()


@dataclass(frozen=True)
class Calls:
    """A folder of simulated calls: the run of every agent turn, and each call's record."""

    path: Path
    run: Run
    calls: tuple[CallRecord, ...]

    @classmethod
    def load(cls, path: PathLike) -> Calls:
        path = Path(path)
        return cls(path, Run.load(path), tuple(read_calls(path)))

    @property
    def items(self) -> Path:
        """The valid calls as dialogue items (replay them with their ``fixtures``)."""
        return self.path / ITEMS_FILE

    @property
    def fixtures(self) -> Path:
        """The audio of the seekers' lines."""
        return self.path / FIXTURES_DIR


@dataclass(frozen=True)
class Run:
    """A run folder: what was replayed through which agent, and every turn's record."""

    path: Path
    header: RunHeader
    records: tuple[TurnRecord, ...]
    openings: tuple[TurnRecord, ...] = ()
    """What the agent said when each call started, before anyone spoke to it (its greetings,
    ``openings.jsonl``), timed from the call's start; none when it never spoke first."""

    @classmethod
    def load(cls, path: PathLike) -> Run:
        """Read a run folder (``run.json``, ``turns.jsonl`` and ``openings.jsonl``)."""
        path = Path(path)
        return cls(path, read_header(path), tuple(read_turns(path)), tuple(read_openings(path)))

    @property
    def agent(self) -> str:
        """The agent's name, as judging and ratings call it."""
        return self.header.agent.name

    @property
    def failed(self) -> list[TurnRecord]:
        """The turns that failed (each with its ``error.kind`` and ``error.reason``)."""
        return [r for r in self.records if r.error is not None]

    @cached_property
    def summary(self) -> RunSummary:
        """The per-stage latency table's data: each stage's percentiles, TTFT and TTFA against
        the default budgets, failures by kind, and the openings' TTFA."""
        return summarize(list(self.records), self.openings)

    @cached_property
    def figures(self) -> dict[str, Figure]:
        """Every figure gates can read (``ttfa_p90_ms``, ``failed_pct``...), each with its 95%
        interval and its count, at the default budgets (500 ms TTFT, 1,000 ms TTFA)."""
        return folder_figures(self.path)


@dataclass(frozen=True)
class EloDifference:
    """One contestant's Elo minus another's, fitted together, with a 95% bootstrap interval.

    Elo is centred on the pool, so an absolute Elo says little; the honest question is whether
    the interval of a difference lies above (or below) zero."""

    base: str
    new: str
    value: float
    low: float
    high: float

    @property
    def clearly_above(self) -> bool:
        """``new`` is rated above ``base`` with 95% confidence."""
        return self.low > 0

    @property
    def clearly_below(self) -> bool:
        """``new`` is rated below ``base`` with 95% confidence."""
        return self.high < 0


@dataclass(frozen=True)
class Judging:
    """A judging folder: pairwise HEART verdicts on the final replies of some runs."""

    path: Path
    header: JudgingHeader
    result: JudgingResult | None = None
    """What the call that judged found (replies, pair results, judge health, requests asked);
    None for a folder loaded from disk."""

    @classmethod
    def load(cls, path: PathLike, result: JudgingResult | None = None) -> Judging:
        """Read a judging folder (``judging.json``)."""
        path = Path(path)
        return cls(path, read_judging_header(path), result)

    @property
    def verdicts(self) -> list[Verdict]:
        """Every verdict of this judging decided so far (both orders of every pair, per judge;
        not those an earlier spec judged into the same folder)."""
        return current_verdicts(self.path)

    @property
    def contestants(self) -> list[str]:
        """The agents judged and the human reference (``human/reference``), sorted."""
        return sorted({r.contestant for r in read_replies(self.path)})

    def elo_difference(
        self, base: str, new: str, *, rounds: int = 1000, seed: int = 0
    ) -> EloDifference:
        """``new``'s Elo minus ``base``'s and its 95% interval over items resampled."""
        value, low, high = elo_difference(self.path, base, new, rounds=rounds, seed=seed)
        return EloDifference(base, new, value, low, high)

    def figures(self, contestant: str | None = None) -> dict[str, Figure]:
        """The figures gates read (judge accuracy; with ``contestant``, its Elo)."""
        return folder_figures(self.path, contestant=contestant)


@dataclass(frozen=True)
class GateResults:
    """Gates checked against a folder's figures."""

    path: Path
    results: tuple[GateResult, ...]
    hosts: tuple[Host, ...] = ()
    """The machine each sitting of a run folder measured on; empty for a judging folder and
    a run made before hosts were recorded."""

    @property
    def busy(self) -> tuple[Busy, ...]:
        """The bounds the run's hosts passed: empty unless it was measured on a busy machine
        (a flag beside the gates, which it does not change)."""
        return busy(self.hosts)

    @property
    def passed(self) -> bool:
        """Every gate passed (a strict gate on too few dialogues did not: it abstained)."""
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> list[GateResult]:
        """The gates that failed (not the strict ones that abstained)."""
        return [r for r in self.results if not r.passed and not r.abstained]

    @property
    def too_few(self) -> list[GateResult]:
        """The gates whose figure rests on too few dialogues for an interval."""
        return [r for r in self.results if r.too_few]

    def __bool__(self) -> bool:
        return self.passed


def folder(value: Run | Judging | PathLike) -> Path:
    """The folder a result or a path names."""
    return value.path if isinstance(value, Run | Judging) else Path(value)
