"""PT006 in TypeScript: the HTTP writes a `ctx.run` action makes without an idempotency key. The action runs
again when the attempt that ran it dies before its result is journaled; a write without a key then happens
twice. The TypeScript counterpart of `_writes`."""

from __future__ import annotations

from collections.abc import Iterator

from paidtwice.lint._rules import IDEMPOTENCY_HEADER
from paidtwice.lint._ts_index import Node, TsModule, arguments, property_value, text

__all__ = ["writes_without_key"]

_WRITE_METHODS = {"post", "put", "patch", "delete"}
_FETCH = {"fetch", "undici.fetch", "node-fetch.default"}
_AXIOS = "axios.default"
_MODEL_PATHS = ("/chat/completions", "/completions", "/embeddings", "/responses", "/messages")


def _model_api(url: Node | None) -> bool:
    """A POST to a model API (its URL's text ends like OpenAI's or Anthropic's endpoints): paid for again
    when repeated, which journaling prevents, but it changes nothing on the other side."""
    written = text(url).strip("\"'`").rstrip("/")
    return bool(written) and written.endswith(_MODEL_PATHS)


def _keyed(headers: Node | None, spelled: bool) -> bool:
    """The headers hold the key: an object literal with it, or built elsewhere in a function spelling it."""
    if headers is None:
        return False
    if headers.type != "object":
        return spelled
    for entry in headers.named_children:
        key = entry.child_by_field_name("key") if entry.type == "pair" else None
        if key is not None and text(key).strip("\"'").lower() == IDEMPOTENCY_HEADER:
            return True
        if entry.type == "spread_element":
            return spelled
    return False


def writes_without_key(module: TsModule, owner: Node, local: set[str]) -> Iterator[tuple[str, Node]]:
    """HTTP writes (POST, PUT, PATCH, DELETE by fetch or axios) under `owner` that send no Idempotency-Key
    header, with the call."""
    spelled = IDEMPOTENCY_HEADER in text(owner).lower()
    stack = [owner]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "call_expression":
            continue
        callee = node.child_by_field_name("function")
        qualified = module.qualify(callee, local) if callee is not None else None
        args = arguments(node)
        if qualified in _FETCH:
            options = args[1] if len(args) > 1 else None
            method = text(property_value(options, "method")).strip("\"'`").lower()
            if method not in _WRITE_METHODS or (args and _model_api(args[0])):
                continue
            if not _keyed(property_value(options, "headers"), spelled):
                yield f"{qualified}() {method.upper()}", node
        elif qualified is not None and qualified.startswith(f"{_AXIOS}."):
            method = qualified.rsplit(".", 1)[-1]
            if method not in _WRITE_METHODS or (args and _model_api(args[0])):
                continue
            config = args[1] if method == "delete" else (args[2] if len(args) > 2 else None)
            if not _keyed(property_value(config, "headers"), spelled):
                yield f"axios.{method}()", node
