"""One layer for everything that talks to an LLM.

An ``Endpoint`` says where a model is and how to ask it; ``connect`` makes it reachable
(starting a helper server when its provider needs one); ``open_chat`` asks it one thing at a
time (judges, classifiers, rewriters) and ``pipecat_llm`` streams it inside a voice pipeline.
Failures are classified once (``LLMCallError``) and retried by one policy (``ask_parsed``).
This package imports no stage of voicebench; every stage that needs an LLM imports it.
"""

from voicebench.llm import builtin as _builtin  # noqa: F401  (registers the built-in providers)
from voicebench.llm.chat import AnthropicChat, OpenAIChat, open_chat
from voicebench.llm.connect import Connection, connect
from voicebench.llm.endpoint import Endpoint
from voicebench.llm.helper import HOST, HelperServer, free_port
from voicebench.llm.local import LlamaServer, resolve_gguf
from voicebench.llm.pipecat import OnRequestSent, pipecat_llm
from voicebench.llm.registry import (
    AnswerFormat,
    Provider,
    ServedModel,
    get_provider,
    providers,
    register_provider,
)
from voicebench.llm.retry import (
    Asked,
    ChatClient,
    ChatText,
    LLMCallError,
    RetryPolicy,
    ask_parsed,
    backoff_s,
    classify,
)

__all__ = [
    "HOST",
    "AnswerFormat",
    "AnthropicChat",
    "Asked",
    "ChatClient",
    "ChatText",
    "Connection",
    "Endpoint",
    "HelperServer",
    "LLMCallError",
    "LlamaServer",
    "OnRequestSent",
    "OpenAIChat",
    "Provider",
    "RetryPolicy",
    "ServedModel",
    "ask_parsed",
    "backoff_s",
    "classify",
    "connect",
    "free_port",
    "get_provider",
    "open_chat",
    "pipecat_llm",
    "providers",
    "register_provider",
    "resolve_gguf",
]
