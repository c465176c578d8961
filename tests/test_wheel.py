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
import shutil
import subprocess
import sys
import sysconfig
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
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "voicebench/_data/agents/local.toml",
        "voicebench/_data/judges/local.toml",
        "voicebench/_data/judges/pairs-gold.jsonl",
        "voicebench/_data/judges/rubric-call.md",
        "voicebench/_data/audio_fixtures/dialogues.jsonl",
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


def _voicebench(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOICEBENCH_")}
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

    # One local agent: its spec, its packaged model and the built-in audio resolve from the
    # install as every agent's do (test_demo runs the demo's whole line-up).
    demo = _voicebench(python, empty, "demo", "--limit", "1", "--no-judge", "--agent", "local")
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "TTFA" in demo.stdout
    assert list((empty / "reports" / "runs").glob("demo-*"))

    # the docs' next commands on what those made, as a new user runs them
    (demo_dir,) = (empty / "reports" / "runs").glob("demo-*")
    for args in (
        ("--version",),
        ("summary", str(run_dir)),
        ("check", str(run_dir), "--max-failed-pct", "100"),
        ("report", str(run_dir), "--out", "reports/try1-latency"),
        ("report", str(demo_dir), "--out", "reports/demo-again"),
        ("dialogues", "check", str(package / "_data" / "audio_fixtures" / "dialogues.jsonl")),
    ):
        done = _voicebench(python, empty, *args)
        assert done.returncode == 0, (args, done.stderr[-3000:])
        assert "Pipecat" not in done.stderr, args  # no library banner
    assert (empty / "reports" / "demo-again" / "index.html").is_file()
    missing = _voicebench(python, empty, "run", "--agent", "agents/scripted.toml")
    assert missing.returncode == 2 and "name it --agent scripted" in missing.stderr

    # everything written is under the folder the commands ran in, nothing in the install
    assert _tree(package) == before
    assert not any(p.name.endswith(".lock") for p in package.rglob("*"))
