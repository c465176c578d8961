"""The host a run was measured on: the machine, the software, and how busy the machine was
(``models``, with the one rule for a busy machine), read on a background thread while the run
measures (``sampler``)."""

from voicebench.host.models import (
    BUSY_LOAD_PER_CPU,
    BUSY_STEAL_PCT,
    HOST_FIELDS,
    SOFTWARE_FIELDS,
    Busy,
    Host,
    HostContrast,
    HostLoad,
    busy,
    contrast,
)
from voicebench.host.sampler import (
    SAMPLE_INTERVAL_S,
    HostSampler,
    Machine,
    Reading,
    summarize_readings,
)

__all__ = [
    "BUSY_LOAD_PER_CPU",
    "BUSY_STEAL_PCT",
    "HOST_FIELDS",
    "SAMPLE_INTERVAL_S",
    "SOFTWARE_FIELDS",
    "Busy",
    "Host",
    "HostContrast",
    "HostLoad",
    "HostSampler",
    "Machine",
    "Reading",
    "busy",
    "contrast",
    "summarize_readings",
]
