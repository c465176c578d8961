"""The base of every model that crosses a stage boundary or lives in a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from voicebench.errors import InputError, MissingFileError

M = TypeVar("M", bound=BaseModel)


class FrozenModel(BaseModel):
    """Immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


READ = "read"
"""The validation context key that says a record comes from a file (``validate_record``)."""


class Versioned(FrozenModel):
    """A record of a file format that carries ``schema_version``. Reading one this voicebench
    cannot read fails in one line naming the file, the record and the field: a newer file
    (written by a later voicebench) asks for an upgrade, not for a guess at its fields."""

    READABLE: ClassVar[tuple[int, ...]] = (1,)
    """The versions this voicebench reads; the newest is the one it writes."""
    VERSION_REQUIRED: ClassVar[bool] = False
    """Whether a record read from a file must say its version (else it is taken as the one
    this voicebench writes)."""
    schema_version: int = 1

    @model_validator(mode="before")
    @classmethod
    def _says_version(cls, data: Any, info: ValidationInfo) -> Any:
        read = bool(info.context and info.context.get(READ))
        if read and cls.VERSION_REQUIRED and isinstance(data, dict):
            return {"schema_version": None, **data}  # (a missing one is refused below)
        return data

    @field_validator("schema_version", mode="before")
    @classmethod
    def _readable(cls, version: Any) -> Any:
        if version not in cls.READABLE:
            readable = ", ".join(map(str, cls.READABLE))
            if version is None:
                raise ValueError(f"missing (this voicebench reads {readable})")
            newer = isinstance(version, int) and version > max(cls.READABLE)
            raise ValueError(
                f"version {version!r} is {'newer than' if newer else 'not'} what this "
                f"voicebench reads ({readable})"
                + ("; upgrade voicebench to read it" if newer else "")
            )
        return version


NESTED_TOO_DEEPLY = "nested too deeply to read"


def read_toml(path: Path) -> dict:
    """A TOML file's table; unreadable or invalid files are an InputError naming the file."""
    import tomllib

    try:
        return tomllib.loads(read_utf8(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", file=path) from None
    except RecursionError:
        raise InputError(f"not valid TOML ({NESTED_TOO_DEEPLY})", file=path) from None


def parse_json(text: str | bytes, *, file: str | Path, record: str | None = None) -> Any:
    """``text`` parsed as JSON; anything unreadable, deeply nested structures included, is an
    InputError naming the file and the record (``line N`` of a whole file when not given)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg})", file=file, record=record or f"line {exc.lineno}"
        ) from None
    except RecursionError:
        raise InputError(
            f"not valid JSON ({NESTED_TOO_DEEPLY})", file=file, record=record
        ) from None


def read_json(path: Path) -> Any:
    """A JSON file's value; errors name the file (and the line)."""
    return parse_json(read_utf8(path), file=path)


def read_bytes(path: Path) -> bytes:
    """A file's bytes; a missing or unreadable file is an InputError naming it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise MissingFileError("file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=path) from None


def read_utf8(path: Path) -> str:
    """A file's text; unreadable or non-UTF-8 files are an InputError naming the file."""
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=path) from None


def first_error(exc: ValidationError) -> tuple[str, str]:
    """The dotted location and message of a validation error's first problem."""
    err = exc.errors()[0]
    # A key from the file may hold anything: show odd ones quoted, so the error stays one line.
    loc = (
        ".".join(
            str(p) if str(p).isprintable() and str(p).strip() else repr(p)
            for p in err.get("loc", ())
        )
        or "(root)"
    )
    msg = " ".join(str(err.get("msg", "invalid")).split())
    return loc, msg


def validate_record(model: type[M], data: Any, *, file: str | Path, record: str | None = None) -> M:
    """Validate ``data`` as ``model``; a failure names the file, the record and the field."""
    try:
        return model.model_validate(data, context={READ: True})
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise InputError(msg, file=file, record=record, field=loc) from None
    except RecursionError:
        raise InputError(NESTED_TOO_DEEPLY, file=file, record=record) from None


def read_model(model: type[M], path: Path) -> M:
    """One JSON file as ``model``; errors name the file (and the line or field)."""
    return validate_record(model, read_json(path), file=path)
