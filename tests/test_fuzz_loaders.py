"""Every input file kind, fuzzed: whatever the bytes, a loader returns a valid result or raises a
VoicebenchError that names the file; never another exception, never a partial output file.

Inputs are drawn four ways: arbitrary bytes (non-UTF-8 included), arbitrary JSON values, a
valid file with one part changed (a field dropped, a value replaced by another type, a huge
string, text with line and paragraph separators, a line removed or duplicated), and values
nested thousands deep. Both servers' message handlers are fuzzed the same way in
``test_fuzz_servers.py``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz_settings
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from voicebench.agentspec import load_agent_spec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.dialogues.esconv import import_esconv_to_file
from voicebench.errors import InputError, VoicebenchError
from voicebench.fixtures import BUILTIN_FIXTURES, read_wav
from voicebench.fixtures.audio import write_wav
from voicebench.fixtures.manifest import load_manifest
from voicebench.judging.replies import load_human_replies
from voicebench.judging.spec import load_judge_spec
from voicebench.rating.agreement import load_human_judgments

ROOT = Path(__file__).resolve().parents[1]
FUZZ = fuzz_settings(HealthCheck.data_too_large)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=20,
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=30),
    st.just("a\u2028b\u2029c\u0085d\re"),
    st.just("x" * 200_000),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _mutate_json(doc, data) -> object:
    """``doc`` with one value somewhere in it dropped or replaced."""
    if isinstance(doc, dict) and doc:
        key = data.draw(st.sampled_from(sorted(doc)))
        action = data.draw(st.sampled_from(["drop", "replace", "descend"]))
        out = dict(doc)
        if action == "drop":
            del out[key]
        elif action == "replace":
            out[key] = data.draw(scalars)
        else:
            out[key] = _mutate_json(doc[key], data)
        return out
    if isinstance(doc, list) and doc:
        k = data.draw(st.integers(0, len(doc) - 1))
        action = data.draw(st.sampled_from(["drop", "replace", "descend", "empty"]))
        out = list(doc)
        if action == "drop":
            del out[k]
        elif action == "replace":
            out[k] = data.draw(scalars)
        elif action == "empty":
            out = []
        else:
            out[k] = _mutate_json(doc[k], data)
        return out
    return data.draw(scalars)


def _mutate_lines(text: str, data) -> str:
    lines = text.splitlines()
    k = data.draw(st.integers(0, max(0, len(lines) - 1)))
    action = data.draw(st.sampled_from(["drop", "duplicate", "value", "garbage"]))
    if action == "drop" and lines:
        del lines[k]
    elif action == "duplicate" and lines:
        lines.insert(k, lines[k])
    elif action == "value" and lines and "=" in lines[k]:
        key = lines[k].split("=", 1)[0]
        value = data.draw(
            st.sampled_from(
                [
                    '""',
                    "-1",
                    "1e309",
                    "true",
                    "[1, 2]",
                    '"x"',
                    '"' + "y" * 50_000 + '"',
                    "{}",
                    "nan",
                ]
            )
        )
        lines[k] = f"{key}= {value}"
    else:
        lines.insert(k, data.draw(st.text(max_size=30)))
    return "\n".join(lines) + "\n"


def _deep(data, *, kind: str) -> bytes:
    """A value nested past any parser's recursion limit, or just inside it."""
    depth = data.draw(st.sampled_from([900, 5_000, 50_000]))
    opener, closer = data.draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    if kind == "toml":
        opener, closer = data.draw(st.sampled_from([("[", "]"), ("{a = ", "}")]))
        return ("x = " + opener * depth + "1" + closer * depth + "\n").encode()
    body = opener * depth + "1" + closer * depth
    return (body + "\n" if kind == "jsonl" else body).encode()


def _content(valid: str, data, *, kind: str) -> bytes:
    how = data.draw(st.sampled_from(["bytes", "json", "mutated", "mutated", "lines", "deep"]))
    if how == "bytes":
        return data.draw(st.binary(max_size=300))
    if how == "deep":
        return _deep(data, kind="json" if kind == "csv" else kind)
    if how == "json":
        return json.dumps(data.draw(json_values)).encode()
    if how == "lines" or kind in ("toml", "csv"):
        return _mutate_lines(valid, data).encode()
    if kind == "jsonl":
        lines = [json.loads(line) for line in valid.splitlines() if line.strip()]
        k = data.draw(st.integers(0, len(lines) - 1))
        lines[k] = _mutate_json(lines[k], data)
        return "\n".join(json.dumps(x) for x in lines).encode()
    return json.dumps(_mutate_json(json.loads(valid), data)).encode()


def _check(loader, path: Path, content: bytes) -> None:
    path.write_bytes(content)
    try:
        loader(path)
    except VoicebenchError as exc:
        message = str(exc)
        assert str(path) in message or path.name in message, message
        assert "\n" not in message.strip(), message  # one line


_SCRATCH = tempfile.TemporaryDirectory(prefix="vb-fuzz-")  # removed when the tests end


def _folder() -> Path:
    return Path(tempfile.mkdtemp(dir=_SCRATCH.name))


def _tmp(suffix: str) -> Path:
    return _folder() / f"input{suffix}"


VALID_DIALOGUES = "\n".join(BUILTIN_DIALOGUES.read_text().splitlines()[:2]) + "\n"


@FUZZ
@given(st.data())
def test_dialogue_sets(data):
    _check(load_dialogues, _tmp(".jsonl"), _content(VALID_DIALOGUES, data, kind="jsonl"))


@FUZZ
@given(st.data())
def test_agent_specs(data):
    valid = (
        ROOT
        / "agents"
        / data.draw(
            st.sampled_from(
                [
                    "local.toml",
                    "scripted.toml",
                    "openai-compatible.toml",
                    "remote-example.toml",
                    "phone-example.toml",
                ]
            )
        )
    ).read_text()
    _check(
        lambda p: load_agent_spec(p, require_secrets=False),
        _tmp(".toml"),
        _content(valid, data, kind="toml"),
    )


@FUZZ
@given(st.data())
def test_judge_specs(data):
    name = data.draw(st.sampled_from(["openai.toml", "local-smoke.toml", "ensemble.toml"]))
    folder = _folder()
    (folder / "rubric-v1.md").write_text((ROOT / "judges" / "rubric-v1.md").read_text())
    _check(
        lambda p: load_judge_spec(p, require_secrets=False),
        folder / name,
        _content((ROOT / "judges" / name).read_text(), data, kind="toml"),
    )


HUMAN_CSV = (
    "item_id,contestant_a,contestant_b,rating,rater\n"
    "reg-job-crisis-01,a,human/reference,A slightly better,r1\n"
    "reg-job-crisis-01,a,human/reference,-2,r2\n"
)
HUMAN_JSONL = (
    "\n".join(
        json.dumps(r)
        for r in [
            {
                "item_id": "reg-job-crisis-01",
                "contestant_a": "a",
                "contestant_b": "b",
                "rating": "same",
            },
            {"item_id": "reg-job-crisis-01", "contestant_a": "a", "contestant_b": "b", "rating": 2},
        ]
    )
    + "\n"
)


@FUZZ
@given(st.data())
def test_human_judgment_files(data):
    if data.draw(st.booleans()):
        _check(load_human_judgments, _tmp(".csv"), _content(HUMAN_CSV, data, kind="csv"))
    else:
        _check(load_human_judgments, _tmp(".jsonl"), _content(HUMAN_JSONL, data, kind="jsonl"))


HUMAN_REPLIES = (
    json.dumps({"item_id": "reg-job-crisis-01", "name": "ana", "reply": "That sounds so hard."})
    + "\n"
)


@FUZZ
@given(st.data())
def test_human_reply_files(data):
    _check(
        lambda p: load_human_replies(p, {"reg-job-crisis-01"}),
        _tmp(".jsonl"),
        _content(HUMAN_REPLIES, data, kind="jsonl"),
    )


@FUZZ
@given(st.data())
def test_manifests(data):
    real = json.loads((BUILTIN_FIXTURES / "manifest.json").read_text())
    valid = json.dumps({**real, "entries": real["entries"][:2]})
    folder = _folder()
    _check(
        lambda p: load_manifest(p.parent),
        folder / "manifest.json",
        _content(valid, data, kind="json"),
    )


@FUZZ
@given(st.data())
def test_esconv_import_writes_nothing_on_failure(data):
    src = _tmp(".json")
    dest = src.with_name("out.jsonl")
    valid = (ROOT / "tests" / "data" / "esconv" / "conversations.json").read_text()
    src.write_bytes(_content(valid, data, kind="json"))
    try:
        import_esconv_to_file(src, dest)
    except VoicebenchError as exc:
        assert str(src) in str(exc)
        assert not dest.exists() and not list(dest.parent.glob(".out.jsonl*"))
    else:
        load_dialogues(dest)  # what was written is a valid dialogue set


def test_wav_files_missing_wrong_rate_or_not_audio(tmp_path: Path):
    with pytest.raises(InputError) as missing:
        read_wav(tmp_path / "nope.wav", expect_rate=16_000)
    assert "nope.wav" in str(missing.value)
    write_wav(tmp_path / "fast.wav", np.zeros(2205, dtype=np.int16), 22_050)
    with pytest.raises(InputError, match=r"22050|22,050") as rate:
        read_wav(tmp_path / "fast.wav", expect_rate=16_000)
    assert "fast.wav" in str(rate.value)
    (tmp_path / "junk.wav").write_bytes(b"RIFF\x00\x01garbage" * 10)
    with pytest.raises(InputError) as junk:
        read_wav(tmp_path / "junk.wav", expect_rate=16_000)
    assert "junk.wav" in str(junk.value)


# Folders written by voicebench itself, read back by every later step: a run, a judging
# folder, a load, an annotate plan. Their files are fuzzed one at a time inside a valid folder.


def _valid_folders() -> dict[str, Path]:
    from synthetic_runs import judged_against_reference

    root = Path(_SCRATCH.name) / "valid"
    if root.exists():
        return {"run": root / "alpha", "judging": root / "judged"}
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    run, judged = judged_against_reference(root, items, all_turns=True)
    return {"run": run, "judging": judged}


def _copy_folder(source: Path) -> Path:
    import shutil

    target = _folder() / source.name
    shutil.copytree(source, target)
    return target


@FUZZ
@given(st.data())
def test_run_folders(data):
    from voicebench.runlog import read_header, read_turns

    run = _copy_folder(_valid_folders()["run"])
    name, loader, kind = data.draw(
        st.sampled_from([("run.json", read_header, "json"), ("turns.jsonl", read_turns, "jsonl")])
    )
    valid = (run / name).read_text()
    _check(lambda p: loader(p.parent), run / name, _content(valid, data, kind=kind))


@FUZZ
@given(st.data())
def test_judging_folders(data):
    from voicebench.judging import read_judging_header, read_replies, read_verdicts

    judged = _copy_folder(_valid_folders()["judging"])
    name, loader, kind = data.draw(
        st.sampled_from(
            [
                ("judging.json", read_judging_header, "json"),
                ("replies.jsonl", read_replies, "jsonl"),
                ("verdicts.jsonl", read_verdicts, "jsonl"),
            ]
        )
    )
    valid = (judged / name).read_text()
    _check(lambda p: loader(p.parent), judged / name, _content(valid, data, kind=kind))


@FUZZ
@given(st.data())
def test_load_folders(data):
    from synthetic_runs import load_header

    from voicebench.live import read_load

    folder = _folder()
    (folder / "turns.jsonl").write_text("")
    header = load_header(["a"])
    _check(lambda p: read_load(p.parent), folder / "load.json", _content(header, data, kind="json"))


@FUZZ
@given(st.data())
def test_gold_sets_campaigns_gates_and_cards(data):
    from synthetic_runs import judge_card

    from voicebench._model import read_model
    from voicebench.campaign import load_campaign
    from voicebench.gates.check import read_gates
    from voicebench.judging.cards import JudgeCard
    from voicebench.judging.gold import load_gold

    which = data.draw(st.sampled_from(["gold", "campaign", "gates", "card"]))
    if which == "gold":
        valid = "\n".join((ROOT / "judges" / "pairs-gold.jsonl").read_text().splitlines()[:3])
        _check(load_gold, _tmp(".jsonl"), _content(valid + "\n", data, kind="jsonl"))
    elif which == "campaign":
        valid = (ROOT / "campaigns" / "example.toml").read_text()
        _check(load_campaign, _tmp(".toml"), _content(valid, data, kind="toml"))
    elif which == "gates":
        valid = (ROOT / "docs" / "ci-gates.toml").read_text()
        _check(read_gates, _tmp(".toml"), _content(valid, data, kind="toml"))
    else:
        valid = judge_card().model_dump_json()
        _check(
            lambda p: read_model(JudgeCard, p), _tmp(".json"), _content(valid, data, kind="json")
        )


@FUZZ
@given(st.data())
def test_annotate_plans_and_settings(data):
    from voicebench._model import read_model
    from voicebench.annotate.tasks import AnnotateSettings, RaterPlan, draw_plan

    if data.draw(st.booleans()):
        pair = ("item", "alpha", "human/reference")
        valid = draw_plan([pair], "ann", 1, 3).model_dump_json()
        _check(
            lambda p: read_model(RaterPlan, p), _tmp(".json"), _content(valid, data, kind="json")
        )
    else:
        valid = AnnotateSettings(seed=3, created_at="2026-01-01").model_dump_json()
        _check(
            lambda p: read_model(AnnotateSettings, p),
            _tmp(".json"),
            _content(valid, data, kind="json"),
        )


@FUZZ
@given(st.data())
def test_strategy_gold_sets_and_adversarial_rejections(data):
    from voicebench._jsonl import read_models
    from voicebench.dialogues.adversarial import Rejected
    from voicebench.strategies.validation import load_gold as load_strategy_gold

    if data.draw(st.booleans()):
        valid = "\n".join((ROOT / "judges" / "strategy-gold.jsonl").read_text().splitlines()[:3])
        _check(load_strategy_gold, _tmp(".jsonl"), _content(valid + "\n", data, kind="jsonl"))
    else:
        valid = json.dumps({"id": "a", "profile": "linear-ramp", "reason": "r"}) + "\n"
        _check(
            lambda p: read_models(p, Rejected), _tmp(".jsonl"), _content(valid, data, kind="jsonl")
        )
