"""Judge specs: the shipped ones load, bad ones are refused naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from voicebench.errors import InputError, MissingSecretError
from voicebench.judging import load_judge_spec


@pytest.mark.parametrize(
    "name", ["local-smoke", "openai", "anthropic", "openai-compatible", "ensemble"]
)
def test_shipped_specs_load_with_the_rubric_hash(name):
    spec, rubric = load_judge_spec(Path("judges") / f"{name}.toml", require_secrets=False)
    assert spec.judges and len(rubric.sha256) == 64 and "Resonance" in rubric.text


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        MissingSecretError, match=r"judges/openai.toml: judges.0.api_key_env: .*OPENAI_API_KEY"
    ):
        load_judge_spec("judges/openai.toml")


@pytest.mark.parametrize(
    "extra, field",
    [
        ('method = "calibrated-letter"', "for local smoke judges only"),
        ("temperature = 0.7", "judges.0.temperature"),
        ("phrasings = 2", r"\(letter-margin\), not of 'structured'"),
        ('provider = "x"', "judges.0.provider: .*registered LLM provider"),
        ('method = "guess"', "unknown judge method 'guess' \\(known: calibrated-letter, checklist"),
        ('method = "checklist"', "method 'checklist' needs weights"),
        ("weights = {likelihood = 1}", "not of 'structured'"),
        ('method = "letter-margin"\nprovider = "anthropic"\napi_key_env = "K"', "does not return"),
        ('method = "checklist"\nweights = {likelihood = 1}\nin_process = false', "in process"),
        ('method = "pointwise"\nquestions = ["likelihood"]', "unknown questions"),
    ],
)
def test_methods_and_their_settings_are_checked(tmp_path, extra, field):
    (tmp_path / "r.md").write_text("Judge.\n")
    spec = tmp_path / "j.toml"
    provider = "" if "provider" in extra else 'provider = "local"\n'
    spec.write_text(
        f'name = "x"\nrubric = "r.md"\n[[judges]]\n{provider}'
        f'model = "smollm2-135m"\nfamily = "smollm"\n{extra}\n'
    )
    with pytest.raises(InputError, match=field):
        load_judge_spec(spec)


def test_a_missing_rubric_is_named(tmp_path):
    spec = tmp_path / "j.toml"
    spec.write_text(
        'name = "x"\nrubric = "nope.md"\n[[judges]]\nprovider = "local"\n'
        'model = "m"\nfamily = "f"\n'
    )
    with pytest.raises(InputError, match=r"j.toml: rubric: rubric file 'nope.md' not found"):
        load_judge_spec(spec)


def test_shipped_judges_share_family_names_with_shipped_agents():
    from voicebench.agentspec import load_agent_spec

    specs = [load_agent_spec(p, require_secrets=False) for p in Path("agents").glob("*.toml")]
    agents = {s.llm.provider: s.family for s in specs if s.llm is not None}
    for name in ("openai", "anthropic"):
        spec, _ = load_judge_spec(Path("judges") / f"{name}.toml", require_secrets=False)
        assert spec.judges[0].family == agents[name], name  # so the family rule can bite
