"""A replay over SIP against real SIP software: voicebench calls baresip (which answers by
itself and plays a known recording: silence, then a 440 Hz tone) straight and through
kamailio, times the turn, and hears the tone where the recording puts it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from processes import USER_PYTEST, user_env
from sip_tools import baresip, kamailio, self_signed
from test_remote import _replay

from voicebench.agentspec import AgentSpec
from voicebench.fixtures.audio import write_wav
from voicebench.remotespec import RemoteSpec, SipSettings

pytestmark = pytest.mark.slow

TONE_AT_S = 4.0
"""Where the tone starts in baresip's recording: after the caller's first turn has ended."""


def recording(path: Path) -> None:
    rate = 8_000
    pcm = np.zeros(int(12 * rate), np.int16)
    t = np.arange(rate) / rate
    start = int(TONE_AT_S * rate)
    pcm[start : start + rate] = (0.3 * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    write_wav(path, pcm, rate)


def sip_agent(uri: str, **sip) -> AgentSpec:
    remote = RemoteSpec(
        url=uri, protocol="sip", quiet_secs=1.0, sip=SipSettings(**sip) if sip else None
    )
    return AgentSpec(name="phone-bot", family="sip", remote=remote)


def dominant_hz(pcm: np.ndarray, rate: int = 16_000) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64)))
    return float(np.fft.rfftfreq(pcm.size, 1 / rate)[int(np.argmax(spectrum))])


async def test_a_call_to_baresip_is_replayed_and_its_recording_heard(tmp_path: Path, short_set):
    recording(tmp_path / "prompt.wav")
    with baresip(tmp_path / "bob", tmp_path / "prompt.wav") as bob:
        (record,) = await _replay(sip_agent(bob.uri), tmp_path / "run", short_set, final_only=True)
    assert record.error is None, record.error
    assert record.timing is not None and record.timing.ttfa_ms is not None
    assert record.contestant == "remote/phone-bot"
    # what was heard after the end of speech is the recording's tone
    heard = np.frombuffer((tmp_path / "run" / record.audio_path).read_bytes()[44:], np.int16)
    assert abs(dominant_hz(heard) - 440) < 10
    assert "session closed" in bob.said()  # our BYE


async def test_a_call_to_baresip_over_tcp_is_signalled_over_the_connection(
    tmp_path: Path, short_set
):
    """``transport = "tcp"``: the INVITE, its ACK and the BYE go over one TCP connection to
    baresip, which answers over it; the call is heard as over UDP."""
    recording(tmp_path / "prompt.wav")
    with baresip(tmp_path / "bob", tmp_path / "prompt.wav") as bob:
        spec = sip_agent(bob.uri, transport="tcp")
        (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
    assert record.error is None, record.error
    heard = np.frombuffer((tmp_path / "run" / record.audio_path).read_bytes()[44:], np.int16)
    assert abs(dominant_hz(heard) - 440) < 10
    assert "session closed" in bob.said()  # our BYE (over the connection: there is no other)


async def test_a_sips_uri_is_called_over_tls_and_a_certificate_not_trusted_is_refused(
    tmp_path: Path, short_set
):
    """A ``sips:`` URI: the call goes over TLS to baresip, whose certificate is checked
    against ``tls_ca_file``; without it (the system's authorities) the certificate is not
    trusted and the call fails before any INVITE, saying why."""
    recording(tmp_path / "prompt.wav")
    cert, both = self_signed(tmp_path / "tls")
    with baresip(tmp_path / "bob", tmp_path / "prompt.wav", certificate=both) as bob:
        uri = f"sips:bob@127.0.0.1:{bob.port + 1}"
        spec = sip_agent(uri, tls_ca_file=str(cert))
        (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
        (refused,) = await _replay(sip_agent(uri), tmp_path / "refused", short_set, final_only=True)
    assert record.error is None, record.error
    heard = np.frombuffer((tmp_path / "run" / record.audio_path).read_bytes()[44:], np.int16)
    assert abs(dominant_hz(heard) - 440) < 10
    assert refused.error is not None and refused.error.kind == "connection_refused"
    assert refused.error.reason.startswith(f"{uri}: TLS: ")
    assert "CERTIFICATE_VERIFY_FAILED" in refused.error.reason, refused.error.reason


async def test_a_call_through_kamailio_with_credentials_from_the_environment(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    recording(tmp_path / "prompt.wav")
    users = {"alice": "alice-pass-5150", "bob": "bob-pass-6160"}
    monkeypatch.setenv("VB_SIP_USER", "alice")
    monkeypatch.setenv("VB_SIP_PASSWORD", users["alice"])
    with (
        kamailio(tmp_path / "proxy", users) as proxy,
        baresip(
            tmp_path / "bob",
            tmp_path / "prompt.wav",
            registrar=proxy.address,
            password=users["bob"],
        ),
    ):
        host, port = proxy.address
        spec = sip_agent(
            f"sip:bob@{host}:{port}", username_env="VB_SIP_USER", password_env="VB_SIP_PASSWORD"
        )
        (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
        wrong = sip_agent(
            f"sip:carol@{host}:{port}", username_env="VB_SIP_USER", password_env="VB_SIP_PASSWORD"
        )
        (refused,) = await _replay(wrong, tmp_path / "refused", short_set, final_only=True)
    assert record.error is None, record.error
    assert refused.error is not None and refused.error.kind == "sip_rejected"
    assert refused.error.reason == f"sip:carol@{host}:{port}: 404 Not Found"
    # the password is in no file the runs wrote
    for run in (tmp_path / "run", tmp_path / "refused"):
        for path in run.rglob("*"):
            if path.is_file():
                assert users["alice"].encode() not in path.read_bytes(), path


def test_voicebench_run_calls_a_sip_uri(tmp_path: Path, short_set):
    from typer.testing import CliRunner

    from voicebench.cli import app

    recording(tmp_path / "prompt.wav")
    with baresip(tmp_path / "bob", tmp_path / "prompt.wav") as bob:
        out = tmp_path / "run"
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--agent",
                bob.uri,
                *short_set.options(),
                "--final-only",
                "-n",
                "1",
                "--out",
                str(out),
            ],
        )
    assert result.exit_code == 0, result.output
    assert "bob (remote/bob)" in result.output and "1 turns, 0 failed" in result.output


def test_a_sip_spec_whose_password_variable_is_unset_fails_at_load_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from voicebench.agentspec import load_agent_spec
    from voicebench.errors import MissingSecretError

    path = tmp_path / "phone.toml"
    path.write_text(
        'name = "phone"\nfamily = "sip"\n[remote]\nurl = "sip:bot@127.0.0.1:5060"\n'
        'protocol = "sip"\n[remote.sip]\nproxy = "127.0.0.1:5060"\n'
        'username_env = "VB_SIP_U"\npassword_env = "VB_SIP_P"\n'
    )
    monkeypatch.setenv("VB_SIP_U", "alice")
    monkeypatch.delenv("VB_SIP_P", raising=False)
    with pytest.raises(MissingSecretError, match=r"remote\.sip\.password_env: .*VB_SIP_P"):
        load_agent_spec(path)
    monkeypatch.setenv("VB_SIP_P", "pw")
    spec = load_agent_spec(path)
    assert spec.remote is not None and spec.remote.jitter_ms == 40
    assert spec.remote.sample_rate == 8_000


async def test_a_scripted_sip_agent_is_timed_within_a_frame_of_what_it_sent(
    tmp_path: Path, short_set
):
    """The caller hears the agent when its jitter buffer plays the first packet: what the
    agent logged it sent, plus the buffer's depth."""
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(delay_ms=300, protocol="sip") as agent:
        assert agent.url is not None and agent.url.startswith("sip:agent@127.0.0.1:")
        records = await _replay(sip_agent(agent.url), tmp_path / "run", short_set)
        answered = agent.turns()
    assert len(records) == len(answered) == 2
    for r, answer in zip(records, answered, strict=True):
        assert r.error is None, r.error
        assert r.timing is not None and r.timing.ttfa_ms is not None
        sent_ms = (answer["first_audio_sent_ns"] - r.timing.speech_end_ns) / 1e6
        assert abs(r.timing.ttfa_ms - (sent_ms + 40)) <= 20, (r.timing.ttfa_ms, sent_ms)


async def test_each_way_a_sip_call_fails_is_its_turns_failure_with_its_status(
    tmp_path: Path, short_set
):
    """Refused (503), busy (486), hung up as the reply would start (BYE), and answered with
    no audio at all (one-way): each recorded on its turn, and the run goes on."""
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    faults = ("refuse", "busy", "close", "silent")
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol="sip", faults=faults, reply="I hear you."
    ) as agent:
        assert agent.url is not None
        spec = sip_agent(agent.url)
        got = []
        for k in range(len(faults) + 1):
            records = await _replay(
                spec, tmp_path / f"run-{k}", short_set, final_only=True, turn_timeout_s=4.0
            )
            got.append(records[0].error)
    kinds = [e.kind if e else None for e in got]
    assert kinds == ["sip_rejected", "busy", "closed_mid_turn", "one_way_audio", None], got
    assert got[0].reason.endswith(": 503 Service Unavailable")
    assert got[1].reason.endswith(": 486 Busy")
    assert "it sent BYE" in got[2].reason
    assert "no RTP came from the agent" in got[3].reason


async def test_an_agent_that_moves_its_media_mid_call_is_answered_and_heard_from_there(
    tmp_path: Path, short_set
):
    """A re-INVITE from the agent moving its media to a new port: voicebench answers it 200
    and sends its RTP there; the agent, which stops hearing its old port, hears the turn and
    answers from the new one."""
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(
        delay_ms=300, protocol="sip", move_media_ms=300, reply="I hear you."
    ) as agent:
        assert agent.url is not None
        (record,) = await _replay(
            sip_agent(agent.url), tmp_path / "run", short_set, final_only=True
        )
        moves, answered = agent.moves(), agent.turns()
    assert record.error is None, record.error
    assert record.timing is not None and record.timing.ttfa_ms is not None
    (move,) = moves
    assert move["moved"] == 200 and move["to_port"] != move["from_port"]
    # the reply left from the new port: the move came before it
    (turn,) = answered
    assert move["moved_ns"] < turn["first_audio_sent_ns"]


async def test_early_media_before_the_answer_is_heard_as_the_call_s_opening(
    tmp_path: Path, short_set
):
    """An agent that plays a tone after its 183 Session Progress, before its 200 OK: the
    caller hears it from the early media's address, and keeps it as the call's opening."""
    from voicebench.runlog import read_openings
    from voicebench.testing.scripted_sip import EARLY_TONE_HZ
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(
        delay_ms=300, protocol="sip", early_media_ms=600, reply="I hear you."
    ) as agent:
        assert agent.url is not None
        (record,) = await _replay(
            sip_agent(agent.url), tmp_path / "run", short_set, final_only=True
        )
    assert record.error is None, record.error
    (opening,) = read_openings(tmp_path / "run")
    assert opening.error is None, opening.error
    assert opening.timing is not None and opening.timing.ttfa_ms is not None
    assert opening.audio_path is not None
    heard = np.frombuffer((tmp_path / "run" / opening.audio_path).read_bytes()[44:], np.int16)
    assert abs(dominant_hz(heard) - EARLY_TONE_HZ) < 10
    # about the 600 ms played (at 16 kHz), no more: what came after the answer is the turn's
    loud = np.flatnonzero(np.abs(heard.astype(np.int32)) > 3000)
    assert 0.5 < (loud[-1] - loud[0]) / 16_000 < 0.7, (loud[0], loud[-1])


async def test_a_barge_in_over_sip_is_yielded_to_and_answered_as_the_agent_logged(
    tmp_path: Path, short_set
):
    """The scenarios reach a SIP agent as any other: the caller speaks over the reply, the
    agent stops, and the caller hears it stop and then answer what was said over it."""
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    item = short_set.item("short-tired")  # three short spoken turns
    async with ScriptedVoiceAgent(delay_ms=400, protocol="sip", stop_ms=300) as agent:
        assert agent.url is not None
        records = await _replay(
            sip_agent(agent.url), tmp_path / "run", short_set, item, scenarios=["barge-in"]
        )
        stops = agent.stops()
    assert len(records) == 3
    barged = [r for r in records if r.scenario is not None]
    assert barged and all(r.scenario.name == "barge-in" for r in barged)
    for r in records:
        assert r.error is None, r.error
    for r in barged:
        assert r.scenario.agent_speaking and r.scenario.yielded and r.scenario.answered
        assert r.scenario.stop_ms is not None and r.scenario.stop_ms > 0
    # each stop the caller heard is one the agent made
    assert len(stops) == len(barged)


PHONE_SUITE = """
import os

import pytest

from voicebench.pytest_plugin import expect


@pytest.mark.voicebench(
    agent=os.environ["PHONE_BOT_SIP"],
    dialogues=os.environ["VOICEBENCH_DIALOGUES"],
    fixtures=os.environ["VOICEBENCH_FIXTURES"],
    limit=1,
)
def test_the_phone_bot_answers(voicebench_run):
    assert voicebench_run.records and voicebench_run.agent == "phone-bot"
    expect(voicebench_run, max_failed_pct=0)
"""


def test_the_pytest_marker_replays_a_sip_uri(tmp_path: Path, short_set):
    """A user's suite marks a test with the agent's SIP URI, as it would a spec."""
    import subprocess

    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    suite = tmp_path / "test_phone.py"
    suite.write_text(PHONE_SUITE)
    with ScriptedVoiceAgent(delay_ms=300, protocol="sip") as agent:
        assert agent.url is not None
        env = user_env(
            PHONE_BOT_SIP=agent.url.replace("sip:agent@", "sip:phone-bot@"),
            VOICEBENCH_DIALOGUES=str(short_set.dialogues_path),
            VOICEBENCH_FIXTURES=str(short_set.fixtures_dir),
        )
        done = subprocess.run(
            [*USER_PYTEST, suite],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        answered = agent.turns()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    # each of the first item's seeker turns was answered over SIP
    assert len(answered) == sum(t.role == "seeker" for t in short_set.dialogues[0].turns)
