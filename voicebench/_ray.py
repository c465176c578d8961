"""Ray for whatever runs across machines (campaigns, loads): connected to a cluster, or a
local instance started on 127.0.0.1 and stopped at the end; usage reporting off."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from voicebench.errors import InputError


@contextmanager
def ray_session(address: str | None) -> Iterator[Any]:
    """Ray, connected to ``address`` or started here on 127.0.0.1; stopped at the end."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ["RAY_ENABLE_AUTO_CONNECT"] = "0"  # nothing starts a second Ray by accident
    if address is None:
        # a single machine: every Ray service on loopback
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    try:
        import ray
    except ImportError as exc:
        raise InputError(
            "--backend ray needs Ray: pip install 'voicebench-heart[ray]'", field="--backend"
        ) from exc
    kwargs: dict[str, Any] = dict(log_to_driver=False, configure_logging=False)
    if address is None:
        # this machine's cores, no more: a cell declares the cores its timing needs
        kwargs |= dict(num_cpus=os.cpu_count() or 1, include_dashboard=False)
    else:
        kwargs |= dict(address=address)
    ray.init(**kwargs)
    try:
        yield ray
    finally:
        ray.shutdown()
