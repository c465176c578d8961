"""Each wire protocol's codec by name: the caller's side (``codec``) and the agent's
(``agent_codec``), the same object for the two symmetric protocols (``pcm``, ``pipecat``)."""

from __future__ import annotations

from voicebench.remote.telephony import TELEPHONY, TelephonyAgentSide, TelephonyCaller
from voicebench.remote.wire import MediaCodec, PCMCodec, PipecatCodec


def codec(
    protocol: str, sample_rate: int, parameters: dict[str, str] | None = None
) -> PCMCodec | PipecatCodec | TelephonyCaller:
    """The caller's side of ``protocol``; ``parameters`` are a phone call's custom parameters."""
    if protocol in TELEPHONY:
        return TelephonyCaller(protocol, parameters)
    if protocol in ("webrtc", "sip"):
        return MediaCodec(sample_rate)
    return PCMCodec(sample_rate) if protocol == "pcm" else PipecatCodec(sample_rate)


def agent_codec(protocol: str, sample_rate: int) -> PCMCodec | PipecatCodec | TelephonyAgentSide:
    """The agent's side of ``protocol``."""
    if protocol in TELEPHONY:
        return TelephonyAgentSide(protocol)
    if protocol in ("webrtc", "sip"):
        return MediaCodec(sample_rate)
    return PCMCodec(sample_rate) if protocol == "pcm" else PipecatCodec(sample_rate)
