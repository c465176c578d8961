"""Agent specs: the shipped ones load; bad ones are refused naming the file and field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from voicebench.agentspec import HEART_SYSTEM_PROMPT, load_agent_spec
from voicebench.errors import InputError, MissingSecretError

AGENTS = Path(__file__).resolve().parents[2] / "agents"


def test_scripted_agent_loads_with_the_heart_prompt():
    spec = load_agent_spec(AGENTS / "scripted.toml")
    assert spec.id == "scripted/scripted-llm"
    assert spec.llm.ttft_ms == 300
    assert spec.system_prompt == HEART_SYSTEM_PROMPT
    assert spec.vad.stop_secs == 0.5 and spec.turn.wait_for_all_segments is True


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "nope"\nmodel = "m"\n',
            r"bad\.toml: llm\.provider: Input should be",
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "openai-compatible"\nmodel = "m"\n',
            r"bad\.toml: llm: Value error, base_url is required",
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "openai-compatible"\nmodel = "m"\n'
            'base_url = "not a url"\n',
            r"bad\.toml: llm\.base_url: ",
        ),
        (
            'name = "x"\nfamily = "f"\ncolour = "red"\n[llm]\nprovider = "scripted"\nmodel = "m"\n',
            r"bad\.toml: colour: Extra inputs are not permitted",
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "openai"\nmodel = "m"\n'
            'api_key_env = "sk-live-abc123!"\n',
            r"bad\.toml: llm: Value error, api_key_env must be",
        ),
        (
            'name = "x"\nfamily = "f"\n[vad]\nstop_secs = -1\n[llm]\nprovider = "scripted"\n'
            'model = "m"\n',
            r"bad\.toml: vad\.stop_secs: Input should be greater than 0",
        ),
        ('name = "x" family', r"bad\.toml: not valid TOML"),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[tts]\nbase_url = "http://127.0.0.1:8000/v1"\n',
            r'bad\.toml: tts: Value error, base_url is for provider = "openai", not Piper',
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[tts]\nprovider = "openai"\napi_key_env = "sk-abc!"\n',
            r"bad\.toml: tts: Value error, api_key_env must be",
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[stt]\nbase_url = "http://127.0.0.1:8000/v1"\n',
            r'bad\.toml: stt: Value error, base_url is for provider = "openai", not Whisper',
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[stt]\nprovider = "openai"\nbeam_size = 5\n',
            r'bad\.toml: stt: Value error, beam_size is for provider = "whisper"',
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[stt]\nprovider = "deepgram"\n',
            r"bad\.toml: stt\.provider: Input should be 'whisper' or 'openai'",
        ),
    ],
)
def test_bad_specs_name_the_file_and_field(tmp_path: Path, toml: str, message: str):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(InputError, match=message):
        load_agent_spec(path)


def test_a_missing_key_variable_fails_at_load_naming_it(tmp_path: Path, monkeypatch):
    path = tmp_path / "openai.toml"
    path.write_text(
        'name = "o"\nfamily = "openai"\n[llm]\nprovider = "openai"\n'
        'model = "gpt-4o-mini"\napi_key_env = "VB_TEST_OPENAI_KEY"\n'
    )
    monkeypatch.delenv("VB_TEST_OPENAI_KEY", raising=False)
    with pytest.raises(
        MissingSecretError,
        match=r"llm\.api_key_env: environment variable VB_TEST_OPENAI_KEY is not set",
    ):
        load_agent_spec(path)
    monkeypatch.setenv("VB_TEST_OPENAI_KEY", "dummy")
    assert load_agent_spec(path).llm.api_key_env == "VB_TEST_OPENAI_KEY"


def test_every_shipped_agent_loads_when_its_key_variable_is_set(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
    monkeypatch.setenv("GOOGLE_API_KEY", "dummy")
    specs = {p.stem: load_agent_spec(p) for p in sorted(AGENTS.glob("*.toml"))}
    assert {"local", "openai", "anthropic", "openai-compatible", "scripted"} <= set(specs)
    assert specs["local"].llm.provider == "local" and specs["local"].llm.model == "smollm2-135m"
    assert specs["openai"].llm.api_key_env == "OPENAI_API_KEY"
    assert specs["anthropic"].llm.api_key_env == "ANTHROPIC_API_KEY"
    assert str(specs["openai-compatible"].llm.base_url).startswith("http://127.0.0.1")
    remote = specs["remote-example"]
    assert remote.llm is None and remote.remote.url == "ws://127.0.0.1:8765"
    assert remote.id == "remote/remote-example" and remote.key_variable is None
    phone = specs["phone-example"].remote
    assert phone.protocol == "twilio" and phone.sample_rate == 8_000
    assert phone.parameters == {"campaign": "voicebench"}
    gemini = specs["gemini-live"].s2s
    assert (gemini.provider, gemini.api_key_env) == ("gemini-live", "GOOGLE_API_KEY")


def test_a_remote_agents_token_variable_must_be_set(tmp_path, monkeypatch):
    path = tmp_path / "far.toml"
    path.write_text(
        'name = "far"\nfamily = "acme"\n[remote]\nurl = "ws://127.0.0.1:1"\n'
        '[remote.auth]\ntoken_env = "VB_TEST_FAR_TOKEN"\n'
    )
    monkeypatch.delenv("VB_TEST_FAR_TOKEN", raising=False)
    with pytest.raises(MissingSecretError, match=r"remote\.auth\.token_env: .*VB_TEST_FAR_TOKEN"):
        load_agent_spec(path)
    monkeypatch.setenv("VB_TEST_FAR_TOKEN", "a-long-token")
    spec = load_agent_spec(path)
    assert spec.key_variable == "VB_TEST_FAR_TOKEN"
    assert "a-long-token" not in spec.model_dump_json()  # only the variable's name is kept


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\nfamily = "f"\n', "give one of [llm]"),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
            '[remote]\nurl = "ws://127.0.0.1:1"\n',
            "give one of [llm]",
        ),
        (
            'name = "x"\nfamily = "f"\n[s2s]\nprovider = "openai"\nmodel = "m"\n'
            'api_key_env = "K"\n',
            "s2s: Value error, provider 'openai' speaks openai, a chat API, not a realtime",
        ),
        (
            'name = "x"\nfamily = "f"\n[llm]\nprovider = "openai-realtime"\nmodel = "m"\n'
            'api_key_env = "K"\n',
            "goes in an agent's [s2s] section",
        ),
        (
            'name = "x"\nfamily = "f"\n[s2s]\nprovider = "scripted-realtime"\nmodel = "m"\n'
            'base_url = "https://api.example.com/v1"\n',
            "s2s.base_url",
        ),
        (
            'name = "x"\nfamily = "f"\n[s2s]\nprovider = "scripted-realtime"\nmodel = "m"\n'
            'turn_detection = "semantic"\n',
            "s2s.turn_detection",
        ),
        (
            'name = "x"\nfamily = "f"\n[remote]\nurl = "http://127.0.0.1:1"\n',
            "remote: Value error, a pcm agent is reached at a ws:// or wss:// URL",
        ),
        ('name = "x"\nfamily = "f"\n[remote]\nurl = "ftp://127.0.0.1:1"\n', "remote.url"),
        (
            'name = "x"\nfamily = "f"\n[remote]\nurl = "ws://127.0.0.1:1"\nprotocol = "webrtc"\n',
            "a webrtc agent is reached at its http(s):// offer endpoint",
        ),
        (
            'name = "x"\nfamily = "f"\n[remote]\nurl = "ws://h:1"\nprotocol = "sip"\n',
            "a sip agent is reached at a sip:USER@HOST[:PORT] URI",
        ),
        (
            'name = "x"\nfamily = "f"\n[remote]\nurl = "sip:bot@h:5060"\n',
            'a sip: URI is called with protocol = "sip"',
        ),
        (
            'name = "x"\nfamily = "f"\n[remote]\nurl = "sip:bot@h"\nprotocol = "sip"\n'
            '[remote.sip]\nproxy = "no port"\n',
            "remote.sip.proxy",
        ),
    ],
)
def test_bad_remote_specs_name_the_field(tmp_path, text, message):
    path = tmp_path / "agent.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as info:
        load_agent_spec(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("agent", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai-realtime", "OPENAI_API_KEY"),
        ("gemini-live", "GOOGLE_API_KEY"),
    ],
)
def test_hosted_agents_without_their_key_fail_in_one_line(monkeypatch, agent, variable):
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(MissingSecretError) as info:
        load_agent_spec(AGENTS / f"{agent}.toml")
    assert str(info.value).count("\n") == 0 and variable in str(info.value)
    if agent in ("openai-realtime", "gemini-live"):
        assert "s2s.api_key_env" in str(info.value)


def test_the_vad_is_built_with_every_setting_of_the_spec():
    from voicebench.agentspec import VADSpec
    from voicebench.pipeline.agent import silero_vad

    spec = VADSpec(stop_secs=0.1, start_secs=0.03, confidence=0.5, min_volume=0.3)
    params = silero_vad(spec).params
    assert (params.stop_secs, params.start_secs) == (0.1, 0.03)
    assert (params.confidence, params.min_volume) == (0.5, 0.3)
    assert VADSpec().min_volume == 0.6  # pipecat's own floor: older specs behave as before


def test_overrides_set_dotted_fields_and_bad_ones_are_named():
    from voicebench.agentspec import parse_override

    path = AGENTS / "scripted.toml"
    spec = load_agent_spec(
        path, overrides=dict([parse_override("llm.ttft_ms=400"), parse_override("name=s-400")])
    )
    assert spec.llm.ttft_ms == 400 and spec.name == "s-400"
    assert load_agent_spec(path).llm.ttft_ms == 300  # the file itself is unchanged
    with pytest.raises(InputError, match=r"scripted\.toml: .*vad\.stop_secs"):
        load_agent_spec(path, overrides={"vad.stop_secs": "soon"})
    with pytest.raises(InputError, match="is not KEY=VALUE"):
        parse_override("llm.ttft_ms")


def test_a_spec_that_sends_a_key_off_this_machine_says_so(tmp_path, monkeypatch):
    import warnings

    from voicebench.errors import SecretDestinationWarning

    monkeypatch.setenv("VB_TEST_KEY", "sk-test-0123456789")
    body = (
        'name = "x"\nfamily = "x"\n[llm]\nprovider = "{provider}"\nmodel = "m"\n'
        '{base}api_key_env = "VB_TEST_KEY"\n'
    )
    cases = {
        ("openai-compatible", 'base_url = "https://models.example.net/v1"\n'): True,
        ("openai", 'base_url = "https://proxy.example.org/v1"\n'): True,
        ("openai-compatible", 'base_url = "http://127.0.0.1:8000/v1"\n'): False,
        ("openai", 'base_url = "https://api.openai.com/v1"\n'): False,
        ("openai", ""): False,
    }
    for (provider, base), warned in cases.items():
        path = tmp_path / "spec.toml"
        path.write_text(body.format(provider=provider, base=base))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load_agent_spec(path)
        notes = [w for w in caught if issubclass(w.category, SecretDestinationWarning)]
        assert bool(notes) == warned, (provider, base)
        if warned:
            assert "VB_TEST_KEY" in str(notes[0].message) and "llm.base_url" in str(
                notes[0].message
            )


@pytest.mark.parametrize(
    ("stage", "provider_field", "given", "default"),
    [("tts", "voice", "alloy", "en_US-joe-medium"), ("stt", "model", "whisper-1", "tiny.en")],
)
def test_a_speech_endpoints_key_is_asked_for_and_watched_like_the_llms(
    tmp_path, monkeypatch, stage, provider_field, given, default
):
    import warnings

    from voicebench.errors import SecretDestinationWarning

    path = tmp_path / "spec.toml"
    variable = f"VB_TEST_{stage.upper()}_KEY"
    path.write_text(
        'name = "x"\nfamily = "x"\n[llm]\nprovider = "scripted"\nmodel = "m"\n'
        f'[{stage}]\nprovider = "openai"\nbase_url = "https://speech.example.net/v1"\n'
        f'api_key_env = "{variable}"\n'
    )
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(MissingSecretError, match=rf"{stage}\.api_key_env: .*{variable}"):
        load_agent_spec(path)
    monkeypatch.setenv(variable, "sk-test-0123456789")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = load_agent_spec(path)
    (note,) = [w for w in caught if issubclass(w.category, SecretDestinationWarning)]
    assert f"{stage}.base_url" in str(note.message) and variable in str(note.message)
    speech = getattr(spec, stage)
    # the endpoint's URL, and the provider's default voice or model
    assert speech.url == "https://speech.example.net/v1"
    assert getattr(speech, provider_field) == given
    # a spec run here names its packaged voice or model, as before
    assert getattr(getattr(load_agent_spec("scripted"), stage), provider_field) == default
