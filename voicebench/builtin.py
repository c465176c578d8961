"""Where voicebench's built-in data lives, and how a shipped spec is found by name.

The data are the project's top-level folders: ``agents/`` (agent specs), ``judges/`` (judge
specs, rubrics, judge cards, gold sets) and ``audio_fixtures/`` (the built-in dialogue sets,
and the first one's audio; the second's is made on first use, ``first_use_fixtures``). In a
checkout ``voicebench/_data/`` links to them; a wheel carries copies of them there as package
data. Everything that reads built-in data asks this module, which
finds them through ``importlib.resources``.

A spec is named by a path or by the name of a shipped one: ``--agent local`` is
``agents/local.toml`` from the built-in set, unless a file called ``local`` exists where the
command runs (a user's own path always wins).
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path
from typing import Literal

from voicebench.errors import InputError

SpecKind = Literal["agents", "judges"]


def data_dir() -> Path:
    """The folder holding ``agents/``, ``judges/`` and ``audio_fixtures/``."""
    found = files("voicebench").joinpath("_data")
    path = Path(str(found))
    if not path.is_dir():  # pragma: no cover - a broken install
        raise InputError("voicebench's built-in data is missing from its install", file=path)
    return path


DATA = data_dir()
CHECKOUT = (DATA / "agents").is_symlink()
"""Whether this is a checkout, whose ``_data/`` links to the top-level folders."""
# resolved: in a checkout, paths that people read name the top-level folders
AGENTS = (DATA / "agents").resolve()
JUDGES = (DATA / "judges").resolve()
FIXTURES = (DATA / "audio_fixtures").resolve()
"""The built-in audio fixtures (``manifest.json`` and ``audio/``)."""
DIALOGUES = FIXTURES / "dialogues.jsonl"
"""The built-in dialogue set (30 items), whose seeker audio ships in ``audio_fixtures/``."""
DIALOGUES_MORE = FIXTURES / "dialogues-more.jsonl"
"""180 more built-in items, whose seeker audio is not shipped but made on first use, into
``first_use_fixtures()``: with it, 210 items a leaderboard can rank on."""
DIALOGUE_SETS = {"builtin": DIALOGUES, "more": DIALOGUES_MORE}
"""The shipped dialogue sets by the names ``--dialogues`` also takes."""
PAIRS_GOLD = JUDGES / "pairs-gold.jsonl"
"""The gold pairs every judge is measured on (``voicebench judge-check``)."""
PAIRS_REAL = JUDGES / "pairs-real.jsonl"
"""Gold pairs of replies the shipped agents really gave, against the human references and
each other, labelled by careful reading: a judge's figure on real replies leads its card."""
PAIRS_REAL_MORE = JUDGES / "pairs-real-more.jsonl"
"""A larger reading of the same kind: the local models' and the scripted agent's replies to the
180 more built-in items, in text, against the references and each other."""
GOLD_SETS = {"written": PAIRS_GOLD, "real": PAIRS_REAL}
"""The shipped gold sets by the names ``--gold`` also takes."""
STRATEGY_GOLD = JUDGES / "strategy-gold.jsonl"
"""Replies labelled with the support strategies they use."""

DEFAULT_AGENT = AGENTS / "local.toml"
"""The embedded default: local Whisper, SmolLM2-135M on llama.cpp, Piper."""
SECOND_AGENT = AGENTS / "local-qwen.toml"
"""The demo's second offline agent (the offline-judge extra's 0.5B model)."""
SMOKE_JUDGE = JUDGES / "local-smoke.toml"
"""The judge that needs no extra: SmolLM2-135M, a check of the plumbing, not of quality."""
OFFLINE_JUDGE = JUDGES / "local.toml"
"""The offline judge: a head learned on read pairs over all-MiniLM-L6-v2's embeddings (from
the offline-judge extra)."""


def first_use_fixtures() -> Path:
    """Where the seeker audio of built-in items that ships without it is made on first use:
    ``$VOICEBENCH_FIXTURE_CACHE``, else ``~/.cache/voicebench/fixtures`` (an install keeps
    its own data read-only, and a checkout's ``audio_fixtures/`` stays as committed)."""
    value = os.environ.get("VOICEBENCH_FIXTURE_CACHE")
    if value:
        return Path(value)
    try:
        return Path.home() / ".cache" / "voicebench" / "fixtures"
    except RuntimeError:  # no home folder to be found (a container's user without one)
        raise InputError(
            "no home folder to make the built-in items' audio in: set VOICEBENCH_FIXTURE_CACHE",
            field="VOICEBENCH_FIXTURE_CACHE",
        ) from None


def dialogue_set(value: str | Path, *, base: Path | None = None) -> Path:
    """The dialogue set a command-line value, an API argument or a file's field names: the
    path itself (under ``base`` when given) when it exists or is plainly a path, else the
    shipped set of that name (``DIALOGUE_SETS``); a user's own file always wins."""
    path = Path(value)
    if base is not None and not path.is_absolute():
        path = base / path
    if path.exists() or len(Path(value).parts) != 1 or str(value) not in DIALOGUE_SETS:
        return path
    return DIALOGUE_SETS[str(value)]


def shipped(kind: SpecKind) -> list[str]:
    """The names of the shipped specs of one kind, sorted."""
    return sorted(p.stem for p in (AGENTS if kind == "agents" else JUDGES).glob("*.toml"))


def spec_path(kind: SpecKind, value: str | Path, *, base: Path | None = None) -> Path:
    """The spec a command-line value, an API argument or a file's field names: the path itself
    (under ``base`` when given, for a path written in a file) when it exists or is plainly a
    path, else the shipped spec of that name."""
    path = Path(value)
    if base is not None and not path.is_absolute():
        path = base / path
    if path.exists() or len(Path(value).parts) != 1:
        return path
    name = path.name.removesuffix(".toml")
    candidate = (AGENTS if kind == "agents" else JUDGES) / f"{name}.toml"
    if candidate.is_file():
        return candidate
    names = ", ".join(shipped(kind))
    raise InputError(
        f"no such file, and no shipped {kind[:-1]} of that name (shipped: {names})", file=path
    )


def shipped_name(path: Path) -> str:
    """How a person names a file voicebench ships: a spec by its name (``local-smoke``, as
    ``--judge`` takes it), a gold set by its name (``written``), other data by its path in
    the shipped data (``shipped audio_fixtures/dialogues.jsonl``)."""
    gold = next((name for name, p in GOLD_SETS.items() if p == path), None)
    if gold is not None:
        return gold
    if path == DIALOGUES_MORE:
        return "more"
    if path.suffix == ".toml" and path.parent in (AGENTS, JUDGES):
        return path.stem
    return f"shipped {path.relative_to(FIXTURES.parent)}"


def shipped_hint(path: str | Path) -> str:
    """For a path that is not there but names a file voicebench ships, as a checkout lays
    them out (``agents/scripted.toml``, ``audio_fixtures/dialogues.jsonl``): how to name the
    shipped one from anywhere, as a clause to append to the error; else ''."""
    parts = Path(path).parts
    start = next(
        (k for k, p in enumerate(parts) if p in ("agents", "judges", "audio_fixtures")), None
    )
    if start is None:
        return ""
    rel = Path(*parts[start:])
    if not (DATA / rel).exists():
        return ""
    if len(rel.parts) == 2 and rel.suffix == ".toml" and rel.parts[0] in ("agents", "judges"):
        option = "--agent" if rel.parts[0] == "agents" else "--judge"
        return f"; voicebench ships {rel}: name it {option} {rel.stem}"
    gold = next((name for name, p in GOLD_SETS.items() if p.name == rel.name), None)
    if gold is not None and rel.parts[0] == "judges":
        return f"; voicebench ships {rel}: name it --gold {gold}"
    if rel == Path("audio_fixtures", DIALOGUES.name):
        return f"; voicebench ships {rel} (the default of --dialogues) at {DIALOGUES}"
    return f"; voicebench ships {rel} at {DATA / rel}"


def installed(path: Path) -> bool:
    """Whether ``path`` lies in the built-in data an installed wheel carries, where nothing is
    written (in a checkout the data are the repository's own folders, edited in place)."""
    if CHECKOUT:
        return False
    try:
        path.resolve().relative_to(DATA.resolve())
    except ValueError:
        return False
    return True
