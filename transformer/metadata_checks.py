"""Reading typed fields out of a model file's metadata JSON: every problem one `ModelFormatError`
that names the field (`transformer.metadata` and `transformer.output_metadata` share it)."""

from __future__ import annotations

import json
from math import isfinite
from typing import Any

from transformer.errors import ModelFormatError
from transformer.vocab import Atom, token_key


class Checker:
    """Reads typed fields out of the JSON, raising `ModelFormatError` that names the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, reason: str) -> ModelFormatError:
        return ModelFormatError(self.path, reason)

    def get(self, obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
        if key not in obj:
            raise self.fail(f"metadata is missing '{where}{key}'")
        value = obj[key]
        # bool is an int in Python, but never a valid count or id here.
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            raise self.fail(
                f"metadata field '{where}{key}' must be {_kind_name(kind)}, got {json_text(value)}"
            )
        return value

    def atoms(self, values: list[Any], where: str, *, allow_null: bool) -> tuple[Atom, ...]:
        kinds: tuple[type, ...] = (str, int, float, bool) + ((type(None),) if allow_null else ())
        for value in values:
            if not isinstance(value, kinds) or (isinstance(value, float) and not isfinite(value)):
                raise self.fail(
                    f"metadata field '{where}' holds {json_text(value)}, which is not a token value"
                )
        keys = [token_key(value) for value in values]
        if len(set(keys)) != len(keys):
            raise self.fail(f"metadata field '{where}' lists a value twice")
        return tuple(values)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
        bool: "true or false",
    }
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kind))


def json_text(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
