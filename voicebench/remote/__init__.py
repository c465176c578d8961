"""Calling a voice agent that runs elsewhere, over WebSocket, as a caller would: the caller
(``caller.RemoteAgent``), the wire protocols it speaks (``wire``: voicebench's ``pcm`` and
pipecat's frames; ``telephony``: Twilio and Telnyx media streams; ``codecs`` picks one), the
loudspeaker that keeps what the agent sends, and the arrival stamps of its messages."""
