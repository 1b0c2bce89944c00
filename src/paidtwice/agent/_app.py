"""A user's Restate app as the agent host loads it: imported by MODULE:APP or MODULE, its services found in
its own endpoint (inside the SDK's ASGI closure or a middleware), its discovery manifest asked of the app
itself, each handler's source line, and the service renames that let several copies share one server."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import re
import sys
from typing import Any

from paidtwice._pins import MANIFEST_VERSIONS, RESTATE_SERVER_VERSION
from paidtwice._words import error_line

__all__ = [
    "check",
    "endpoint_of",
    "explicit_handlers",
    "load_app",
    "load_problem",
    "manifest",
    "print_manifest",
    "promise_resolvers",
    "rename",
    "served",
    "sources",
]


def load_app(target: str) -> Any:
    """The app `target` names, as given: MODULE:APP is that object (its services, wherever they were
    defined); MODULE alone is an app of every Restate service the module's globals hold, and of the
    services of the handlers it imports to call (many examples build their app only under
    `if __name__ == "__main__":`)."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    if attr:
        return getattr(module, attr)
    import restate

    return restate.app(_services(module))


_PINNED = "pip install -e '.[frameworks]' installs the pinned one"
_PACKAGES = {
    "agents": f"openai-agents ({_PINNED})",
    "pydantic_ai": f"pydantic-ai-slim[openai,mcp] ({_PINNED})",
    "langchain": f"langchain ({_PINNED})",
    "langchain_openai": f"langchain-openai ({_PINNED})",
    "langgraph": f"langgraph ({_PINNED})",
    "google": "google-adk",
    "litellm": "litellm",
    "openai": "openai",
    "anthropic": "anthropic",
}
"""Agent frameworks and model clients an app may import, by top-level module: the package that provides it."""


def load_problem(target: str) -> str | None:
    """Why `target` cannot be loaded as a Restate app, in one line; None when it can."""
    module_name, _, attr = target.partition(":")
    if not module_name:
        return f"{target!r} is not MODULE:APP or MODULE"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        package = _PACKAGES.get((err.name or "").split(".")[0])
        if package is not None and err.name != module_name:
            return f"cannot import {module_name}: it needs {package}, which is not installed ({err})"
        return f"cannot import {module_name}: {error_line(err)}"
    except Exception as err:  # noqa: BLE001 - the user's import fails in any way it likes
        return f"cannot import {module_name}: {error_line(err)}"
    if attr and not hasattr(module, attr):
        return f"module {module_name} has no attribute {attr!r}"
    if not attr and not _services(module):
        return f"module {module_name} defines no Restate service (name the app: {module_name}:APP)"
    return None


MANIFEST_ACCEPT = ", ".join(f"application/vnd.restate.endpointmanifest.v{n}+json" for n in MANIFEST_VERSIONS)
"""The accept header of restate-server's discovery request: the SDK answers with the newest version it
serves of those, as it does at registration."""
_MANIFEST_TYPE = re.compile(r"application/vnd\.restate\.endpointmanifest\.v(\d+)\+json")


def manifest(app: Any) -> dict[str, Any]:
    """The app's own discovery manifest (what a Restate server reads when the deployment is registered):
    its services, their kinds, handlers and input schemas. Asked of the ASGI app itself, so an app wrapped
    in middleware answers as it would answer the server."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "2",
        "method": "GET",
        "path": "/discover",
        "raw_path": b"/discover",
        "query_string": b"",
        "headers": [(b"accept", MANIFEST_ACCEPT.encode())],
    }
    asyncio.run(app(scope, receive, send))
    start = next((m for m in sent if m["type"] == "http.response.start"), {})
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    if start.get("status") != 200:
        said = body[:300].decode(errors="replace")
        raise ValueError(
            f"the app answered its discovery request with {start.get('status')}: {said} (asked as "
            f"restate-server {RESTATE_SERVER_VERSION} asks, for manifest v{MANIFEST_VERSIONS[0]} to "
            f"v{MANIFEST_VERSIONS[-1]})"
        )
    headers = {bytes(k).lower(): bytes(v).decode() for k, v in start.get("headers", [])}
    chosen = _MANIFEST_TYPE.fullmatch(headers.get(b"content-type", "").strip())
    if chosen is None or int(chosen.group(1)) not in MANIFEST_VERSIONS:
        raise ValueError(f"the app answered its discovery request with {headers.get(b'content-type')!r}")
    found: dict[str, Any] = json.loads(body)
    found.setdefault("manifestVersion", int(chosen.group(1)))
    return found


def check(target: str, service: str, handler: str) -> str | None:
    """Why `target` cannot serve `service`/`handler`, in one line; None when it can."""
    problem = load_problem(target)
    if problem:
        return problem
    try:
        services = {s["name"]: s for s in manifest(load_app(target)).get("services", [])}
    except Exception as err:  # noqa: BLE001 - the object named may be anything
        return f"{target} is not a Restate app: {error_line(err)}"
    if service not in services:
        found = ", ".join(sorted(services)) or "none"
        return f"no Restate service {service!r} in {target} (services found: {found})"
    handlers = [h["name"] for h in services[service].get("handlers", [])]
    if handler not in handlers:
        return f"service {service!r} has no handler {handler!r} (handlers: {', '.join(sorted(handlers))})"
    return None


def _services(module: Any) -> list[Any]:
    """The Restate services `module`'s globals hold, then the service of each handler it imports from another
    module (`from agents import run_fraud_agent`, for `ctx.service_call(run_fraud_agent, ...)`), found in
    the module that defined it: an app built only under `__main__` serves those too."""
    import restate

    kinds = (restate.Service, restate.VirtualObject, restate.Workflow)
    found = [value for value in vars(module).values() if isinstance(value, kinds)]
    names = {service.name for service in found}
    for value in list(vars(module).values()):
        service = _service_of_handler(value, kinds)
        if service is not None and service.name not in names:
            found.append(service)
            names.add(service.name)
    return found


def _service_of_handler(value: Any, kinds: tuple[type, ...]) -> Any:
    """The service whose handler `value` is (a function a service's decorator returned), looked up in the
    module that defined it; None for anything else, or when that module holds no such service."""
    from restate.handler import RESTATE_UNIQUE_HANDLER_SYMBOL

    if not callable(value):
        return None
    try:
        handler = vars(value).get(RESTATE_UNIQUE_HANDLER_SYMBOL)
    except TypeError:
        return None  # an object without a __dict__
    home = sys.modules.get(getattr(value, "__module__", None) or "")
    if handler is None or home is None:
        return None
    for candidate in vars(home).values():
        handlers: dict[str, Any] = getattr(candidate, "handlers", {}) if isinstance(candidate, kinds) else {}
        if any(h is handler for h in handlers.values()):
            return candidate
    return None


def endpoint_of(app: Any, depth: int = 4) -> Any:
    """The `restate.Endpoint` an app serves: held by the SDK's ASGI function in its closure, or under a
    wrapper's `app` attribute (middleware). None when it cannot be found."""
    from restate.endpoint import Endpoint

    if isinstance(app, Endpoint):
        return app
    if depth == 0:
        return None
    inner = [cell.cell_contents for cell in getattr(app, "__closure__", None) or () if _filled(cell)]
    inner += [getattr(app, name) for name in ("app", "asgi_app", "__wrapped__") if hasattr(app, name)]
    for value in inner:
        found = endpoint_of(value, depth - 1)
        if found is not None:
            return found
    return None


def served(app: Any) -> list[Any]:
    """The services `app` serves, by the names it serves them under; none when its endpoint is not found."""
    endpoint = endpoint_of(app)
    return list(endpoint.services.values()) if endpoint is not None else []


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


_PROMISE_NAME = re.compile(r"""promise\(\s*["']([^"']+)["']""")


def promise_resolvers(services: list[Any]) -> dict[str, dict[str, str]]:
    """For each Workflow: the shared handler that resolves each of its promises, by the promise's name
    (read from the handler's source: `ctx.promise("NAME")...resolve(...)`)."""
    import restate

    found: dict[str, dict[str, str]] = {}
    for service in services:
        if not isinstance(service, restate.Workflow):
            continue
        for name, handler in service.handlers.items():
            if handler.kind != "shared":
                continue
            try:
                source = inspect.getsource(handler.fn)
            except (OSError, TypeError):
                continue
            if ".resolve(" in source:
                for promise in _PROMISE_NAME.findall(source):
                    found.setdefault(service.name, {}).setdefault(promise, name)
    return found


def _promise_pattern(method: str) -> re.Pattern[str]:
    return re.compile(r"""promise\(\s*["']([^"']+)["'][^)]*\)\s*\.""" + method + r"\(")


_AWAITS, _RESOLVES = _promise_pattern("value"), _promise_pattern("resolve")


def waits_on_the_run(services: list[Any]) -> dict[str, list[str]]:
    """For each shared handler of a Workflow (SERVICE/HANDLER): the promises it awaits that none of its
    Workflow's shared handlers resolves (its run does, or nothing), read from the handlers' source: called
    alone, without a run, it would wait for good."""
    import restate

    found: dict[str, list[str]] = {}
    for service in services:
        if not isinstance(service, restate.Workflow):
            continue
        sources = {}
        for name, handler in service.handlers.items():
            try:
                sources[name] = inspect.getsource(handler.fn)
            except (OSError, TypeError):
                continue
        shared = {name for name, handler in service.handlers.items() if handler.kind == "shared"}
        resolved = {p for name in shared & sources.keys() for p in _RESOLVES.findall(sources[name])}
        for name in sorted(shared & sources.keys()):
            waits = [p for p in dict.fromkeys(_AWAITS.findall(sources[name])) if p not in resolved]
            if waits:
                found[f"{service.name}/{name}"] = waits
    return found


def explicit_handlers(services: list[Any]) -> list[str]:
    """SERVICE/HANDLER of every handler under restate-sdk's preview `explicit_recovery` (on its service or
    on itself), by the name it is served under."""
    return sorted(
        f"{service.name}/{name}"
        for service in services
        for name, handler in service.handlers.items()
        if getattr(service, "explicit_recovery", False) or getattr(handler, "explicit_recovery", False)
    )


def rename(app: Any, renames: list[str], *, alone: bool = False) -> None:
    """Serve each OLD service as NEW, in the app's own endpoint: the app the user named is the app that
    runs (its other services, protocol, identity keys and codec as they were). `alone`: the renamed
    services only, the app's others left out of the endpoint (served, and registered, by another process)."""
    endpoint = endpoint_of(app)
    if endpoint is None:
        raise SystemExit("paidtwice: cannot find the restate.Endpoint inside the app to serve a copy of it")
    if alone:
        kept = {item.split("=", 1)[0] for item in renames}
        for name in [name for name in endpoint.services if name not in kept]:
            del endpoint.services[name]
    for item in renames:
        old, new = item.split("=", 1)
        service = endpoint.services.pop(old, None)
        if service is None:
            continue
        tag = dataclasses.replace(service.service_tag, name=new)
        service.service_tag = tag
        for handler_name, handler in list(service.handlers.items()):
            service.handlers[handler_name] = dataclasses.replace(handler, service_tag=tag)
        endpoint.services[new] = service


def sources(app: Any) -> dict[str, dict[str, Any]]:
    """Where each handler's function is defined ({"SERVICE/HANDLER": {"path", "line"}}), for findings
    placed on the handler's line; empty when the app's endpoint cannot be found."""
    endpoint = endpoint_of(app)
    found: dict[str, dict[str, Any]] = {}
    for service in endpoint.services.values() if endpoint is not None else ():
        for name, handler in service.handlers.items():
            fn = inspect.unwrap(handler.fn)
            try:
                path = inspect.getsourcefile(fn)
                line = inspect.getsourcelines(fn)[1]
            except (OSError, TypeError):
                continue
            if path:
                found[f"{service.name}/{name}"] = {"path": path, "line": line}
    return found


def input_schemas(app: Any) -> dict[str, Any]:
    """A JSON schema of each handler's input the SDK describes only roughly ({"SERVICE/HANDLER": schema}):
    it asks pydantic and msgspec models for theirs, and maps other type hints itself, to `true` for a
    dataclass, a TypedDict or a union. pydantic reads those from the hint; a hint it cannot read is left
    to the manifest's schema."""
    endpoint = endpoint_of(app)
    found: dict[str, Any] = {}
    try:
        from pydantic import TypeAdapter
    except ImportError:
        return found
    for service in endpoint.services.values() if endpoint is not None else ():
        for name, handler in service.handlers.items():
            hint = handler.handler_io.input_type
            if hint is None or hint.is_void or hint.annotation is None or hint.generate_json_schema:
                continue
            try:
                found[f"{service.name}/{name}"] = _schema_of(hint.annotation, TypeAdapter)
            except Exception:  # noqa: BLE001, S112 - any hint pydantic cannot read keeps the SDK's schema
                continue
    return found


def _schema_of(annotation: Any, adapter: Any) -> Any:
    """The JSON schema of a type hint; a `typing.TypedDict` field by field (pydantic reads only
    typing_extensions' before Python 3.12)."""
    import typing

    if not typing.is_typeddict(annotation):
        return adapter(annotation).json_schema()
    fields = typing.get_type_hints(annotation)
    return {
        "type": "object",
        "properties": {key: _schema_of(hint, adapter) for key, hint in fields.items()},
        "required": sorted(annotation.__required_keys__),
    }


def print_manifest(target: str) -> int:
    problem = load_problem(target)
    if problem is None:
        try:
            app = load_app(target)
            found = {
                "manifest": manifest(app),
                "sources": sources(app),
                "schemas": input_schemas(app),
                "waits_on_the_run": waits_on_the_run(served(app)),
            }
            print(json.dumps(found))
            return 0
        except Exception as err:  # noqa: BLE001 - the object named may be anything
            problem = f"{target} is not a Restate app: {error_line(err)}"
    print(f"paidtwice: {problem}", file=sys.stderr)
    return 2
