"""Gemini Live as a speech-to-speech agent's model (``[s2s] provider = "gemini-live"``): pipecat's
``GeminiLiveLLMService``, made to replay a dialogue one turn at a time and to report its
failures instead of hiding them.

- **History.** The Live API can add to a conversation but not take from it, so before each turn
  the session is opened again and the history asked for is sent as its first content (without
  asking for an answer): every turn is teacher-forced, as with every agent. The reconnect
  happens before the caller speaks, outside the timed span.
- **Turn detection.** ``server``: the model's automatic activity detection ends the turn and
  it answers by itself; the API says nothing when it decides the caller has finished, so the
  waterfall has no endpointing stage and ``model first audio`` runs from the true end of
  speech. ``local``: automatic detection is off and voicebench's VAD sends the activity's
  start and end (pipecat's own locally driven turns).
- **Failures.** The service ends a session by closing the socket, with a code and a reason on
  an error: a close with an error code is the model's error (``model_error``, its reason
  kept); any other close is ``closed_mid_turn``. pipecat would reconnect and carry on; a
  benchmark records the turn as failed, and the next turn's reconnect starts afresh. An answer
  that completes with no audio still ends the response, so it is recorded as ``no_audio``.
- **Where it is.** ``base_url`` is ``wss://host`` (the service's own by default); a
  ``ws://`` URL, a server on this machine such as the scripted one, is used as given
  (google-genai would otherwise always ask for TLS).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from pipecat.frames.frames import LLMFullResponseEndFrame, LLMFullResponseStartFrame

from voicebench.agentspec import AgentSpec
from voicebench.errors import RunError

IN_RATE = 16_000
"""The caller's audio as the Live API takes it."""
CLOSED_OK = (1000, 1001, 1005, 1006)
"""Close codes that say nothing went wrong on the model's side: normal, going away, none,
dropped. Any other is the model's error."""
READY_S = 15.0
"""How long a reconnected session may take to be ready for the caller's audio."""


def gemini_service(spec: AgentSpec, base_url: str | None, key: str, lost: list[str]) -> Any:
    """pipecat's Gemini Live service for ``spec``, able to start each turn from a history, and
    putting in ``lost`` why its session closed unasked (an error close is an error frame)."""
    from google.genai.types import HttpOptions
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService, GeminiVADParams

    s2s = spec.s2s
    assert s2s is not None
    url = urlsplit(base_url) if base_url else None
    where = url.geturl() if url else "Gemini Live"

    class Service(GeminiLiveLLMService):
        def create_client(self) -> None:
            super().create_client()
            if url is not None and url.scheme == "ws":
                api = self._client._api_client
                api._websocket_base_url = lambda: url.geturl()  # type: ignore[method-assign]
                api._websocket_ssl_ctx = {}

        async def _connection_task_handler(self, config: Any) -> None:
            try:
                await super()._connection_task_handler(config)
            except Exception as exc:  # refused, or the handshake failed: this turn has no model
                if not lost:
                    lost.append(f"the model's connection failed: {exc}")

        async def set_history(self, history: list[dict[str, str]]) -> None:
            """Open the session again with ``history`` as its content (no answer asked)."""
            await self._disconnect()
            lost.clear()
            self._session_resumption_handle = None
            self._consecutive_failures = 0
            self._needs_initial_turn_complete_message = False
            self._context = LLMContext(messages=list(history))  # type: ignore[arg-type]
            self._inference_on_context_initialization = False
            self._run_llm_when_session_ready = True
            await self._connect()
            try:
                async with asyncio.timeout(READY_S):
                    while not self._ready_for_realtime_input:
                        if lost:
                            return
                        await asyncio.sleep(0.005)
            except TimeoutError:
                raise RunError(f"{where}: the session was not ready in {READY_S:g} s") from None

        async def _handle_connection_error(self, error: Exception) -> bool:
            code = getattr(error, "code", None)  # google-genai's APIError: the close's code
            said = getattr(error, "message", None) or getattr(error, "status", None) or error
            if isinstance(code, int) and code not in CLOSED_OK:
                await self.push_error(error_msg=f"the model closed its session ({code}): {said}")
            elif not lost:
                lost.append(
                    f"the model closed its connection (code {code})"
                    if isinstance(code, int)
                    else f"the model's connection failed: {error}"
                )
            self.set_audio_input_paused(True)  # nothing to send it to until the next turn
            return False  # the turn failed; the next one opens a new session

        async def _connect(self, session_resumption_handle: str | None = None) -> None:
            if self._context is None:
                return  # (at the pipeline's start: each turn opens its own session)
            self.set_audio_input_paused(False)
            await super()._connect(session_resumption_handle)

        async def _handle_msg_turn_complete(self, message: Any) -> None:
            if not self._bot_is_responding:  # an answer with nothing in it still ended
                await self.push_frame(LLMFullResponseStartFrame())
                await self.push_frame(LLMFullResponseEndFrame())
            await super()._handle_msg_turn_complete(message)

    settings = Service.Settings(
        model=s2s.model,
        system_instruction=spec.system_prompt,
        vad=GeminiVADParams(disabled=True) if s2s.turn_detection == "local" else None,
    )
    if s2s.voice:
        settings.voice = s2s.voice
    options: dict[str, Any] = {"api_key": key, "settings": settings}
    if url is not None:
        https = url._replace(scheme="https" if url.scheme == "wss" else "http").geturl()
        options["http_options"] = HttpOptions(base_url=https)
    return Service(**options)
