"""The error hierarchy. Library code raises these; only the CLI turns them into one line and an
exit code."""

from __future__ import annotations

from pathlib import Path


class VoicebenchError(Exception):
    """Base of every error voicebench raises on purpose."""

    exit_code = 1


class InputError(VoicebenchError):
    """Bad user input: a file, a record in it and a field are named.

    Rendered as ``file: record: field: message``; absent parts are left out.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        record: str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.record = record
        self.field = field
        self.message = message
        parts = [p for p in (self.file, record, field) if p]
        super().__init__(": ".join([*parts, message]))


class MissingFileError(InputError):
    """A file named by the user is not there (the command line adds, when the path names a
    file voicebench ships, how to name the shipped one)."""

    def __init__(self, what: str, file: str | Path) -> None:
        super().__init__(f"{what} not found", file=file)


class MissingExtraError(VoicebenchError):
    """An optional dependency of a provider is not installed."""

    exit_code = 3

    def __init__(self, extra: str, package: str | None = None) -> None:
        self.extra = extra
        pkg = package or extra
        super().__init__(f"the '{extra}' provider needs the package '{pkg}': pip install '{pkg}'")


class MissingSecretError(VoicebenchError):
    """An agent or judge spec names an environment variable that is not set."""

    exit_code = 2

    def __init__(self, file: str | Path, field: str, variable: str) -> None:
        self.variable = variable
        super().__init__(
            f"{file}: {field}: environment variable {variable} is not set "
            f"(export {variable}=... to use this spec)"
        )


class SecretDestinationWarning(UserWarning):
    """A spec sends a key or token from this machine's environment to a host that is neither
    the provider's own nor this machine: worth a look when the spec came from someone else."""


class RunError(VoicebenchError):
    """A run could not start or continue (not a failure inside one turn, which is recorded)."""


def redact(text: str, *secrets: str | None, limit: int = 500) -> str:
    """``text`` with every secret replaced by ``***``, cut to ``limit`` characters.

    Providers sometimes echo the credentials they refused; anything that stores or shows
    their error text passes it through here first. Values shorter than 6 characters are
    not treated as secrets (they would blank out ordinary words).
    """
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text[:limit]
