"""An endpoint made reachable: its provider's helper server started when it needs one."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from voicebench.llm.endpoint import Endpoint
from voicebench.llm.registry import Provider, get_provider


@dataclass(frozen=True)
class Connection:
    """An endpoint made reachable: its provider, the base URL to call (a helper server's when
    one was started; None for the SDK's default) and the key to send."""

    endpoint: Endpoint
    provider: Provider
    base_url: str | None
    key: str


async def connect(
    endpoint: Endpoint, stack: contextlib.AsyncExitStack, *, warm_prompt: str | None = None
) -> Connection:
    """Start what ``endpoint`` needs (kept alive by ``stack``) and say how to reach it."""
    provider = get_provider(endpoint.provider)
    base_url = endpoint.url
    if provider.start is not None:
        base_url = await provider.start(endpoint, stack, warm_prompt)
    return Connection(endpoint, provider, base_url, endpoint.api_key() or provider.fallback_key)
