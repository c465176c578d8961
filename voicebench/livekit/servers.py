"""The local servers a LiveKit agent's spec asks voicebench to start for it (``[livekit]
serve_speech``, ``serve_llm``): the speech endpoints (``voicebench.live``'s faster-whisper and
Piper behind OpenAI's audio API) and the packaged LLM on llama.cpp, each on a free port of
127.0.0.1 or on the one the spec names (``speech_port``, ``llm_port``: for code that writes its
URLs out). Their URLs are put in the environment, where the user's code reads them:
``VOICEBENCH_SPEECH_URL`` and ``VOICEBENCH_LLM_URL``. Every session in the process shares one
of each (a load runs many); the last one to stop stops them."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from voicebench.agentspec import LiveKitSpec

SPEECH_URL = "VOICEBENCH_SPEECH_URL"
LLM_URL = "VOICEBENCH_LLM_URL"


@dataclass
class _Shared:
    url: str
    stack: contextlib.AsyncExitStack
    users: int = 0


@dataclass
class _Servers:
    running: dict[tuple[str, str], _Shared] = field(default_factory=dict)
    lock: asyncio.Lock | None = None


_SERVERS = _Servers()


async def _start(kind: str, name: str, port: int | None) -> _Shared:
    stack = contextlib.AsyncExitStack()
    try:
        if kind == "speech":
            from voicebench.pipeline.speech_api import SpeechServer

            speech = await stack.enter_async_context(SpeechServer(stt_model=name, port=port))
            url = speech.base_url
        else:
            from voicebench.llm.local import LlamaServer, resolve_gguf

            llm = LlamaServer(resolve_gguf(name), model_alias=name, port=port)
            url = (await stack.enter_async_context(llm)).base_url
    except BaseException:
        await stack.aclose()
        raise
    return _Shared(url, stack)


@contextlib.asynccontextmanager
async def local_servers(spec: LiveKitSpec) -> AsyncIterator[dict[str, str]]:
    """Start (or share) the servers ``spec`` asks for; their URLs by variable, set in the
    environment too while they run."""
    wanted = []
    if spec.serve_speech is not None:
        wanted.append(("speech", spec.serve_speech, spec.speech_port, SPEECH_URL))
    if spec.serve_llm is not None:
        wanted.append(("llm", spec.serve_llm, spec.llm_port, LLM_URL))
    if _SERVERS.lock is None:
        _SERVERS.lock = asyncio.Lock()
    taken: list[tuple[str, str]] = []
    urls: dict[str, str] = {}
    try:
        for kind, name, port, variable in wanted:
            async with _SERVERS.lock:
                shared = _SERVERS.running.get((kind, name))
                if shared is None:
                    shared = _SERVERS.running[(kind, name)] = await _start(kind, name, port)
                shared.users += 1
            taken.append((kind, name))
            urls[variable] = os.environ[variable] = shared.url
        yield urls
    finally:
        for key in taken:
            async with _SERVERS.lock:
                shared = _SERVERS.running[key]
                shared.users -= 1
                if shared.users == 0:
                    del _SERVERS.running[key]
                    await shared.stack.aclose()
