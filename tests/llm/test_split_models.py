"""Models shipped as numbered parts in several packages: joined once, checked by sha256,
reused; a wrong part is refused and leaves nothing behind."""

from __future__ import annotations

import hashlib
import sys

import pytest

from voicebench.errors import MissingExtraError, RunError
from voicebench.llm import local
from voicebench.llm.local import SplitModel, assemble, resolve_gguf


@pytest.fixture
def parts(tmp_path, monkeypatch):
    """Three tiny part packages on sys.path, and the cache in a temporary folder."""
    chunks = [b"GGUF" + bytes(range(50)), b"middle" * 100, b"end"]
    for i, chunk in enumerate(chunks, start=1):
        pkg = tmp_path / "site" / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("VOICEBENCH_MODEL_CACHE", str(tmp_path / "cache"))
    whole = b"".join(chunks)
    model = SplitModel(
        "fake.gguf",
        ("fake_model_part1", "fake_model_part2", "fake_model_part3"),
        len(whole),
        hashlib.sha256(whole).hexdigest(),
    )
    monkeypatch.setitem(local.SPLIT_MODELS, "fake-model", model)
    yield whole, model, tmp_path / "cache"
    for name in model.packages:
        sys.modules.pop(name, None)


def test_parts_are_joined_checked_and_reused(parts):
    whole, model, cache = parts
    path = resolve_gguf("fake-model")
    assert path == cache / "fake.gguf" and path.read_bytes() == whole
    assert (cache / "fake.gguf.sha256").read_text().strip() == model.sha256
    stamp = path.stat().st_mtime_ns
    assert assemble("fake-model") == path and path.stat().st_mtime_ns == stamp  # not joined again


def test_a_wrong_checksum_is_refused_and_leaves_no_file(parts, monkeypatch):
    _, model, cache = parts
    bad = SplitModel(model.filename, model.packages, model.size, "0" * 64)
    monkeypatch.setitem(local.SPLIT_MODELS, "fake-model", bad)
    with pytest.raises(RunError, match="expected 0000"):
        assemble("fake-model")
    assert not (cache / "fake.gguf").exists() and list(cache.iterdir()) == []


def test_a_missing_part_names_the_extra(parts, monkeypatch):
    _, model, _ = parts
    gone = SplitModel(model.filename, (*model.packages, "fake_model_part_missing"), 1, "0" * 64)
    monkeypatch.setitem(local.SPLIT_MODELS, "fake-model", gone)
    assert not local.split_model_installed("fake-model")
    with pytest.raises(MissingExtraError, match=r"voicebench-heart\[offline-judge\]"):
        assemble("fake-model")


def test_the_demo_knows_which_shipped_specs_need_the_extra(monkeypatch):
    from pathlib import Path

    from voicebench.demo import missing_models
    from voicebench.judging import scorer

    monkeypatch.setattr(local, "split_model_installed", lambda name: False)
    monkeypatch.setattr(local, "_joined", lambda model: None)
    monkeypatch.setattr(scorer, "encoder_installed", lambda: False)
    assert missing_models(Path("judges/local-checklist.toml")) == ["qwen2.5-coder-1.5b"]
    assert missing_models(Path("judges/local.toml")) == ["all-minilm-l6-v2"]
    assert missing_models(Path("agents/local-qwen.toml")) == ["qwen2.5-coder-0.5b"]
    assert missing_models(Path("agents/local.toml")) == []
    assert missing_models(Path("judges/local-smoke.toml")) == []
    # a model joined into the cache before needs no packages
    monkeypatch.setattr(
        local, "_joined", lambda model: Path(model.filename) if "1.5b" in model.filename else None
    )
    monkeypatch.setattr(scorer, "encoder_installed", lambda: True)
    assert missing_models(Path("judges/local-checklist.toml")) == []
    assert missing_models(Path("judges/local.toml")) == []
    assert missing_models(Path("agents/local-qwen.toml")) == ["qwen2.5-coder-0.5b"]


def test_the_install_helper_reports_a_bad_part_in_one_line(parts, monkeypatch, capsys):
    _, model, _ = parts
    monkeypatch.setattr(
        local,
        "SPLIT_MODELS",
        {"fake-model": SplitModel(model.filename, model.packages, model.size, "0" * 64)},
    )
    with pytest.raises(SystemExit) as exit_:
        local.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: fake-model: the joined parts")
