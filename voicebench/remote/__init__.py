"""Calling a voice agent that runs elsewhere, as a caller would: the WebSocket caller
(``caller.RemoteAgent``), the wire protocols it speaks (``wire``: voicebench's ``pcm`` and
pipecat's frames; ``telephony``: Twilio and Telnyx media streams; ``codecs`` picks one), the
WebRTC caller (``webrtc.WebRTCAgent``, a browser's call), the loudspeaker that keeps what the
agent sends, and the arrival stamps of its messages."""


def caller_class(protocol: str) -> type:
    """What calls an agent on ``protocol``: the WebRTC caller, or the WebSocket one."""
    if protocol == "webrtc":
        from voicebench.remote.webrtc import WebRTCAgent

        return WebRTCAgent
    from voicebench.remote.caller import RemoteAgent

    return RemoteAgent
