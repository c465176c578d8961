"""Calling a voice agent that runs elsewhere, as a caller would: the WebSocket caller
(``caller.RemoteAgent``), the wire protocols it speaks (``wire``: voicebench's ``pcm`` and
pipecat's frames; ``telephony``: Twilio and Telnyx media streams; ``codecs`` picks one), the
WebRTC caller (``webrtc.WebRTCAgent``, a browser's call), the SIP caller
(``sip_caller.SipAgent``, a phone's call: ``sip`` signalling, ``sip_sdp`` its SDP, ``rtp``
media, ``jitter`` playout), the loudspeaker that keeps what the agent sends, and the arrival
stamps of its messages."""


def caller_class(protocol: str) -> type:
    """What calls an agent on ``protocol``: the WebRTC caller, the SIP one, or the WebSocket
    one."""
    if protocol == "sip":
        from voicebench.remote.sip_caller import SipAgent

        return SipAgent
    if protocol == "webrtc":
        from voicebench.remote.webrtc import WebRTCAgent

        return WebRTCAgent
    from voicebench.remote.caller import RemoteAgent

    return RemoteAgent
