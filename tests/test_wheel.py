"""voicebench as people install it: the wheel built from this checkout, installed into a fresh
environment, run from an empty folder far from the checkout.

The fresh environment gets the wheel itself; its dependencies are the test environment's (a
path line, so nothing is downloaded), never the checkout's own editable voicebench. The wheel
is built from a copy of the sources, so the build's own files (``build/``, ``*.egg-info``)
never appear in the checkout while other tests run commands there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import uuid
import venv
import zipfile
from pathlib import Path

import pytest
from processes import ROOT

pytestmark = pytest.mark.slow
PIP = [sys.executable, "-m", "pip"]
SOURCES = ("pyproject.toml", "README.md", "voicebench", "agents", "judges", "audio_fixtures")
"""What the wheel is built from (``voicebench/_data`` links to the three data folders)."""


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the environment's python, the voicebench package folder inside it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name,
                source / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = str(tmp / "dist")
    subprocess.run(
        [*PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation", str(source), "-w", dist],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp / "dist").glob("voicebench_heart-*.whl")
    # the build leaves nothing beside the sources (no build/, no *.egg-info)
    assert sorted(p.name for p in source.iterdir()) == sorted(SOURCES)
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "voicebench/_data/agents/local.toml",
        "voicebench/_data/judges/local.toml",
        "voicebench/_data/judges/pairs-gold.jsonl",
        "voicebench/_data/judges/rubric-call.md",
        "voicebench/_data/audio_fixtures/dialogues.jsonl",
        "voicebench/_data/audio_fixtures/dialogues-more.jsonl",
        "voicebench/_data/audio_fixtures/manifest.json",
        "voicebench/_data/audio_fixtures/personas.jsonl",
        "voicebench/reporting/templates/report.html.j2",
    ):
        assert shipped in names, shipped
    assert sum(n.startswith("voicebench/_data/audio_fixtures/audio/") for n in names) >= 80

    env = tmp / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            *PIP,
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return python, site / "voicebench"


def _voicebench(
    python: Path, cwd: Path, *args: str, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOICEBENCH_")} | extra_env
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(python.parent / "voicebench"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_installed_wheel_runs_from_an_empty_folder(installed, tmp_path):
    python, package = installed
    where = subprocess.run(
        [python, "-c", "import voicebench.builtin as b; print(b.DATA, b.CHECKOUT)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where == [str(package / "_data"), "False"]
    before = _tree(package)
    empty = tmp_path / "empty"
    empty.mkdir()

    scripted = _voicebench(python, empty, "run", "--agent", "scripted", "--limit", "1")
    assert scripted.returncode == 0, scripted.stderr[-3000:]
    (run_dir,) = (empty / "reports" / "runs").glob("scripted-300ms-*")
    header = json.loads((run_dir / "run.json").read_text())
    assert header["agent_spec_path"] == str(package / "_data" / "agents" / "scripted.toml")
    assert len((run_dir / "turns.jsonl").read_text().splitlines()) == 2

    check = _voicebench(python, empty, "judge-check", "--judge", "local")
    assert check.returncode == 0, check.stderr[-3000:]
    assert "judge card:" in check.stdout and "accuracy" in check.stdout.lower()

    # the docs' next commands on what those made, as a new user runs them
    for args, code in (
        (("--version",), 0),
        (("summary", str(run_dir)), 0),
        # one dialogue: passed by its value, too few dialogues for an interval (exit 4)
        (("check", str(run_dir), "--max-failed-pct", "100"), 4),
        (("report", str(run_dir), "--out", "reports/try1-latency"), 0),
        (("dialogues", "check", str(package / "_data" / "audio_fixtures" / "dialogues.jsonl")), 0),
    ):
        done = _voicebench(python, empty, *args)
        assert done.returncode == code, (args, done.stdout[-2000:], done.stderr[-3000:])
        assert "Pipecat" not in done.stderr, args  # no library banner
    assert (empty / "reports" / "try1-latency" / "index.html").is_file()
    # a built-in item that ships without its audio: made on first use, outside the install
    made = tmp_path / "made"
    more = _voicebench(
        python,
        empty,
        *("run", "--agent", "scripted", "--dialogues", "more", "--limit", "1", "--final-only"),
        *("--out", "reports/more"),
        VOICEBENCH_FIXTURE_CACHE=str(made),
    )
    assert more.returncode == 0, more.stderr[-3000:]
    assert "made on first use" in more.stdout + more.stderr
    turn = json.loads((empty / "reports" / "more" / "turns.jsonl").read_text().splitlines()[0])
    assert turn["dialogue_id"] == "reg-ongoing-depression-101" and turn["error"] is None
    assert len(list((made / "audio").glob("*.wav"))) >= 2

    missing = _voicebench(python, empty, "run", "--agent", "agents/scripted.toml")
    assert missing.returncode == 2 and "name it --agent scripted" in missing.stderr

    # everything written is under the folder the commands ran in, nothing in the install
    assert _tree(package) == before
    assert not any(p.name.endswith(".lock") for p in package.rglob("*"))


def _servers(mark: str) -> set[str]:
    """The LLM servers started by the command run with ``mark`` in its environment (servers of
    anything else on the machine are not this test's business)."""
    out = subprocess.run(["pgrep", "-f", "llama_cpp.server"], capture_output=True, text=True)
    ours = set()
    for pid in out.stdout.split():
        try:
            if mark.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                ours.add(pid)
        except OSError:
            pass  # gone meanwhile
    return ours


def test_the_demo_from_the_install_replays_judges_three_contestants_and_leaves_nothing_running(
    installed, tmp_path: Path
):
    """``voicebench demo`` as a user runs it after pip install, from an empty folder: the
    local agents' specs, their packaged models and the built-in audio resolve from the
    install, the offline judge judges, and no LLM server is left running."""
    pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
    python, package = installed
    before = _tree(package)
    from voicebench.judging.scorer import encoder_installed
    from voicebench.llm.local import split_model_available

    offline = encoder_installed() and split_model_available("qwen2.5-coder-0.5b")
    agents = ["local-smollm2", "local-qwen-0.5b"] if offline else ["local-smollm2"]
    mark = f"demo-test-{uuid.uuid4()}"
    out = tmp_path / "demo"
    result = _voicebench(
        python,
        tmp_path,
        *("demo", "--limit", "1", "--out", str(out)),
        *("--scenario", "noise:kind=pink,snr_db=20", "--seed", "1"),
        DEMO_TEST_MARK=mark,  # the LLM servers the demo starts inherit it
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for agent in agents:
        records = [
            json.loads(line) for line in (out / agent / "turns.jsonl").read_text().splitlines()
        ]
        # The demo replays each item's final turn, the one judged, on its written history.
        assert [r["final"] for r in records] == [True]
        # --scenario reaches every agent's run: each turn heard the seeker through noise.
        assert all(r["scenario"]["name"] == "noise" for r in records)
        for r in records:
            assert r["error"] is None, r["error"]
            assert r["reply_text"].strip()
            assert r["timing"]["ttft_ms"] > 0 and r["timing"]["ttfa_ms"] > r["timing"]["ttft_ms"]
            # Both local agents speculate and hold the audio: each hold is a stage of its own
            # (the text's is about zero), and the stages add up to TTFA.
            stages = r["timing"]["stages_ms"]
            assert stages["turn_hold"] is not None and stages["audio_hold"] is not None
            assert stages["model_audio"] is None  # (a speech-to-speech model's stage)
            assert sum(v for v in stages.values() if v is not None) == pytest.approx(
                r["timing"]["ttfa_ms"], abs=1e-6
            )
        assert f"run log: {out / agent}/turns.jsonl" in result.stdout
    assert "TTFA" in result.stdout and "llm_ttft" in result.stdout
    # The final replies are judged against each other and the human reference.
    verdicts = [
        json.loads(line) for line in (out / "judging" / "verdicts.jsonl").read_text().splitlines()
    ]
    contestants = {*agents, "human/reference"}
    pairs = len(contestants) * (len(contestants) - 1) // 2
    assert len(verdicts) == 2 * pairs  # one item, every pair, both orders
    assert {c for v in verdicts for c in (v["contestant_a"], v["contestant_b"])} == contestants
    report = json.loads((out / "report" / "report.json").read_text())
    assert {a["agent_name"] for a in report["agents"]} == set(agents)
    if offline:
        # The offline judge, whose card is shipped and printed.
        assert {v["judge"] for v in verdicts} == {"local/all-minilm-l6-v2"}
        assert "judge local:" in result.stdout and "pairs of real replies" in result.stdout
        assert "catches plain defects:" in result.stdout  # the written set's card, second
        assert report["judging"]["card"]["spec_name"] == "local"
        assert report["judging"]["card"]["real_replies"] is True
        # Its card is short of the trust bars: the ranking is withheld, with how to rank.
        assert "HEART leaderboard" not in result.stdout
        assert "quality ranking withheld" in result.stdout
        assert "voicebench judge-check --judge SPEC --gold real" in result.stdout
        # It shares no family with either agent: no own-family line.
        assert "its own family" not in " ".join(result.stdout.split())
    else:
        assert "offline judge unavailable" in result.stderr
        assert "second agent skipped" in result.stderr
    # It ends by writing the report and printing where it is.
    assert f"report: {out}/report/index.html" in result.stdout
    # Each step it announces says when it began, and the end how long the whole took.
    assert re.search(r"^\[0:\d\d\] cell 1/", result.stderr, re.MULTILINE), result.stderr[-2000:]
    assert re.search(r"^the demo took \d+:\d\d$", result.stdout, re.MULTILINE)
    # The demo is a campaign of its agents, one cell each, its plan kept as a campaign's is.
    plan = json.loads((out / "campaign.json").read_text())
    assert [Path(c["run_dir"]) for c in plan["cells"]] == [out / a for a in agents]
    assert plan["campaign"]["scenarios"] == [["noise:kind=pink,snr_db=20"]]
    assert plan["campaign"]["final_only"] is True
    assert all(c["judged"] for c in plan["cells"]) and plan["file"] is None
    assert {"latency_ecdf", "waterfall"} <= set(report["figures"])
    assert _servers(mark) == set()
    # the report the demo made, made again from its folder
    again = _voicebench(python, tmp_path, "report", str(out), "--out", "again")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Pipecat" not in again.stderr  # no library banner
    remade = json.loads((tmp_path / "again" / "report.json").read_text())
    assert remade["judging"]["card"] == report["judging"]["card"]
    assert [a["agent_name"] for a in remade["agents"]] == [
        a["agent_name"] for a in report["agents"]
    ]
    assert _tree(package) == before  # nothing written into the install
