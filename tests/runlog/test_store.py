"""The run log: durable appends, partial lines, resume checks, version checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hosts import host

from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.errors import InputError, RunError
from voicebench.fixtures.manifest import load_manifest
from voicebench.metrics import summarize
from voicebench.runlog import (
    RunHeader,
    RunStore,
    TurnError,
    TurnRecord,
    read_header,
    read_turns,
)
from voicebench.timing import TurnTiming

MS = 1_000_000


def header(**over) -> RunHeader:
    base = dict(
        run_id="r1",
        created_at="2026-01-01T00:00:00+00:00",
        voicebench_version="0.1.0",
        agent=AgentSpec(name="a", family="scripted", llm=LLMSpec(provider="scripted", model="m")),
        agent_spec_path="agents/a.toml",
        dialogues_path="d.jsonl",
        dialogues_sha256="0" * 64,
        dialogue_ids=("d1",),
        fixtures_dir="audio_fixtures",
    )
    base.update(over)
    return RunHeader(**base)


def record(k: int, ttft_ms: int | None = 300, error: TurnError | None = None) -> TurnRecord:
    timing = None
    if ttft_ms is not None:
        timing = TurnTiming(
            speech_end_ns=0,
            vad_stop_ns=600 * MS,
            transcript_ns=1000 * MS,
            llm_request_ns=1001 * MS,
            llm_first_token_ns=(1001 + ttft_ms) * MS,
            tts_request_ns=1400 * MS,
            tts_first_audio_ns=1450 * MS,
            audio_out_ns=1500 * MS,
        )
    return TurnRecord(
        run_id="r1",
        contestant="scripted/m",
        agent_name="a",
        dialogue_id="d1",
        turn_index=k,
        final=False,
        user_text="hi",
        timing=timing,
        error=error,
        started_at="2026-01-01T00:00:00+00:00",
    )


def test_records_round_trip_and_a_killed_partial_line_is_dropped_on_reopen(tmp_path: Path):
    store = RunStore(tmp_path / "run")
    assert store.open(header()) == []
    store.append(record(1))
    store.append(record(3))
    with (store.dir / "turns.jsonl").open("a") as fh:
        fh.write('{"schema_version": 1, "run_id": "r1", "contes')  # killed mid-write
    assert [r.turn_index for r in read_turns(store.dir)] == [1, 3]
    again = RunStore(tmp_path / "run").open(header())
    assert [r.turn_index for r in again] == [1, 3]
    assert (store.dir / "turns.jsonl").read_text().count("\n") == 2
    assert read_header(store.dir) == header()
    assert again[0].timing.ttft_ms == 300.0


def test_resuming_with_a_different_agent_or_dialogue_set_is_refused(tmp_path: Path):
    RunStore(tmp_path).open(header())
    other = header(dialogue_ids=("d1", "d2"))
    with pytest.raises(RunError, match="dialogue_ids differs"):
        RunStore(tmp_path).open(other)


def test_a_newer_schema_version_is_refused_naming_file_and_field(tmp_path: Path):
    store = RunStore(tmp_path)
    store.open(header())
    store.append(record(1, 200))
    data = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**data, "schema_version": 99}))
    with pytest.raises(InputError, match=r"run\.json: schema_version: .*version 99 is newer"):
        read_header(tmp_path)
    line = json.loads((tmp_path / "turns.jsonl").read_text())
    (tmp_path / "turns.jsonl").write_text(json.dumps({**line, "schema_version": 99}) + "\n")
    with pytest.raises(InputError, match=r"turns\.jsonl: line 1: schema_version: .*upgrade"):
        read_turns(tmp_path)
    # the run log must say its version: a line without one is not guessed at
    unversioned = {k: v for k, v in line.items() if k != "schema_version"}
    (tmp_path / "turns.jsonl").write_text(json.dumps(unversioned) + "\n")
    with pytest.raises(InputError, match=r"turns\.jsonl: line 1: schema_version: .*missing"):
        read_turns(tmp_path)
    (tmp_path / "manifest.json").write_text('{"schema_version": 2, "entries": {}}')
    with pytest.raises(InputError, match=r"manifest\.json: schema_version: .*version 2 is newer"):
        load_manifest(tmp_path)


def test_every_versioned_format_checks_its_version():
    """Every record that carries schema_version is one reader's: the run log, verdicts and the
    judging header, ratings, reports, fixture manifests, strategy labels, load folders."""
    import voicebench.fixtures.manifest
    import voicebench.judging.models
    import voicebench.live.load
    import voicebench.rating.table
    import voicebench.reporting.models
    import voicebench.strategies.label  # noqa: F401
    from voicebench._model import Versioned

    formats = {c.__name__: c for c in Versioned.__subclasses__()}
    assert set(formats) >= {
        "RunHeader",
        "TurnRecord",
        "Verdict",
        "JudgingHeader",
        "RatingTable",
        "Report",
        "Manifest",
        "ReplyStrategies",
        "LoadHeader",
    }
    for name, model in formats.items():
        field = model.model_fields["schema_version"]
        assert field.default in model.READABLE and field.default == max(model.READABLE), name


def test_summary_counts_failures_and_the_ttft_budget_share():
    recs = [
        record(1, 200),
        record(3, 450),
        record(5, 900),
        record(7, None, TurnError(kind="timeout", reason="x")),
    ]
    s = summarize(recs)
    assert (s.turns, s.failed) == (4, 1)
    assert s.ttft_within_budget == pytest.approx(2 / 3)
    ttft = next(r for r in s.rows if r.name == "TTFT")
    assert (ttft.n, ttft.p50) == (3, 450.0)
    ttfa = next(r for r in s.rows if r.name == "TTFA")
    assert ttfa.p50 == 1500.0


def test_a_run_of_schema_1_still_loads_and_reports(tmp_path: Path):
    # Written before turn_hold: version 1 on every line, no llm_release_ns in the timing.
    store = RunStore(tmp_path)
    store.open(header())
    store.append(record(1, 300))
    head = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**head, "schema_version": 1}))
    [line] = [json.loads(x) for x in (tmp_path / "turns.jsonl").read_text().splitlines()]
    line["timing"].pop("llm_release_ns")
    (tmp_path / "turns.jsonl").write_text(json.dumps({**line, "schema_version": 1}) + "\n")
    assert read_header(tmp_path).schema_version == 1
    [turn] = read_turns(tmp_path)
    assert turn.schema_version == 1 and turn.timing.ttft_ms == 300.0
    assert turn.timing.stages_ms["turn_hold"] is None
    assert sum(v for v in turn.timing.stages_ms.values() if v is not None) == turn.timing.ttfa_ms
    assert summarize([turn]).turns == 1


def test_a_run_of_schema_2_loads_with_no_audio_hold_and_no_lead_trim(tmp_path: Path):
    # Written before audio holds: version 2, no audio_release_ns, no tts.trim_lead in the spec.
    store = RunStore(tmp_path)
    store.open(header())
    store.append(record(1, 300))
    head = json.loads((tmp_path / "run.json").read_text())
    head["agent"]["tts"].pop("trim_lead")
    head["agent"]["turn"].pop("hold")
    (tmp_path / "run.json").write_text(json.dumps({**head, "schema_version": 2}))
    [line] = [json.loads(x) for x in (tmp_path / "turns.jsonl").read_text().splitlines()]
    line["timing"].pop("audio_release_ns")
    (tmp_path / "turns.jsonl").write_text(json.dumps({**line, "schema_version": 2}) + "\n")
    old = read_header(tmp_path)
    assert old.schema_version == 2 and old.agent.tts.trim_lead is False
    assert old.agent.turn.hold == "text"
    [turn] = read_turns(tmp_path)
    assert turn.timing.stages_ms["audio_hold"] is None and turn.timing.ttft_ms == 300.0
    assert sum(v for v in turn.timing.stages_ms.values() if v is not None) == turn.timing.ttfa_ms


def test_a_run_json_without_hosts_reads_as_before(tmp_path: Path):
    """A run made before hosts were recorded: its run.json has no ``hosts`` and loads with
    none; a run written with no host to record writes none."""
    store = RunStore(tmp_path)
    store.open(header())
    store.append(record(1))
    store.close()
    data = json.loads((tmp_path / "run.json").read_text())
    assert "hosts" not in data
    old = read_header(tmp_path)
    assert old == header() and old.hosts == ()


def test_each_sitting_records_its_host_as_its_turns_finish(tmp_path: Path):
    readings = iter(range(1, 100))

    def sitting(cpu_model: str):
        return lambda: host(cpu_model=cpu_model, load_mean=float(next(readings)))

    store = RunStore(tmp_path, host=sitting("first"))
    store.open(header())
    assert "hosts" not in json.loads((tmp_path / "run.json").read_text())  # nothing measured yet
    store.append(record(1))
    assert [h.load.load_mean for h in read_header(tmp_path).hosts] == [1.0]
    store.append(record(3))
    store.close()  # the last reading
    assert [h.load.load_mean for h in read_header(tmp_path).hosts] == [3.0]
    # A resume that finishes nothing adds no host; one that does adds its own.
    idle = RunStore(tmp_path, host=sitting("idle"))
    idle.open(header())
    idle.close()
    again = RunStore(tmp_path, host=sitting("second"))
    again.open(header())
    again.append(record(5))
    again.close()
    hosts = read_header(tmp_path).hosts
    assert [(h.cpu_model, h.load.load_mean) for h in hosts] == [("first", 3.0), ("second", 5.0)]
    assert [r.turn_index for r in read_turns(tmp_path)] == [1, 3, 5]
