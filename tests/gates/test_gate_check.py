"""`voicebench check` on run and judging folders written from known figures: gates, intervals,
--strict, JUnit XML, the Markdown summary and the exit codes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from synthetic_runs import judge_card, make_judging, make_run, verdict
from typer.testing import CliRunner

from voicebench import api
from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.gates import check, folder_figures, make_gate, read_gates
from voicebench.judging.cards import CARD_FILE
from voicebench.runlog import ScenarioOutcome, TurnError

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:12]


def run(tmp_path: Path, name: str, ttft_ms: int, **kw) -> Path:
    return make_run(tmp_path, name, ITEMS, [900, 1000, 1100], ttft_ms=ttft_ms, **kw)


def cli(*args: str):
    return CliRunner().invoke(app, ["check", *args])


def test_a_run_folders_figures_have_their_intervals(tmp_path: Path):
    fail = TurnError(kind="timeout", reason="nothing audible within 60 s")
    figures = folder_figures(
        run(tmp_path, "a", 300, failures={(ITEMS[0].id, ITEMS[0].final_turn_index): fail})
    )
    assert figures["ttft_p50_ms"].value == 300.0 and figures["ttft_p50_ms"].n == 11
    p50, p90 = figures["ttfa_p50_ms"], figures["ttfa_p90_ms"]
    assert p50.low <= p50.value <= p50.high and p50.unit == "ms" and p50.clusters == 11
    # 12 dialogues: a p90's interval needs 30, so it has none rather than one too narrow
    assert p90.too_few and p90.low is None and p90.value == 1100.0
    failed = figures["failed_pct"]
    assert (
        failed.value == pytest.approx(100 / 12, abs=0.01)
        and failed.low < failed.value < failed.high
    )
    assert "stop_latency_p90_ms" not in figures  # no barge-in turns


def test_gates_pass_fail_and_say_when_the_interval_cannot_decide(tmp_path: Path):
    figures = folder_figures(run(tmp_path, "a", 300))
    gates = [
        make_gate("max_ttft_p50_ms", 350, source="t"),  # 300, interval tight: a sure pass
        make_gate("max_ttfa_p50_ms", 950, source="t"),  # 1,000 ms: a sure fail? see below
        make_gate("max_ttfa_p90_ms", 1050, source="t"),  # 12 dialogues: too few for a p90
        make_gate("min_yielded_pct", 90, source="t"),  # not measured here
    ]
    by = {r.gate.name: r for r in check(gates, figures)}
    assert by["max_ttft_p50_ms"].passed and by["max_ttft_p50_ms"].decided
    assert not by["max_ttfa_p50_ms"].passed
    p90 = by["max_ttfa_p90_ms"]
    # 1,100 ms against 1,050: failed by the value, which is all there is
    assert p90.too_few and not p90.passed and p90.status == "FAIL (too few to tell)"
    assert p90.note == "too few to tell (n=12 turns in 12 dialogues): decided by the value"
    (strict,) = check([p90.gate], figures, strict=True)  # decided by an interval: abstains
    assert strict.abstained and not strict.passed and strict.status == "too few to tell"
    # a bound inside the median's interval: passed by the point, not sure by the interval
    (unsure,) = check([make_gate("max_ttfa_p50_ms", 1020, source="t")], figures)
    assert unsure.figure.low <= 1020 <= unsure.figure.high and not unsure.decided
    assert unsure.passed and "too few to decide" in unsure.note
    assert not by["min_yielded_pct"].passed and by["min_yielded_pct"].note == (
        "not measured in this folder"
    )
    # --strict decides by the far end: 1 failed turn of 12 is 8.3% [1.5, 35.4], under a 10%
    # bound by its point, not by its interval.
    fail = TurnError(kind="timeout", reason="nothing audible within 60 s")
    one_failed = folder_figures(
        run(tmp_path, "b", 300, failures={(ITEMS[0].id, ITEMS[0].final_turn_index): fail})
    )
    gate = make_gate("max_failed_pct", 10, source="t")
    (plain,) = check([gate], one_failed)
    (strict,) = check([gate], one_failed, strict=True)
    assert plain.passed and not plain.decided and plain.status == "pass (unsure)"
    assert not strict.passed and "--strict" in strict.note


def test_the_command_exits_by_its_gates_and_writes_junit_and_markdown(tmp_path: Path):
    fast, slow = run(tmp_path, "fast", 300), run(tmp_path, "slow", 400)
    ok = cli(str(fast), "--max-ttft-p50-ms", "350", "--junit", str(tmp_path / "ok.xml"))
    assert ok.exit_code == 0, ok.output
    assert "1/1 gates passed" in ok.output
    bad = cli(
        str(slow),
        "--max-ttft-p50-ms",
        "350",
        "--gate",
        "max_failed_pct=5",
        "--junit",
        str(tmp_path / "bad.xml"),
        "--summary-md",
        str(tmp_path / "bad.md"),
    )
    assert bad.exit_code == 1, bad.output
    cases = ET.parse(tmp_path / "bad.xml").getroot().findall(".//testcase")
    assert [c.get("name") for c in cases] == ["max_ttft_p50_ms", "max_failed_pct"]
    failure = cases[0].find("failure")
    assert failure is not None and "400.0 ms" in failure.get("message")
    assert "<= 350.0 ms" in failure.get("message")
    assert cases[1].find("failure") is None
    md = (tmp_path / "bad.md").read_text()
    assert "1/2 gates passed" in md and "| max\\_ttft\\_p50\\_ms | 400.0 ms |" in md
    # Bad input: exit 2, one line naming what is wrong.
    for args, message in [
        ((str(slow), "--gate", "max_speed=3"), "--gate: unknown gate 'max_speed'"),
        ((str(slow), "--gate", "max_ttft_p50_ms"), "is not NAME=NUMBER"),
        ((str(slow),), "no gates given"),
        ((str(tmp_path),), "neither a run folder"),
    ]:
        result = cli(*args)
        assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output


def test_a_gates_file_is_read_and_its_mistakes_named(tmp_path: Path):
    good = tmp_path / "gates.toml"
    good.write_text("[gates]\nmax_ttft_p50_ms = 350\nmax_failed_pct = 5.0\n")
    assert [(g.name, g.bound) for g in read_gates(good)] == [
        ("max_ttft_p50_ms", 350.0),
        ("max_failed_pct", 5.0),
    ]
    for text, field in [
        ("[gates]\nmax_ttft_p50_ms = 'fast'\n", "gates.max_ttft_p50_ms"),
        ("[gates]\nmin_happiness = 3\n", "gates.min_happiness"),
        ("max_ttft_p50_ms = 3\n", "gates"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(InputError, match=field.replace(".", r"\.")):
            read_gates(bad)


def test_a_judging_folders_elo_and_judge_accuracy(tmp_path: Path):
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:6]
    runs = [make_run(tmp_path, "good", items, 800), make_run(tmp_path, "meh", items, 800)]
    verdicts = []
    for d in items:
        verdicts += [verdict(d.id, "good", "meh", "A", 4), verdict(d.id, "meh", "good", "B", 4)]
    judged = make_judging(tmp_path / "judged", runs, items, ("good", "meh"), verdicts)
    card = judge_card(decided=38, correct=34, accuracy=0.85, accuracy_low=0.71, accuracy_high=0.93)
    (judged / CARD_FILE).write_text(card.model_dump_json())
    result = cli(
        str(judged), "--min-elo", "1000", "--contestant", "good", "--min-judge-accuracy", "70"
    )
    assert result.exit_code == 0, result.output
    strict = cli(str(judged), "--min-judge-accuracy", "75", "--strict")
    assert strict.exit_code == 1  # 85% [71, 93]: the interval's far end is under 75
    assert "too few to decide" in " ".join(strict.output.split())
    missing = cli(str(judged), "--min-elo", "1000", "--contestant", "nobody")
    assert missing.exit_code == 2 and "no contestant 'nobody'" in missing.output
    needs = cli(str(judged), "--min-elo", "1000")
    assert needs.exit_code == 2 and "--min-elo needs --contestant" in needs.output


def test_interruption_gates_read_the_scenario_figures(tmp_path: Path):
    def barge(stop_ms: float, yielded: bool = True) -> ScenarioOutcome:
        return ScenarioOutcome(
            name="barge-in",
            params={"delay_ms": 600.0},
            agent_speaking=True,
            at_ms=600.0,
            stop_ms=stop_ms,
            yielded=yielded,
            talk_over_s=0.2,
            answered=True,
        )

    word = ScenarioOutcome(
        name="backchannel",
        params={"delay_ms": 600.0, "words": "yeah"},
        agent_speaking=True,
        at_ms=600.0,
        false_yield=True,
        lost_s=0.8,
    )
    outcomes = [barge(120), barge(150), barge(180), barge(2400, yielded=False), word]
    folder = run(tmp_path, "talked-over", 300, all_turns=True, scenarios=outcomes)
    figures = folder_figures(folder)
    assert figures["stop_latency_p50_ms"].value == pytest.approx(165.0, abs=15)
    assert figures["stop_latency_p90_ms"].value > 1000  # the turns it did not yield in
    assert figures["false_yield_pct"].value == 100.0
    by = {
        r.gate.name: r
        for r in check(
            [
                make_gate("max_stop_latency_p90_ms", 500, source="t"),
                make_gate("max_false_yield_pct", 20, source="t"),
                make_gate("min_yielded_pct", 50, source="t"),
            ],
            figures,
        )
    }
    assert not by["max_stop_latency_p90_ms"].passed and not by["max_false_yield_pct"].passed
    assert by["min_yielded_pct"].passed and by["min_yielded_pct"].figure.value == 75.0


def test_a_gate_on_too_few_dialogues_says_so_and_exits_4(tmp_path: Path):
    """No verdict without evidence: a p90 of 12 dialogues has no interval, so its gate is
    decided by the value and says it is too few to tell, a strict one abstains (its JUnit case
    skipped), and the command exits 4 (1 when another gate failed)."""
    fast = run(tmp_path, "fast", 300)
    by_value = cli(str(fast), "--max-ttfa-p90-ms", "2000", "--max-ttft-p50-ms", "350")
    assert by_value.exit_code == 4, by_value.output
    said = " ".join(by_value.output.split())
    assert "2/2 gates passed; too few dialogues to tell: max_ttfa_p90_ms" in said
    junit = tmp_path / "few.xml"
    strict = cli(
        str(fast),
        *("--max-ttfa-p90-ms", "2000", "--max-ttft-p50-ms", "350"),
        *("--strict", "--junit", str(junit)),
    )
    assert strict.exit_code == 4, strict.output
    said = " ".join(strict.output.split())
    assert "1/2 gates passed; too few dialogues to tell: max_ttfa_p90_ms" in said
    case = ET.parse(junit).getroot().find(".//testcase[@name='max_ttfa_p90_ms']")
    assert case is not None and "too few to tell (n=12 turns in 12 dialogues)" in (
        case.find("skipped").get("message")
    )
    both = cli(str(fast), "--max-ttfa-p90-ms", "2000", "--max-ttft-p50-ms", "250")
    assert both.exit_code == 1, both.output


def test_every_repeat_gates_ask_every_pass_to_hold(tmp_path: Path):
    """pass^k: on a run of three passes, the third 400 ms slower, a TTFA gate that the pooled
    p50 meets fails when every pass must meet it, naming the pass; one that every pass meets
    passes, each pass's value in its note. A run of one pass is refused, naming the folder."""
    items = load_dialogues(BUILTIN_DIALOGUES)[:12]
    three = make_run(tmp_path, "three", items, [600, 700, 800], passes_ms=(0, 0, 400))
    pooled = api.check(three, max_ttfa_p50_ms=900)
    assert pooled.passed and pooled.results[0].passes == ()
    every = api.check(three, every_repeat=True, max_ttfa_p50_ms=900, max_ttft_p50_ms=350)
    slow, fast = every.results
    assert not every.passed and every.failed == [slow]
    assert slow.passes == (700.0, 700.0, 1100.0) and slow.figure.value == 800.0  # pooled
    assert slow.note == "not within the bound in pass 3 of 3 (700.0 ms, 700.0 ms, 1,100.0 ms)"
    assert slow.status == "FAIL (not all 3 repeats)"
    assert fast.passed and fast.passes == (300.0, 300.0, 300.0)
    assert fast.status == "pass (every one of 3 repeats)"
    assert fast.note.startswith("every one of 3 passes: 300.0 ms, 300.0 ms, 300.0 ms")
    said = " ".join(cli(str(three), "--every-repeat", "--max-ttfa-p50-ms", "900").output.split())
    assert "FAIL (not all 3 repeats)" in said and "failed: max_ttfa_p50_ms" in said

    once = run(tmp_path, "once", 300)
    with pytest.raises(InputError, match="the run has one pass") as raised:
        api.check(once, every_repeat=True, max_ttfa_p50_ms=900)
    assert raised.value.file == str(once)
