"""The local voice agent: a real pipecat pipeline built from an agent spec (Silero VAD,
faster-whisper ASR, an LLM over HTTP, Piper TTS) and driven in process, one spoken turn at a
time (``VoiceAgent``). Its ASR (``stt``) also transcribes the bot's replies for judging."""
