"""The learned scorer: ``judge-train`` fits a head on a gold file's dev pairs only, writes a
spec that loads and is measured as any judge is, on the held-out pairs it never saw; each
reply is scored alone (the two orders of a pair are mirror images); a bad head or a missing
one is named with its file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import voicebench
from voicebench.cli import app
from voicebench.errors import InputError
from voicebench.judging import load_judge_spec
from voicebench.judging.gold import load_gold
from voicebench.judging.prompt import turns_context
from voicebench.judging.scorer import Conversation, Encoder, Head, feature_names, load_head

PAIRS = Path(__file__).parents[1] / "data" / "judge-train-pairs.jsonl"
"""60 pairs written for these tests, one conversation each; about half have the shorter reply
as the better one."""


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> voicebench.TrainedJudge:
    out = tmp_path_factory.mktemp("trained") / "mine.toml"
    return voicebench.judge_train([PAIRS], out=out)


def test_the_context_of_a_judge_prompt_is_read_back_by_speaker():
    pair = load_gold(PAIRS).pairs[0]
    conversation = Conversation.of_context(turns_context(pair.turns))
    assert conversation.seeker == tuple(t.text for t in pair.turns if t.role == "seeker")
    assert conversation.supporter == tuple(t.text for t in pair.turns if t.role == "supporter")
    two = Conversation.of_context("Supporter: Hi, I'm here.\nSeeker: I lost my job.\nand more")
    assert two == Conversation(seeker=("I lost my job.\nand more",), supporter=("Hi, I'm here.",))


def test_judge_train_fits_on_the_dev_pairs_only_and_writes_a_spec_that_loads(trained):
    gold = load_gold(PAIRS)
    dev = gold.select("dev")
    assert 20 <= len(dev) < len(gold.pairs)
    head = load_head(trained.head_path)
    assert head.pairs == len(dev)
    assert head.gold_sha256 == (gold.sha256,)
    assert head.weights.shape == (len(feature_names(head.groups)),)
    assert 0.0 <= head.cv_accuracy <= 1.0
    spec, rubric = load_judge_spec(trained.spec)
    (judge,) = spec.judges
    assert judge.method == "scorer" and judge.family == "minilm"
    assert Path(judge.head) == trained.head_path.resolve()
    assert rubric.text.strip()
    assert judge.variant.startswith("scorer;head=")


def test_the_trained_scorer_is_measured_on_held_out_pairs_through_the_judging_code(trained):
    check = voicebench.judge_check(trained.spec, gold=PAIRS)
    card = check.card
    held_out = load_gold(PAIRS).select("holdout")
    assert card.split == "holdout" and card.pairs == len(held_out)
    assert card.dev_pairs == 0
    # every pair decided in both orders, and the orders agree: each reply is scored alone
    assert card.decided == card.pairs
    assert card.flip_rate == 0.0
    assert card.accuracy > 0.5
    assert card.trivial_rules is not None and "longer" in card.trivial_rules


def test_a_pair_s_two_orders_are_mirror_images(trained):
    from voicebench.judging.builtin_methods import ScorerJudge
    from voicebench.judging.prompt import judge_messages

    spec, rubric = load_judge_spec(trained.spec)
    judge = ScorerJudge(spec.judges[0])
    pair = load_gold(PAIRS).pairs[3]
    context = turns_context(pair.turns)
    ab = voicebench.run_sync(
        judge.ask(judge_messages(rubric.text, context, pair.reply_a, pair.reply_b))
    )
    ba = voicebench.run_sync(
        judge.ask(judge_messages(rubric.text, context, pair.reply_b, pair.reply_a))
    )
    a, b = json.loads(ab.text), json.loads(ba.text)
    assert a["margin"] == pytest.approx(-b["margin"], abs=1e-3)
    assert a["margin"] != 0.0
    assert {a["winner"], b["winner"]} == {"A", "B"}


def test_judge_train_on_the_command_line_says_what_it_fitted(tmp_path):
    out = tmp_path / "cli.toml"
    result = CliRunner().invoke(app, ["judge-train", "--gold", str(PAIRS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "fitted on" in result.output and "dev pairs" in result.output
    assert out.is_file() and out.with_suffix(".npz").is_file()
    assert (tmp_path / "rubric-reply.md").is_file()


def test_a_missing_or_broken_head_is_named_with_its_file_and_field(tmp_path, trained):
    spec = tmp_path / "judge.toml"
    shutil.copy(trained.spec, spec)
    shutil.copy(trained.spec.parent / "rubric-reply.md", tmp_path / "rubric-reply.md")
    with pytest.raises(InputError) as missing:
        load_judge_spec(spec)
    assert "judges.0.head" in str(missing.value) and str(spec) in str(missing.value)
    head = tmp_path / trained.head_path.name
    np.savez(head, weights=np.zeros(3), groups=np.array(["reply"]), encoder=np.array("x"))
    with pytest.raises(InputError) as wrong:
        load_head(head)
    assert str(head) in str(wrong.value)
    spec.write_text(spec.read_text().replace('method = "scorer"', 'method = "pointwise"'))
    with pytest.raises(InputError) as misplaced:
        load_judge_spec(spec)
    assert "head is a setting of method 'scorer'" in str(misplaced.value)


def test_a_head_scores_by_its_weights():
    names = feature_names(("measured",))
    head = Head(
        weights=np.arange(len(names), dtype=float),
        groups=("measured",),
        encoder="all-minilm-l6-v2",
        strength=1.0,
        cv_accuracy=0.5,
        pairs=30,
        gold_sha256=(),
    )
    assert head.score(np.ones(len(names))) == pytest.approx(sum(range(len(names))))


def test_the_encoder_gives_unit_vectors_that_tell_related_sentences_apart():
    encoder = Encoder()
    lost, fired, weather = encoder.embed(
        [
            "I lost my job today and I don't know how to tell my wife.",
            "They let me go from work this morning; how do I break it to my wife?",
            "The forecast says rain on Thursday afternoon.",
        ]
    )
    assert np.linalg.norm(lost) == pytest.approx(1.0, abs=1e-5)
    assert lost @ fired > lost @ weather + 0.3


def test_a_scorer_s_cards_follow_its_head_s_contents_not_its_place(tmp_path, trained):
    from voicebench.judging.cards import spec_sha256

    def digest(folder: Path) -> str:
        spec, rubric = load_judge_spec(folder / trained.spec.name)
        return spec_sha256(spec, rubric)

    for name in ("here", "there"):
        shutil.copytree(trained.spec.parent, tmp_path / name)
    assert digest(tmp_path / "here") == digest(tmp_path / "there")
    head = tmp_path / "there" / trained.head_path.name
    fitted = load_head(head)
    Head(**{**fitted.__dict__, "weights": fitted.weights * 2}).save(head)
    assert digest(tmp_path / "here") != digest(tmp_path / "there")
