"""The latency budget report of one run: percentiles and intervals, budgets, waterfall, cold
turns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import make_run

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.metrics import agent_latency, distribution
from voicebench.runlog import TurnError, read_header, read_turns
from voicebench.timing import STAGE_NAMES


def test_distribution_percentiles_intervals_and_budget_share():
    values = list(range(100, 1100, 10))  # 100 values, 100..1090 ms
    d = distribution(values, budget_ms=500.0, rounds=500, seed=3)
    assert d.n == 100 and d.mean_ms == pytest.approx(595.0)
    expected = np.percentile(values, [50, 90, 95, 99])
    assert [q.q for q in d.quantiles] == [50, 90, 95, 99]
    for q, v in zip(d.quantiles, expected, strict=True):
        assert q.value_ms == pytest.approx(v, abs=0.05)
        if q.q == 99:  # 100 turns, each its own: a p99's interval needs 300
            assert q.ci_ms is None
            continue
        assert q.ci_ms is not None and q.ci_ms[0] <= q.value_ms <= q.ci_ms[1]
        assert q.ci_ms[1] - q.ci_ms[0] > 0
    assert d.within_budget == pytest.approx(41 / 100)  # 100..500 inclusive
    again = distribution(values, budget_ms=500.0, rounds=500, seed=3)
    assert again == d  # seeded: the same run gives the same report


def test_distribution_of_nothing_and_of_one_turn():
    assert distribution([], 500.0).n == 0 and distribution([], 500.0).quantiles == ()
    one = distribution([700.0], 500.0)
    # measured once: no interval at all, never a zero-width one
    assert one.quantile(50).value_ms == 700.0 and one.quantile(50).ci_ms is None
    assert one.within_budget == 0.0


def test_intervals_resample_whole_dialogues_and_need_enough_of_them():
    """A dialogue's turns vary together (one seeker, one history): its turns are resampled
    together, which widens the interval; with too few dialogues there is none."""
    values = [100.0 * d + t for d in range(8) for t in range(10)]  # 8 dialogues, 10 turns each
    ids = [f"d{d}" for d in range(8) for _ in range(10)]
    by_dialogue = distribution(values, 500.0, ids, seed=1)
    by_turn = distribution(values, 500.0, seed=1)
    assert by_dialogue.clusters == 8 and by_turn.clusters == 80
    low, high = by_dialogue.quantile(50).ci_ms
    turn_low, turn_high = by_turn.quantile(50).ci_ms
    assert high - low > 2 * (turn_high - turn_low)
    assert by_dialogue.quantile(90).ci_ms is None  # a p90 needs 30 dialogues
    five = distribution(values[:50], 500.0, ids[:50])
    assert five.clusters == 5 and five.quantile(50).ci_ms is None  # a median needs 6


@pytest.fixture
def run(tmp_path: Path) -> Path:
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:3]
    k = items[1].seeker_turn_indices[0]
    return make_run(
        tmp_path,
        "agent",
        items,
        [2400, 900, 1100, 850, 950, 1300, 800, 1000],
        ttft_ms=350,
        all_turns=True,
        failures={(items[1].id, k): TurnError(kind="timeout", reason="no answer")},
    )


def test_agent_latency_from_a_run(run: Path):
    records = read_turns(run)
    a = agent_latency(run, read_header(run), records, budget_ttft_ms=500, budget_ttfa_ms=1000)
    timed = [r for r in records if r.timing is not None]
    ttfa = [r.timing.ttfa_ms for r in timed]
    assert a.turns == len(records) and a.failed == 1 and len(a.failures) == 1
    assert a.failures[0].kind == "timeout"
    assert a.ttfa.n == len(timed) and a.ttft.quantile(50).value_ms == 350.0
    # Cold: the first turn only (2,400 ms); warm: the rest.
    assert a.cold_turns == 1 and a.ttfa_cold.n == 1
    assert a.ttfa_cold.quantile(50).value_ms == 2400.0
    assert a.ttfa_warm.n == len(timed) - 1
    assert a.ttfa_warm.quantile(50).value_ms == pytest.approx(float(np.median(ttfa[1:])))
    # Within both budgets over all turns; the failed turn counts as a miss.
    assert a.within_budget == pytest.approx(sum(v <= 1000 for v in ttfa) / len(records), abs=1e-4)
    # The waterfall's stages add up to the mean TTFA, in pipeline order.
    assert list(a.waterfall_ms) == list(STAGE_NAMES)
    assert sum(a.waterfall_ms.values()) == pytest.approx(a.waterfall_total_ms, abs=0.01)
    assert a.waterfall_total_ms == pytest.approx(float(np.mean(ttfa)), abs=0.01)
    assert a.waterfall_ms["endpointing"] == pytest.approx(300.0)
    assert a.waterfall_ms["llm_ttft"] == pytest.approx(350.0)
    # Slowest first, naming the stage that took longest.
    assert [s.ttfa_ms for s in a.slowest] == sorted(ttfa, reverse=True)[:10]
    top = a.slowest[0]
    assert top.cold and top.ttfa_ms == 2400.0
    assert top.slowest_stage == "tts_first_audio"  # 2,400 - 20 - 752
    assert top.stages_ms["tts_first_audio"] == pytest.approx(2400 - 20 - 752)
    assert a.asr_wer_mean is not None and a.asr_turns_with_errors > 0
    # The failed turn is not dropped: counted as the 60 s turn timeout, it is the worst one.
    assert a.ttfa_censored.n == len(records) and a.censored_at_ms == 60_000.0
    assert a.ttfa_censored.quantile(99).value_ms > 50_000


def test_logs_without_cold_flags_treat_the_first_turn_as_cold(run: Path):
    records = [r.model_copy(update={"cold": None}) for r in read_turns(run)]
    a = agent_latency(run, read_header(run), records, budget_ttft_ms=500, budget_ttfa_ms=1000)
    assert a.cold_turns == 1 and a.ttfa_cold.quantile(50).value_ms == 2400.0


def test_a_run_with_no_turn_timed_plots_panels_that_say_so(tmp_path: Path):
    import warnings

    from voicebench.reporting.figures import NOTHING_TIMED, Series, latency_ecdf

    failed = Series("all-failed", ttft_ms=[], ttfa_ms=[], cold_ttfa_ms=[])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of a legend with nothing in it
        name = latency_ecdf([failed], 500.0, 800.0, tmp_path)
    svg = (tmp_path / f"{name}.svg").read_text()
    assert svg.count(f"<!-- {NOTHING_TIMED} -->") == 2  # one per panel


def test_every_stage_has_its_colour_in_the_waterfall():
    from voicebench.reporting.figures import STAGE_COLORS

    assert list(STAGE_COLORS) == list(STAGE_NAMES)
