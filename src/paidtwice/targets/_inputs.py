"""A handler's input made from its input JSON schema, for a sweep given no `--input`.

The schema is the one the app registers: the `input.jsonSchema` of the handler in the endpoint's discovery
manifest (the SDK derives it from the handler's type hint: a pydantic model, a dataclass, a msgspec Struct,
a primitive). `input_schema` reads it from a manifest; `made_input` makes a value valid against it with
`paidtwice.schema.value_for`, derived from the seed and the handler's name, so every run calls the handler
with the same input. A schema no value can be made for is a `UsageError` of one line asking for `--input`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paidtwice._exceptions import UnsatisfiableSchema, UsageError
from paidtwice.schema import value_for

__all__ = ["DEFAULT_INPUT_SEED", "input_schema", "made_input"]

DEFAULT_INPUT_SEED = 0


def input_schema(manifest: Mapping[str, Any], service: str, handler: str) -> Any:
    """The JSON schema of `service`/`handler`'s input in a discovery manifest; None when the manifest gives
    none (a handler without a typed input). `UsageError` when the manifest has no such handler."""
    for entry in manifest.get("services") or []:
        if entry.get("name") != service:
            continue
        for found in entry.get("handlers") or []:
            if found.get("name") == handler:
                return (found.get("input") or {}).get("jsonSchema")
    raise UsageError(f"the app's discovery manifest has no handler {service}/{handler}")


def made_input(schema: Any, *, handler: str, seed: int = DEFAULT_INPUT_SEED) -> Any:
    """An input for `handler` (SERVICE/HANDLER) valid against `schema`, the same for the same seed; None
    when there is no schema (the handler takes no input, or any)."""
    if schema is None:
        return None
    try:
        return value_for(schema, seed=f"{seed}\0{handler}")
    except UnsatisfiableSchema as err:
        raise UsageError(
            f"cannot make an input for {handler} from its schema ({err}): give one with --input JSON"
        ) from None
