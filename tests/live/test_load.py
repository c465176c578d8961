"""Load mode: arrivals, the summary by concurrency with failures censored, and a real load run
against the scripted WebSocket agent on 127.0.0.1."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import timing
from typer.testing import CliRunner

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.cli import app
from voicebench.cli.present.load import load_table
from voicebench.errors import InputError
from voicebench.fixtures import load_manifest
from voicebench.live import LoadTurn, read_load, run_load, summarize_load
from voicebench.live.load import CALLS_FILE, load_pattern
from voicebench.live.load_summary import CallSpan
from voicebench.live.patterns import arrival_times
from voicebench.recordings import call_turns, read_recording
from voicebench.runlog import TurnError, TurnRecord
from voicebench.testing.scripted_voice import ScriptedVoiceAgent
from voicebench.timing.stalls import Playback, Stall


def test_arrivals_fixed_and_poisson():
    assert arrival_times(4, 8.0, "fixed", 0) == [0.0, 2.0, 4.0, 6.0]
    assert arrival_times(3, 0.0, "poisson", 0) == [0.0, 0.0, 0.0]
    a = arrival_times(2000, 2000.0, "poisson", 7)
    assert a == arrival_times(2000, 2000.0, "poisson", 7) and a[0] == 0.0
    assert np.mean(np.diff(a)) == pytest.approx(1.0, rel=0.1)  # mean gap = ramp / callers


def _turn(concurrency: int, ttfa: int | None, kind: str | None = None) -> LoadTurn:
    record = TurnRecord(
        run_id="r",
        contestant="remote/x",
        agent_name="x",
        dialogue_id="d",
        turn_index=1,
        final=True,
        user_text="u",
        timing=timing(ttfa) if ttfa else None,
        error=TurnError(kind=kind, reason="r") if kind else None,
        started_at="2026-01-01T00:00:00+00:00",
    )
    return LoadTurn(caller=0, call=0, concurrency=concurrency, offset_s=0.0, turn=record)


def test_each_band_counts_its_stalled_replies():
    stalled = Playback(audio_ms=3000.0, stalls=(Stall(at_ms=500, audio_ms=500, ms=600.0),))

    def played(concurrency: int, playback: Playback) -> LoadTurn:
        t = _turn(concurrency, 800)
        return t.model_copy(update={"turn": t.turn.model_copy(update={"playback": playback})})

    turns = [played(1, Playback(audio_ms=3000.0))] * 4 + [played(2, stalled)] * 2
    turns += [played(2, Playback(audio_ms=3000.0))] * 2
    one, two = summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=20).bands
    assert (one.stalled_replies, one.stalled_share, one.longest_stall_ms) == (0, 0.0, 0.0)
    assert (two.stalled_replies, two.longest_stall_ms) == (2, 600.0)
    assert two.stalled_share == pytest.approx(600 / 3600 / 2, abs=1e-4)
    table = load_table(summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=20), "load")
    assert list(table.columns[6].cells) == ["0.0%\n(0 ms)", "8.3%\n(600 ms)"]


def test_summary_censors_failures_and_finds_where_the_budget_breaks():
    turns = (
        [_turn(1, 800)] * 10
        + [_turn(2, 900)] * 9
        + [_turn(2, None, "timeout")]
        + [_turn(3, 1200)] * 10
        + [_turn(4, 1500)] * 5
        + [_turn(4, None, "closed_mid_turn")]
    )
    s = summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=20)
    by = {lv.concurrency: lv for lv in s.levels}
    assert s.turns == 36 and s.failed == 2
    assert s.failures == {"timeout": 1, "closed_mid_turn": 1}
    assert by[1].ttfa_p50_ms == 800 and by[1].within_budget == 1.0
    # The failed turn counts as 20 s, so it lifts the tail instead of vanishing.
    assert by[2].ttfa_p99_ms > 10_000 and by[2].ttfa_p50_ms == 900
    assert by[2].failed == 1 and by[2].within_budget == 0.9
    assert s.budget_breaks_at == 2  # p90 over 1,000 ms from 2 calls on
    assert (
        summarize_load(turns[:10], budget_ttfa_ms=1000, turn_timeout_s=20).budget_breaks_at is None
    )


def test_patterns_put_each_caller_on_the_line_when_declared():
    step = load_pattern(
        kind="step", callers=5, step_callers=2, step_hold_s=10, duration_s=40, ramp_s=1
    ).windows(seed=0)
    assert [w.arrive_s for w in step] == [0.0, 0.5, 10.0, 10.5, 20.0]
    assert {w.leave_s for w in step} == {40.0}
    spike = load_pattern(
        kind="spike", callers=6, spike_callers=4, spike_at_s=5, spike_s=3, duration_s=20, ramp_s=2
    ).windows(seed=0)
    assert [(w.arrive_s, w.leave_s) for w in spike] == [(0.0, 20.0), (1.0, 20.0)] + [(5.0, 8.0)] * 4
    poisson = load_pattern(callers=50, ramp_s=50, duration_s=60, arrivals="poisson", kind="soak")
    assert poisson.windows(3) == poisson.windows(3) != poisson.windows(4)  # drawn with the seed


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"kind": "step", "step_callers": 2}, "step_hold_s", "needs step_hold_s"),
        ({"kind": "step", "step_callers": 1, "step_hold_s": 20}, "", "never be reached"),
        (
            {"kind": "spike", "spike_callers": 9, "spike_at_s": 1, "spike_s": 1},
            "",
            "fewer than callers",
        ),
        ({"kind": "burst"}, "kind", "ramp"),
    ],
)
def test_a_bad_pattern_is_refused_naming_what_is_wrong(fields, field, says):
    from voicebench.errors import InputError

    with pytest.raises(InputError) as info:
        load_pattern(callers=4, duration_s=30, **fields)
    assert says in str(info.value) and field in str(info.value)


def _at(concurrency: int, ttfa: float, call: int, kind: str | None = None) -> LoadTurn:
    t = _turn(concurrency, ttfa, kind)
    return t.model_copy(update={"caller": call, "call": 0, "offset_s": float(concurrency)})


def test_the_breaking_point_has_an_interval_from_the_bands_around_it():
    rng = np.random.default_rng(0)
    # TTFA grows with concurrency: p90 crosses 1,000 ms between 8 and 10 calls in progress.
    turns = [
        _at(c, int(600 + 45 * c + rng.normal(0, 40)), call=100 * c + k // 4)
        for c in range(1, 17)
        for k in range(24)
    ]
    s = summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=20)
    assert [(b.low, b.high) for b in s.bands] == [(k, k + 1) for k in range(1, 17, 2)]
    for b in s.bands:
        # 12 calls a band: intervals for the median and the failed share, none for the p90
        assert b.ttfa_p50_ci[0] <= b.ttfa_p50_ms <= b.ttfa_p50_ci[1] and b.ttfa_p90_ci is None
        assert b.failure_ci is not None
        assert b.calls == 12 and b.turns == 48
    bp = s.breaking_point
    assert bp.concurrency in (7, 9) and bp.low <= bp.concurrency <= bp.high <= 11
    # Held everywhere: no breaking point, and none in (nearly) any resample.
    held = summarize_load(turns, budget_ttfa_ms=5000, turn_timeout_s=20).breaking_point
    assert held.concurrency is None and held.low is None and held.high is None
    # Failures alone break it: a tenth of the calls fail from 13 on, over a 5% failure budget.
    failing = [
        _at(
            t.concurrency,
            500,
            t.caller,
            "timeout" if t.concurrency >= 13 and t.caller % 10 == 0 else None,
        )
        for t in turns
    ]
    f = summarize_load(failing, budget_ttfa_ms=5000, turn_timeout_s=1)
    assert f.breaking_point.concurrency == 13 and f.bands[-1].failure_share > 0.05


def test_time_windows_show_ttfa_over_the_load():
    turns = [
        _at(2, 500 + 10 * k, call=k).model_copy(update={"offset_s": float(k)}) for k in range(40)
    ]
    w = summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=20).windows
    assert len(w) == 4 and sum(x.turns for x in w) == 40
    assert w[0].ttfa_p50_ms < w[-1].ttfa_p50_ms  # a drift the soak shows


@pytest.mark.slow
async def test_load_against_the_scripted_agent(tmp_path: Path, short_set):
    items = [d for d in short_set.dialogues if len(d.seeker_turn_indices) == 2][:3]
    manifest = load_manifest(short_set.fixtures_dir)
    out = tmp_path / "load"
    async with ScriptedVoiceAgent(delay_ms=700, faults=["refuse"]) as agent:
        spec = AgentSpec(
            name="scripted-voice",
            family="scripted",
            remote=RemoteSpec(url=agent.url, quiet_secs=0.8),
        )
        turns = await run_load(
            spec,
            items,
            manifest,
            short_set.fixtures_dir,
            out,
            callers=3,
            ramp_s=1.0,
            duration_s=2.0,
            turn_timeout_s=10,
        )
    header, saved = read_load(out)
    assert saved == turns and header.callers == 3
    assert header.pattern.kind == "ramp" and [w.arrive_s for w in header.windows] == [
        0.0,
        pytest.approx(1 / 3),
        pytest.approx(2 / 3),
    ]
    # Every call is on the timeline: when it started and ended, and whether it was answered.
    from voicebench._jsonl import read_models

    spans = read_models(out / CALLS_FILE, CallSpan)
    assert {(s.caller, s.call) for s in spans} == {(t.caller, t.call) for t in turns}
    assert [s.answered for s in spans].count(False) == 1  # the refused one
    assert all(0 <= s.start_s < s.end_s for s in spans)
    # The first connection is refused: that call fails on its first turn; the others answer.
    failed = [t for t in turns if t.turn.error]
    assert [t.turn.error.kind for t in failed] == ["handshake"]
    ok = [t for t in turns if t.turn.error is None]
    assert len(ok) >= 4 and max(t.concurrency for t in turns) >= 2
    assert all(700 - 5 <= t.turn.timing.ttfa_ms < 700 + 300 for t in ok)
    summary = summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=10)
    assert summary.failures == {"handshake": 1}


async def test_load_callers_play_scenarios_and_barge_in_within_their_call(
    tmp_path: Path, short_set
):
    items = [d for d in short_set.dialogues if len(d.seeker_turn_indices) == 2][:2]
    manifest = load_manifest(short_set.fixtures_dir)
    out = tmp_path / "load"
    async with ScriptedVoiceAgent(delay_ms=300, stop_ms=150) as agent:
        spec = AgentSpec(name="s", family="s", remote=RemoteSpec(url=agent.url, quiet_secs=0.8))
        turns = await run_load(
            spec,
            items,
            manifest,
            short_set.fixtures_dir,
            out,
            callers=2,
            ramp_s=0.5,
            duration_s=1.0,
            turn_timeout_s=20,
            scenarios=["barge-in:delay_ms=900"],
            seed=1,
            record_calls=True,
        )
    header, _ = read_load(out)
    assert header.scenarios == ("barge-in:delay_ms=900",)
    by_turn = {(t.turn.dialogue_id, t.turn.turn_index): t.turn for t in turns}
    assert len(by_turn) == 4 and all(r.error is None for r in by_turn.values())
    for d in items:
        first, second = (by_turn[(d.id, k)] for k in d.seeker_turn_indices)
        assert first.scenario is None  # nothing to talk over yet
        s = second.scenario
        assert s is not None and s.name == "barge-in" and s.agent_speaking and s.yielded
        assert 100 < s.stop_ms < 250  # the agent stops 150 ms after the seeker's first sound
    # Asked for, each call is written as it happened; read back, it gives the call's TTFAs
    # and the agent's stop as the load measured them.
    for calls in {(t.caller, t.call) for t in turns}:
        played = [t.turn for t in turns if (t.caller, t.call) == calls]
        (name,) = {r.call.path for r in played}
        assert name.startswith(f"calls/c{calls[0]:03d}-{calls[1]:03d}__")
        recording = read_recording(out / name)
        heard = call_turns(recording)
        assert [h.barge_in for h in heard] == [False, True]
        for r, h in zip(played, heard, strict=True):
            assert h.latency_s * 1000 == pytest.approx(r.timing.ttfa_ms, abs=20)
        assert heard[1].stop_s * 1000 == pytest.approx(played[1].scenario.stop_ms, abs=20)
    with pytest.raises(InputError, match="one-process"):
        await run_load(
            spec,
            items,
            manifest,
            short_set.fixtures_dir,
            tmp_path / "ray",
            callers=2,
            duration_s=1.0,
            backend="ray",
            record_calls=True,
        )


def test_load_command_refuses_bad_targets():
    result = CliRunner().invoke(app, ["load", "--agent", "http://127.0.0.1:1"])
    assert result.exit_code == 2 and "--agent" in result.output and "ws://" in result.output
    result = CliRunner().invoke(app, ["load", "--agent", "ws://127.0.0.1:1", "--arrivals", "burst"])
    assert result.exit_code == 2 and "--arrivals" in result.output
    result = CliRunner().invoke(app, ["load", "--agent", "agents/local.toml", "--duration", "5"])
    assert result.exit_code == 2 and "remote" in result.output


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again at once: nobody listens there


def test_callers_back_off_and_load_stops_when_no_call_is_answered(tmp_path: Path):
    url = f"ws://127.0.0.1:{_closed_port()}"
    # Two seconds: the caller dials, waits, dials again... a handful of times, not thousands.
    short = CliRunner().invoke(
        app,
        ["load", "--agent", url, "--callers", "1", "--duration", "2", "--out", str(tmp_path / "a")],
    )
    dialled = read_load(tmp_path / "a")[1]
    assert short.exit_code == 1, short.output
    assert 2 <= len(dialled) <= 5
    assert {t.turn.error.kind for t in dialled if t.turn.error} == {"connection_refused"}
    # A minute asked for: it stops once no call has been answered in the first seconds,
    # saying so in one line, and keeps what it measured.
    long = CliRunner().invoke(
        app,
        [
            "load",
            "--agent",
            url,
            "--callers",
            "2",
            "--duration",
            "60",
            "--out",
            str(tmp_path / "b"),
        ],
    )
    assert long.exit_code == 1, long.output
    line = " ".join(long.output.split())
    assert "the agent answered none of" in line and "load stopped" in line
    assert f"connection_refused: {url}" in line
    kept = read_load(tmp_path / "b")[1]
    assert 2 <= len(kept) <= 12 and all(t.turn.error is not None for t in kept)
    summary = (tmp_path / "b" / "summary.json").read_text()
    assert '"connection_refused"' in summary


class _SlowToOpen:
    """A TCP relay to ``port`` that holds each new connection ``hold_s`` before passing it on,
    as a caller's first connection on a machine short of cores can take seconds to open."""

    def __init__(self, port: int, hold_s: float) -> None:
        import socket
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._to, self._hold = port, hold_s
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                inside, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(inside,), daemon=True).start()

    def _relay(self, inside) -> None:
        import socket
        import threading
        import time

        time.sleep(self._hold)
        outside = socket.create_connection(("127.0.0.1", self._to))

        def pipe(a, b) -> None:
            with contextlib.suppress(OSError):
                while data := a.recv(65536):
                    b.sendall(data)
            with contextlib.suppress(OSError):
                b.shutdown(socket.SHUT_WR)

        threading.Thread(target=pipe, args=(outside, inside), daemon=True).start()
        pipe(inside, outside)

    def close(self) -> None:
        self.listener.close()


async def test_a_call_still_opening_is_not_given_up_on(tmp_path: Path, short_set, monkeypatch):
    # The load gives up after GIVE_UP_S only once a call has ended unanswered: here every
    # connection takes longer than that to open, and is then answered.
    from voicebench.live import callers

    monkeypatch.setattr(callers, "GIVE_UP_S", 0.3)
    items = [d for d in short_set.dialogues if len(d.seeker_turn_indices) == 2][:1]
    async with ScriptedVoiceAgent(delay_ms=300) as agent:
        assert agent.url is not None
        relay = _SlowToOpen(int(agent.url.rsplit(":", 1)[1]), hold_s=1.0)
        try:
            spec = AgentSpec(
                name="scripted-voice",
                family="scripted",
                remote=RemoteSpec(url=f"ws://127.0.0.1:{relay.port}", quiet_secs=0.8),
            )
            turns = await run_load(
                spec,
                items,
                load_manifest(short_set.fixtures_dir),
                short_set.fixtures_dir,
                tmp_path / "load",
                callers=1,
                ramp_s=0.0,
                duration_s=0.5,
                turn_timeout_s=10,
            )
        finally:
            relay.close()
    assert turns and all(t.turn.error is None for t in turns)
