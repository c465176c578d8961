"""The audio formats of OpenAI's speech endpoint (``response_format``), made from the server's
16-bit mono PCM a piece at a time, so a reply streams as it is synthesized: ``mp3`` (its
default), ``opus`` (in Ogg), ``aac`` (ADTS), ``flac``, ``wav`` and ``pcm`` (raw 16-bit
little-endian). Every format but ``pcm`` is encoded by FFmpeg's encoders through PyAV, into a
stream that is never rewound: a WAV's sizes are left at their maximum and a FLAC's length
unknown, as for any streamed file.
"""

from __future__ import annotations

from dataclasses import dataclass

import av
import numpy as np

FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")
"""What ``response_format`` may be, as OpenAI names them."""
DEFAULT_FORMAT = "mp3"
"""OpenAI's default, used when a request names none."""


@dataclass(frozen=True)
class Format:
    content_type: str
    container: str | None
    """FFmpeg's muxer; None for raw PCM."""
    codec: str | None
    bit_rate: int | None = None
    """Set where the encoder's own default is far below what a speech API sends."""


_FORMATS = {
    "mp3": Format("audio/mpeg", "mp3", "libmp3lame", 64_000),  # LAME's own: 32 kb/s at 24 kHz
    "opus": Format("audio/opus", "ogg", "libopus"),
    "aac": Format("audio/aac", "adts", "aac"),
    "flac": Format("audio/flac", "flac", "flac"),
    "wav": Format("audio/wav", "wav", "pcm_s16le"),
    "pcm": Format("audio/pcm", None, None),
}
_OGG_PAGE_US = "20000"
"""An Ogg page is written every 20 ms of audio (FFmpeg's default waits a second), so Opus
streams as each piece is encoded."""


def content_type(fmt: str) -> str:
    """The ``Content-Type`` a reply in ``fmt`` is sent with (OpenAI's)."""
    return _FORMATS[fmt].content_type


class _Sink:
    """Where the muxer writes: a stream it cannot rewind, read back after each piece."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        out, self.chunks = b"".join(self.chunks), []
        return out


class StreamEncoder:
    """16-bit mono PCM at ``rate`` in, the bytes of ``fmt`` out: ``encode`` each piece as it
    comes (what is ready of the file so far), then ``finish`` (the rest)."""

    def __init__(self, fmt: str, rate: int) -> None:
        self.fmt, self.rate = _FORMATS[fmt], rate
        self._container = None
        if self.fmt.container is None or self.fmt.codec is None:
            return
        self._sink = _Sink()
        options = {"fflags": "+bitexact"}  # no encoder tag: the same audio, the same bytes
        if self.fmt.container == "ogg":
            options["page_duration"] = _OGG_PAGE_US
        self._container = av.open(self._sink, mode="w", format=self.fmt.container, options=options)
        self._stream: av.AudioStream = self._container.add_stream(  # type: ignore[assignment]
            self.fmt.codec, rate=rate, layout="mono"
        )
        if self.fmt.bit_rate is not None:
            self._stream.codec_context.bit_rate = self.fmt.bit_rate

    def encode(self, pcm: np.ndarray) -> bytes:
        samples = np.ascontiguousarray(pcm, dtype="<i2")
        if self._container is None:
            return samples.tobytes()
        if samples.size == 0:
            return b""
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = self.rate
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        return self._sink.take()

    def finish(self) -> bytes:
        if self._container is None:
            return b""
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()
        return self._sink.take()
