"""A campaign's plan: every input loaded and checked before anything runs, the cells laid out,
and what it will cost (turns, hours of real-time audio, judge calls).

Cells. One per (agent variant, dialogue set, scenario list), each its own run folder
``OUT/cells/VARIANT--SET--SCENARIOS``. Quality is judged on each variant's cells of the first
scenario list (put ``[]`` first to judge clean turns): the same items through every variant,
one reply each. The other cells add latency and interruption figures.

A campaign with ``mode = "simulated"`` makes each cell a converse folder instead: an LLM caller
plays each item's persona live for up to ``[converse] turns`` lines, and whole calls are judged.

Cost. Replay runs in real time, so a cell takes at least its seeker speech plus, per turn, the
agent's answer: the speech is read off the fixtures where they are already made (else 0.4 s a
word), and each answer is counted as ``ANSWER_S`` (an agent's wait and a spoken reply of one to
three sentences). Judge calls: per judge model, every pair of contestants (the variants and the
human reference) on every judged item, in both orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voicebench import builtin
from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.calling import SeekerSpec, load_seeker_spec
from voicebench.campaign.spec import CampaignSpec, load_campaign, slug
from voicebench.dialogues import Dialogue, load_dialogues
from voicebench.dialogues.personas import Persona, personas_for
from voicebench.errors import InputError
from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest, lookup_fixture
from voicebench.judging import load_judge_spec
from voicebench.replaying import demo_items, plan_turns
from voicebench.scenarios import parse_scenario

ANSWER_S = 10.0
WORD_S = 0.4
CALLER_LINE_S = 9.0
"""A simulated caller's line: the seeker LLM's answer (the offline one takes about 4-5 s on
2 cores, ``benchmarks/seeker.py``) and the line spoken."""
PIPELINE_CPUS = 2.0
REMOTE_CPUS = 0.25


@dataclass(frozen=True)
class Cell:
    key: str
    """Its run folder's name."""
    label: str
    """Its name in the report: the variant's for the variant's first cell, else the variant's
    with the set and scenarios that tell it apart."""
    variant: str
    agent: AgentSpec
    spec_path: Path
    cpus: float
    dialogues_path: Path
    fixtures_dir: Path
    items: tuple[Dialogue, ...]
    scenarios: tuple[str, ...]
    judged: bool
    """Its final replies are judged (the variant's cells of the first scenario list)."""
    turns: int
    audio_s: float
    """Estimated seconds of real-time audio."""
    seeker: SeekerSpec | None = None
    """The caller of a simulated cell (``mode = "simulated"``); None for a replay."""
    personas: tuple[Persona, ...] = ()
    """A simulated cell's persona cards, one per item."""
    call_turns: int = 0
    """A simulated cell's most caller lines a call."""
    repeats: int = 1
    """Passes over the items (the campaign's ``repeat``); ``turns`` and ``audio_s`` count all."""
    final_only: bool = False
    """Only each item's final seeker turn is replayed (the campaign's ``final_only``)."""


@dataclass(frozen=True)
class CampaignPlan:
    spec: CampaignSpec
    file: Path | None
    """The campaign file (none for the demo, whose plan is made from its options)."""
    out_dir: Path
    cells: tuple[Cell, ...]
    judges: tuple[Path, ...]
    judge_models: int
    judge_providers: frozenset[str]
    """The providers the judges' models call, each bounded by ``[judging]``."""
    judged_items: int
    title: str | None = None
    """The report's title (default: the report's own)."""
    flat: bool = False
    """The demo's folders: each agent's one cell in ``OUT/AGENT`` and its one judge's verdicts
    in ``OUT/judging``, instead of ``OUT/cells/CELL`` and ``OUT/judging/JUDGE``."""

    @property
    def turns(self) -> int:
        return sum(c.turns for c in self.cells)

    @property
    def audio_hours(self) -> float:
        return sum(c.audio_s for c in self.cells) / 3600.0

    @property
    def judge_calls(self) -> int:
        contestants = len(self.spec.agents)
        if self.spec.mode == "teacher-forced":
            contestants += 1  # and the human reference
        pairs = contestants * (contestants - 1) // 2
        if self.spec.judging.pairs_per_item is not None:
            pairs = min(pairs, self.spec.judging.pairs_per_item)
        return 2 * pairs * self.judged_items * self.judge_models

    def run_dir(self, cell: Cell) -> Path:
        return cell_folder(self.out_dir, cell.key, cell.variant, flat=self.flat)

    def judging_dir(self, judge: Path) -> Path:
        return judging_folder(self.out_dir, judge, flat=self.flat)


def cell_folder(out_dir: Path, key: str, variant: str, *, flat: bool) -> Path:
    """A cell's run folder: ``OUT/cells/KEY``, or the demo's ``OUT/VARIANT`` (``flat``)."""
    return out_dir / variant if flat else out_dir / "cells" / key


def judging_folder(out_dir: Path, judge: Path, *, flat: bool) -> Path:
    """A judge's judging folder: ``OUT/judging/JUDGE``, or the demo's ``OUT/judging``."""
    return out_dir / "judging" if flat else out_dir / "judging" / slug(judge.stem)


def _played(scenarios: Sequence[str]) -> str:
    """The part of a cell's folder name that says which scenarios it plays."""
    return slug("+".join(scenarios)) if scenarios else "clean"


def _folder_name(name: str) -> str:
    """A folder name as a file system that ignores case compares it."""
    return name.casefold()


def _audio_s(
    items: tuple[Dialogue, ...], fixtures: Path, final_only: bool = False
) -> tuple[int, float]:
    try:
        manifest = load_manifest(fixtures)
    except InputError:
        manifest = None
    turns, seconds = 0, 0.0
    for d, k in plan_turns(items, final_only):
        text = d.turns[k].text
        entry = lookup_fixture(manifest, text) if manifest is not None else None
        said = entry.num_samples / entry.sample_rate if entry else WORD_S * len(text.split())
        turns, seconds = turns + 1, seconds + said + ANSWER_S
    return turns, seconds


def _callers(
    spec: CampaignSpec, here: Path | None, file: Path | None, sets: Sequence[tuple]
) -> tuple[SeekerSpec | None, dict[str, Persona]]:
    """A simulated campaign's seeker and every item's persona card (None and none for
    replays)."""
    if spec.mode != "simulated":
        return None, {}
    c = spec.converse
    seeker = load_seeker_spec((here or Path()) / c.seeker if c.seeker else None)
    given = (here or Path()) / c.personas if c.personas else None
    cards: dict[str, Persona] = {}
    for _, set_path, _, items in sets:
        cards |= personas_for(items, given, dialogues_path=set_path)
    return seeker, cards


def plan_campaign(file: Path, out_dir: Path | None = None) -> CampaignPlan:
    """Load everything the campaign names and lay out its cells; nothing runs."""
    spec = load_campaign(file)
    out_dir = out_dir or Path("reports") / "campaigns" / slug(spec.name)
    return lay_out(spec, out_dir, file=file, title=f"Campaign {spec.name}")


def lay_out(
    spec: CampaignSpec,
    out_dir: Path,
    *,
    file: Path | None,
    title: str | None = None,
    flat: bool = False,
) -> CampaignPlan:
    """Load everything ``spec`` names (paths relative to ``file``'s folder, or as given when
    there is no file) and lay out its cells; a problem names the file and the field."""
    here = file.parent if file is not None else None
    variants: list[tuple[str, AgentSpec, Path, float]] = []
    for i, a in enumerate(spec.agents):
        path = builtin.spec_path("agents", a.spec, base=here)
        overrides = dict(a.set)
        if a.name is not None:
            overrides["name"] = a.name
        agent = load_agent_spec(path, overrides=overrides)
        cpus = a.cpus or (REMOTE_CPUS if agent.remote is not None else PIPELINE_CPUS)
        if agent.name in [v[0] for v in variants]:
            raise InputError(
                f"agent name {agent.name!r} is given twice; give each variant its own name",
                file=file,
                field=f"agents.{i}.name",
            )
        # A cell's folder is named after the variant: names that differ only in punctuation
        # or case would share one (and corrupt it).
        for other, *_ in variants:
            if _folder_name(slug(other)) == _folder_name(slug(agent.name)):
                raise InputError(
                    f"variants {other!r} and {agent.name!r} would share the folder name "
                    f"{slug(agent.name)!r}; give them names that differ in letters or digits",
                    file=file,
                    field=f"agents.{i}.name",
                )
        variants.append((agent.name, agent, path, cpus))
    played_names: dict[str, int] = {}
    for s, entry in enumerate(spec.scenarios):
        for text in entry:
            parse_scenario(text)
        first = played_names.setdefault(_folder_name(_played(entry)), s)
        if first != s:
            raise InputError(
                f"scenario lists {first} and {s} would share the folder name "
                f"{_played(entry)!r}; list each set of scenarios once",
                file=file,
                field=f"scenarios.{s}",
            )
    sets: list[tuple[str, Path, Path, tuple[Dialogue, ...]]] = []
    seen_ids: dict[str, str] = {}
    for i, d in enumerate(spec.dialogues):
        path = builtin.dialogue_set(d.path, base=here)
        items = tuple(load_dialogues(path))
        items = tuple(demo_items(list(items), d.limit)) if d.limit else items
        for item in items:
            if item.id in seen_ids:
                raise InputError(
                    f"item {item.id!r} is also in {seen_ids[item.id]}: item ids must be "
                    "distinct across the campaign's sets",
                    file=file,
                    field=f"dialogues.{i}.path",
                )
            seen_ids[item.id] = d.path
        fixtures = (here or Path()) / d.fixtures if d.fixtures else BUILTIN_FIXTURES
        set_name = slug(path.stem)
        if _folder_name(set_name) in [_folder_name(s[0]) for s in sets]:
            set_name = f"{set_name}-{i + 1}"
        for other, other_path, *_ in sets:
            if _folder_name(other) == _folder_name(set_name):
                raise InputError(
                    f"sets {str(other_path)!r} and {str(path)!r} would share the folder name "
                    f"{set_name!r}; rename one of the files",
                    file=file,
                    field=f"dialogues.{i}",
                )
        sets.append((set_name, path, fixtures, items))
    judges = tuple(builtin.spec_path("judges", j, base=here) for j in spec.judges)
    for i, judge in enumerate(judges):
        if slug(judge.stem) in [slug(j.stem) for j in judges[:i]]:
            raise InputError(
                f"two judges are named {judge.stem!r}; each judge's folder is named after its "
                "file, so give them distinct file names",
                file=file,
                field=f"judges.{i}",
            )
    models = [m for j in judges for m in load_judge_spec(j)[0].judges]
    seeker, cards = _callers(spec, here, file, sets)
    cells = []
    for name, agent, path, cpus in variants:
        for set_name, set_path, fixtures, items in sets:
            turns, audio_s = _audio_s(items, fixtures, spec.final_only)
            turns, audio_s = turns * spec.repeat, audio_s * spec.repeat
            if seeker is not None:
                turns = len(items) * spec.converse.turns
                audio_s = turns * (ANSWER_S + CALLER_LINE_S)
            for s, scenarios in enumerate(spec.scenarios):
                played = _played(scenarios)
                first = set_name == sets[0][0] and s == 0
                shown = [set_name] if len(sets) > 1 else []
                shown += [" + ".join(scenarios) or "clean"] if len(spec.scenarios) > 1 else []
                cells.append(
                    Cell(
                        key=f"{slug(name)}--{set_name}--{played}",
                        label=name if first else f"{name} ({', '.join(shown)})",
                        variant=name,
                        agent=agent,
                        spec_path=path,
                        cpus=cpus,
                        dialogues_path=set_path,
                        fixtures_dir=fixtures,
                        items=items,
                        scenarios=scenarios,
                        judged=s == 0 and bool(judges),
                        turns=turns,
                        audio_s=audio_s,
                        seeker=seeker,
                        personas=tuple(cards[d.id] for d in items) if seeker else (),
                        call_turns=spec.converse.turns if seeker else 0,
                        repeats=spec.repeat,
                        final_only=spec.final_only,
                    )
                )
    judged_items = sum(len(items) for *_, items in sets) if judges else 0
    return CampaignPlan(
        spec,
        file,
        out_dir,
        tuple(cells),
        judges,
        len(models),
        frozenset(m.provider for m in models),
        judged_items,
        title,
        flat,
    )
