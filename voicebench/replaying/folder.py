"""A run folder's life, the same for a replay and for simulated calls: the folder is claimed,
the seeker audio it needs is made, its header is written (or the run it holds is reopened, its
finished turns read back), turns are appended as they finish, and the machine's load is read
meanwhile and kept in the header beside the machine (``voicebench.host``); the agent is started
when a turn needs it and again after a turn that stopped it, and stopped at the end.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from voicebench._folder import claimed
from voicebench._version import __version__
from voicebench.agent.interface import Agent, AgentFactory
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue
from voicebench.fixtures import Manifest, synthesize_fixtures
from voicebench.fixtures.manifest import file_sha256
from voicebench.host import HostSampler
from voicebench.runlog import ReplayMode, RunHeader, RunStore, TurnRecord
from voicebench.scenarios.apply import backchannel_texts


def run_header(
    spec: AgentSpec,
    *,
    out_dir: Path,
    spec_path: Path,
    dialogues: Sequence[Dialogue],
    dialogues_path: Path,
    mode: ReplayMode,
    fixtures_dir: Path,
    turn_timeout_s: float,
    scenarios: Sequence[str],
    seed: int,
    seeker: str | None = None,
    final_only: bool = False,
    repeats: int = 1,
) -> RunHeader:
    """A new run folder's header (a replay's, or a converse's with its ``seeker``)."""
    return RunHeader(
        run_id=out_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        voicebench_version=__version__,
        agent=spec,
        agent_spec_path=str(spec_path),
        dialogues_path=str(dialogues_path),
        dialogues_sha256=file_sha256(dialogues_path),
        dialogue_ids=tuple(d.id for d in dialogues),
        mode=mode,
        fixtures_dir=str(fixtures_dir),
        turn_timeout_s=turn_timeout_s,
        scenarios=tuple(scenarios),
        seed=seed,
        seeker=seeker,
        final_only=final_only,
        repeats=repeats,
    )


@dataclass
class OpenRun:
    store: RunStore
    records: list[TurnRecord]
    """The turns already finished (a resumed run's), in order."""
    manifest: Manifest
    """The seeker audio made for the run (its fixture folder's manifest)."""


@contextmanager
def open_run(
    out_dir: Path,
    header: RunHeader,
    *,
    spoken: Sequence[Dialogue],
    played: Sequence,
    sampler: HostSampler | None = None,
) -> Iterator[OpenRun]:
    """``out_dir`` claimed while the run lasts, the fixture audio of ``spoken`` made (with the
    words the ``played`` scenarios' callers say over the agent), and ``header`` written, or the
    run the folder holds reopened (when it is the same run) with its finished turns. The host
    is read by ``sampler`` (this machine's, unless given) while the turns are played."""
    with claimed(out_dir, "run"):
        made = synthesize_fixtures(
            spoken, Path(header.fixtures_dir), extra=backchannel_texts(played)
        )
        sampler = sampler or HostSampler()
        store = RunStore(out_dir, host=sampler.host)
        records = store.open(header)
        with sampler:
            try:
                yield OpenRun(store, records, made.manifest)
            finally:
                sampler.stop()
                store.close()


def agent_class(spec: AgentSpec) -> AgentFactory:
    """What speaks to the agent a spec names: the remote caller for a ``[remote]`` spec, the
    speech-to-speech pipeline for an ``[s2s]`` one, the in-process LiveKit session for a
    ``[livekit]`` one, the local pipecat pipeline otherwise."""
    if spec.remote is not None:
        from voicebench.remote import caller_class

        return caller_class(spec.remote.protocol)
    if spec.s2s is not None:
        from voicebench.pipeline.s2s import SpeechToSpeechAgent

        return SpeechToSpeechAgent
    if spec.livekit is not None:
        from voicebench.livekit.agent import LiveKitAgent

        return LiveKitAgent
    from voicebench.pipeline.agent import VoiceAgent

    return VoiceAgent


class AgentSlot:
    """The run's agent: started when a turn needs it, stopped after a turn that ended it
    (a failure, or a caller who hung up), and stopped when the run ends (``async with``)."""

    def __init__(self, spec: AgentSpec, factory: AgentFactory | None = None) -> None:
        self._spec, self._factory = spec, factory or agent_class(spec)
        self._agent: Agent | None = None

    async def get(self) -> tuple[Agent, bool]:
        """The agent, and whether it was started for this turn (a cold turn). One that fails
        to start is stopped too (it may have started helpers on the way)."""
        if self._agent is not None:
            return self._agent, False
        self._agent = self._factory(self._spec)
        await self._agent.__aenter__()
        return self._agent, True

    async def stop(self) -> None:
        """Stop the agent; the next turn starts a new one."""
        agent, self._agent = self._agent, None
        if agent is not None:
            await agent.__aexit__(None, None, None)

    async def __aenter__(self) -> AgentSlot:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
