"""``replay``: dialogues spoken through an agent, every turn timed, from Python; ``converse``:
simulated callers talking with it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench import builtin
from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.api.results import Calls, PathLike, Run, run_sync
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.calling import converse as converse_calls
from voicebench.calling import load_seeker_spec
from voicebench.calling.records import CallProgress
from voicebench.dialogues import Dialogue, load_dialogues, save_dialogues
from voicebench.dialogues.personas import personas_for
from voicebench.errors import InputError
from voicebench.remote.sip import sip_agent_spec
from voicebench.remotespec import SIP_SCHEMES
from voicebench.replaying import RunProgress, select_dialogues
from voicebench.replaying import replay as replay_dialogues
from voicebench.runlog import REPLAY_MODES, ReplayMode, default_run_dir

MODES = tuple(m.value for m in REPLAY_MODES)


def _agent(agent: AgentSpec | PathLike) -> tuple[AgentSpec, Path | None]:
    if isinstance(agent, AgentSpec):
        return agent, None
    if str(agent).startswith(SIP_SCHEMES):
        return sip_agent_spec(str(agent)), None
    path = builtin.spec_path("agents", agent)
    return load_agent_spec(path), path


def run_folder(agent: AgentSpec | PathLike, *, prefix: str = "") -> Path:
    """Where ``replay`` (``prefix=""``) or ``converse`` (``"calls-"``) writes unless told:
    ``reports/runs/PREFIXAGENT-TIMESTAMP``, a new one each second."""
    return default_run_dir(_agent(agent)[0].name, prefix=prefix)


async def replay_async(
    agent: AgentSpec | PathLike,
    dialogues: PathLike | Sequence[Dialogue] | None = None,
    *,
    out: PathLike | None = None,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    mode: str = "teacher-forced",
    fixtures: PathLike | None = None,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[RunProgress], None] | None = None,
    final_only: bool = False,
    repeat: int = 1,
) -> Run:
    """Replay dialogues as speech through an agent and time every turn; see ``replay``."""
    spec, spec_path = _agent(agent)
    if mode not in MODES:
        raise InputError(f"must be one of: {', '.join(MODES)}", field="mode")
    replay_mode = ReplayMode(mode)
    if final_only and replay_mode is not ReplayMode.TEACHER_FORCED:
        raise InputError(
            "final_only replays each item's last turn on its written history: teacher-forced only",
            field="mode",
        )
    out_dir = Path(out) if out is not None else default_run_dir(spec.name)
    if dialogues is None or isinstance(dialogues, str | Path):
        set_path = builtin.dialogue_set(dialogues) if dialogues is not None else builtin.DIALOGUES
        items = load_dialogues(set_path)
    else:  # objects: kept beside the run, where judging reads the set again
        items = list(dialogues)
        set_path = out_dir / "dialogues.jsonl"
        out_dir.mkdir(parents=True, exist_ok=True)
        save_dialogues(items, set_path)
    if spec_path is None:  # a spec given as an object: kept as JSON beside the run
        out_dir.mkdir(parents=True, exist_ok=True)
        spec_path = out_dir / "agent.json"
        spec_path.write_text(spec.model_dump_json(indent=2) + "\n")
    chosen = select_dialogues(items, limit=limit, ids=ids, file=set_path)
    await replay_dialogues(
        spec,
        spec_path=spec_path,
        dialogues=chosen,
        dialogues_path=set_path,
        fixtures_dir=Path(fixtures) if fixtures is not None else builtin.FIXTURES,
        out_dir=out_dir,
        mode=replay_mode,
        turn_timeout_s=turn_timeout_s,
        progress=progress,
        scenarios=scenarios,
        seed=seed,
        final_only=final_only,
        repeats=repeat,
    )
    return Run.load(out_dir)


def replay(
    agent: AgentSpec | PathLike,
    dialogues: PathLike | Sequence[Dialogue] | None = None,
    *,
    out: PathLike | None = None,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    mode: str = "teacher-forced",
    fixtures: PathLike | None = None,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[RunProgress], None] | None = None,
    final_only: bool = False,
    repeat: int = 1,
) -> Run:
    """Replay dialogues as speech through an agent and time every turn (TTFT, TTFA, stages).

    Args:
        agent: an agent spec: a TOML path, a shipped spec's name (``"local"``,
            ``"scripted"``...) or a loaded ``AgentSpec``.
        dialogues: a dialogue set (JSONL path) or ``Dialogue`` objects; default the
            built-in set.
        out: the run folder (default ``reports/runs/AGENT-TIMESTAMP`` under the current
            folder). An existing run folder is resumed: finished turns are kept.
        limit: replay only the first ``limit`` items.
        ids: replay these items (by id).
        scenarios: ``--scenario`` texts (``"barge-in"``, ``"noise:snr_db=10"``...); each turn
            plays one, drawn with ``seed``.
        mode: ``"teacher-forced"`` (the dialogue's own history) or ``"free-running"``.
        fixtures: the audio fixture folder (default the built-in one); missing audio is
            synthesized there.
        turn_timeout_s: seconds before a turn is recorded as a timeout.
        progress: called after every turn with a ``RunProgress``.
        final_only: replay only each item's final seeker turn, the one whose reply is
            judged (teacher-forced only): a run for judging in a fraction of the time.
        repeat: replay every item this many times, one whole pass after another; each turn
            records its pass, each pass draws its scenarios with its own seed, and the run's
            figures show the spread between passes (``check(..., every_repeat=True)`` asks
            that every pass meets a gate: pass^k).

    Returns:
        The run, with its records and ``figures``.
    """
    return run_sync(
        replay_async(
            agent,
            dialogues,
            out=out,
            limit=limit,
            ids=ids,
            scenarios=scenarios,
            seed=seed,
            mode=mode,
            fixtures=fixtures,
            turn_timeout_s=turn_timeout_s,
            progress=progress,
            final_only=final_only,
            repeat=repeat,
        )
    )


async def converse_async(
    agent: AgentSpec | PathLike,
    dialogues: PathLike | None = None,
    *,
    seeker: PathLike | None = None,
    personas: PathLike | None = None,
    out: PathLike | None = None,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    turns: int = 6,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[CallProgress], None] | None = None,
) -> Calls:
    """Simulated calls with the agent, one per item; see ``converse``."""
    if turns < 1:
        raise InputError("must be at least 1", field="turns")
    spec, spec_path = _agent(agent)
    seeker_spec = load_seeker_spec(seeker)
    set_path = builtin.dialogue_set(dialogues) if dialogues is not None else builtin.DIALOGUES
    chosen = select_dialogues(load_dialogues(set_path), limit=limit, ids=ids, file=set_path)
    cards = personas_for(
        chosen, Path(personas) if personas is not None else None, dialogues_path=set_path
    )
    out_dir = Path(out) if out is not None else default_run_dir(spec.name, prefix="calls-")
    if spec_path is None:
        out_dir.mkdir(parents=True, exist_ok=True)
        spec_path = out_dir / "agent.json"
        spec_path.write_text(spec.model_dump_json(indent=2) + "\n")
    await converse_calls(
        spec,
        spec_path=spec_path,
        dialogues=chosen,
        dialogues_path=set_path,
        personas=cards,
        seeker_spec=seeker_spec,
        out_dir=out_dir,
        turns=turns,
        seed=seed,
        scenarios=scenarios,
        turn_timeout_s=turn_timeout_s,
        progress=progress,
    )
    return Calls.load(out_dir)


def converse(
    agent: AgentSpec | PathLike,
    dialogues: PathLike | None = None,
    *,
    seeker: PathLike | None = None,
    personas: PathLike | None = None,
    out: PathLike | None = None,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    turns: int = 6,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[CallProgress], None] | None = None,
) -> Calls:
    """Simulated calls: an LLM plays each item's seeker (its persona card) live against the
    agent, every agent turn timed as a replayed one.

    Args:
        agent: an agent spec (a TOML path, a shipped name, or an ``AgentSpec``).
        dialogues: the items whose personas call (default: the built-in set).
        seeker: a seeker spec (TOML with an ``[llm]`` table; default: the packaged
            Qwen2.5-Coder-1.5B on llama.cpp).
        personas: persona cards (JSONL; default: the built-in cards; an item with no card
            gets one derived from it).
        out: the folder (default ``reports/runs/calls-AGENT-TIMESTAMP``); an existing one is
            resumed, call by call.
        limit: call only the first ``limit`` items.
        ids: call only these items, by id.
        turns: the most seeker lines per call.
        scenarios: scenarios each agent turn plays, as for ``replay``.
        seed: fixes each turn's scenario draw and the seeker's cache key.

    Returns:
        ``Calls``: the run (every agent turn) and each finished call's record.
    """
    return run_sync(
        converse_async(
            agent,
            dialogues,
            seeker=seeker,
            personas=personas,
            out=out,
            limit=limit,
            ids=ids,
            turns=turns,
            scenarios=scenarios,
            seed=seed,
            turn_timeout_s=turn_timeout_s,
            progress=progress,
        )
    )
