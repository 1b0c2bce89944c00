"""PT006: the HTTP writes a `ctx.run` action makes without an idempotency key. The action runs again when the
attempt that ran it dies before its result is journaled; a write without a key then happens twice."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from paidtwice.lint._index import Scope, attr_chain
from paidtwice.lint._rules import IDEMPOTENCY_HEADER, mutating_call, mutating_method

__all__ = ["writes_without_key"]


def _is_key(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lower() == IDEMPOTENCY_HEADER
    )


_MODEL_PATHS = ("/chat/completions", "/completions", "/embeddings", "/responses", "/messages")


def _model_api(call: ast.Call) -> bool:
    """A POST to a model API (its URL's literal text ends like OpenAI's or Anthropic's endpoints): a model
    call is paid for again, which journaling it prevents, but it changes nothing on the other side."""
    verb = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    position = 1 if verb == "request" else 0  # request("POST", url) / post(url)
    url = call.args[position] if len(call.args) > position else None
    url = url or next((k.value for k in call.keywords if k.arg == "url"), None)
    if url is None:
        return False
    literal = [n.value for n in ast.walk(url) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return bool(literal) and literal[-1].rstrip("/").endswith(_MODEL_PATHS)


def writes_without_key(owner: ast.AST, scope: Scope) -> Iterator[tuple[str, int]]:
    """HTTP writes (POST, PUT, PATCH, DELETE) under `owner` that send no Idempotency-Key header.

    A call sends the key when its `headers=` is a dict literal with that key, or is a name and the key is
    spelled somewhere in the same function (headers built up before the call)."""
    spelled = any(_is_key(n) for n in ast.walk(owner))
    for node in ast.walk(owner):
        # Clients bound in the action itself: `async with httpx.AsyncClient() as client`, `c = Client()`.
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                made = scope.constructed(item.context_expr)
                if isinstance(item.optional_vars, ast.Name) and made is not None:
                    scope.local_instances[item.optional_vars.id] = made
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            made = scope.constructed(node.value)
            if made is not None:
                scope.local_instances[node.targets[0].id] = made
    for node in ast.walk(owner):
        if not isinstance(node, ast.Call):
            continue
        first = node.args[0] if node.args else None
        literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        what = None
        qualified = scope.qualify(node.func)
        if qualified is not None and mutating_call(qualified, literal):
            what = qualified
        else:
            base, attrs = attr_chain(node.func)
            kind = None
            if isinstance(base, ast.Name):
                kind = scope.local_instances.get(base.id) or scope.module.instances.get(base.id)
            elif isinstance(base, ast.Call):
                kind = scope.constructed(base)
            if kind is not None and mutating_method(kind, attrs, literal):
                what = ".".join([kind, *attrs])
        if what is None or _model_api(node):
            continue
        headers = next((k.value for k in node.keywords if k.arg == "headers"), None)
        if isinstance(headers, ast.Dict):
            if any(
                isinstance(k, ast.Constant)
                and isinstance(k.value, str)
                and k.value.lower() == IDEMPOTENCY_HEADER
                for k in headers.keys
            ):
                continue
        elif headers is not None and spelled:
            continue
        yield what, node.lineno
