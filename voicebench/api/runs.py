"""``replay``: dialogues spoken through an agent, every turn timed, from Python."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from voicebench import builtin
from voicebench.api.results import PathLike, Run, run_sync

if TYPE_CHECKING:
    from voicebench.agentspec import AgentSpec
    from voicebench.dialogues import Dialogue
    from voicebench.replaying import RunProgress


def _agent(agent: AgentSpec | PathLike) -> tuple[AgentSpec, Path | None]:
    from voicebench.agentspec import AgentSpec, load_agent_spec

    if isinstance(agent, AgentSpec):
        return agent, None
    path = builtin.spec_path("agents", agent)
    return load_agent_spec(path), path


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
    turn_timeout_s: float = 60.0,
    progress: Callable[[RunProgress], None] | None = None,
) -> Run:
    """Replay dialogues as speech through an agent and time every turn; see ``replay``."""
    from voicebench.dialogues import load_dialogues, save_dialogues
    from voicebench.errors import InputError
    from voicebench.replaying import replay as replay_dialogues
    from voicebench.replaying import select_dialogues
    from voicebench.runlog import ReplayMode, default_run_dir

    spec, spec_path = _agent(agent)
    try:
        replay_mode = ReplayMode(mode)
    except ValueError:
        choices = ", ".join(m.value for m in ReplayMode)
        raise InputError(f"must be one of: {choices}", field="mode") from None
    out_dir = Path(out) if out is not None else default_run_dir(spec.name)
    if dialogues is None or isinstance(dialogues, str | Path):
        set_path = Path(dialogues) if dialogues is not None else builtin.DIALOGUES
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
    turn_timeout_s: float = 60.0,
    progress: Callable[[RunProgress], None] | None = None,
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
        )
    )
