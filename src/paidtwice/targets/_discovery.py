"""What a user's app serves, read from the app itself: its discovery manifest, the document a Restate server
reads when the deployment is registered (services, their kinds, handlers, their kinds and input schemas).

The app is imported in a process of its own (`python -m paidtwice.agent.host APP --discover`), as the sweep
will run it: the user's module may do anything at import, and the lab's process stays clean of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.agent import agent_env
from paidtwice.engine import load_timeout, loaded_in, too_slow, wait_for_load

__all__ = [
    "NOT_PUBLIC",
    "AppHandler",
    "alone_without_run",
    "choose_handlers",
    "discover",
    "handlers_of",
    "load_in_host",
    "needs_input",
    "note",
]


@dataclass(frozen=True)
class AppHandler:
    """One handler an app serves, as its manifest describes it."""

    service: str
    """The service's name."""
    handler: str
    """The handler's name."""
    service_kind: str
    """The manifest's kind of the service: SERVICE, VIRTUAL_OBJECT or WORKFLOW."""
    handler_kind: str
    """The manifest's kind of the handler: EXCLUSIVE, SHARED, WORKFLOW; empty for a plain service's."""
    input_schema: Any
    """The JSON schema of the handler's input; None when the manifest gives none."""
    path: str | None = None
    """The file the handler's function is defined in (absolute), when Python can tell."""
    line: int | None = None
    """The line of its definition (its decorator's, when it has one) in `path`."""
    options: tuple[tuple[str, Any], ...] = ()
    """Every option the manifest sets for it, by the manifest's name, its own over its service's:
    ingressPrivate, enableLazyState, inactivityTimeout, abortTimeout, journalRetention,
    idempotencyRetention, workflowCompletionRetention (milliseconds), retryPolicy* and the rest."""
    input_type: str | None = None
    """The content type its input is sent with (the manifest's `input.contentType`); None: it takes none."""
    output_schema: Any = None
    """The JSON schema of its output; None when the manifest gives none (a handler that returns None)."""

    @property
    def private(self) -> bool:
        """Its service or itself is `ingress_private`: the ingress refuses to call it; only other handlers
        can."""
        return bool(dict(self.options).get("ingressPrivate"))

    waits_on_the_run: tuple[str, ...] = ()
    """A Workflow's shared handler: the promises it awaits that only the workflow's run resolves (no
    shared handler does, read from the source): called alone, without a run, it would wait for good."""

    @property
    def name(self) -> str:
        """SERVICE/HANDLER, as `--handler` takes it and the summary names it."""
        return f"{self.service}/{self.handler}"

    @property
    def beside_a_run(self) -> bool:
        """A Workflow's shared handler (a signal or a query): it works beside the workflow's run, which
        calling it alone does not start."""
        return self.service_kind == "WORKFLOW" and self.handler_kind == "SHARED"


def handlers_of(
    manifest: dict[str, Any],
    sources: dict[str, Any] | None = None,
    schemas: dict[str, Any] | None = None,
    waits_on_the_run: dict[str, Any] | None = None,
) -> list[AppHandler]:
    """Every handler of a discovery manifest, in the manifest's order, with where it is defined when
    `sources` ({"SERVICE/HANDLER": {"path", "line"}}) says, its input schema from `schemas` (the host's,
    from the handler's type hint) where it has one, and the promises only a Workflow's run resolves that it
    awaits (`waits_on_the_run`, {"SERVICE/HANDLER": [NAME, ...]})."""
    found = []
    for service in manifest.get("services", []):
        for handler in service.get("handlers", []):
            name = f"{service['name']}/{handler['name']}"
            source = (sources or {}).get(name) or {}
            options = {
                **{k: v for k, v in service.items() if k not in _NOT_OPTIONS and v is not None},
                **{k: v for k, v in handler.items() if k not in _NOT_OPTIONS and v is not None},
            }
            found.append(
                AppHandler(
                    service=service["name"],
                    handler=handler["name"],
                    service_kind=str(service.get("ty", "SERVICE")),
                    handler_kind=str(handler.get("ty") or ""),
                    input_schema=(schemas or {}).get(
                        f"{service['name']}/{handler['name']}", (handler.get("input") or {}).get("jsonSchema")
                    ),
                    path=source.get("path"),
                    line=source.get("line"),
                    options=tuple(options.items()),
                    input_type=(handler.get("input") or {}).get("contentType"),
                    output_schema=(handler.get("output") or {}).get("jsonSchema"),
                    waits_on_the_run=tuple(str(p) for p in (waits_on_the_run or {}).get(name, ())),
                )
            )
    return found


_NOT_OPTIONS = frozenset({"name", "ty", "handlers", "input", "output", "documentation", "description"})
"""The manifest's fields of a service or handler that are not an option of its invocations."""


def discover(app: str, *, cwd: str) -> list[AppHandler]:
    """The handlers `app` (MODULE:APP or MODULE, imported from `cwd`) serves; `UsageError` in one line when
    it cannot be loaded or is not a Restate app."""
    done = load_in_host(app, ["--discover"], cwd=cwd)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise UsageError(lines[-1].removeprefix("paidtwice: ") if lines else f"{app} cannot be loaded")
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise UsageError(f"{app}: its discovery manifest is not JSON") from None
    return handlers_of(
        found["manifest"], found.get("sources"), found.get("schemas"), found.get("waits_on_the_run")
    )


def load_in_host(app: str, args: Sequence[str], *, cwd: str) -> subprocess.CompletedProcess[str]:
    """`python -m paidtwice.agent.host APP ARGS` run to its end in a process of its own, as the sweep will
    load the app, with the model's clients pointed at a stub (not started: nothing is sent). Its time is a
    load measured (`loaded_in`); `UsageError` naming the variable that sets the wait when it takes longer
    than twice `load_timeout()`."""
    timeout = 2 * load_timeout()
    began = time.monotonic()
    with (
        subprocess.Popen(
            [sys.executable, "-m", "paidtwice.agent.host", app, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        ) as process,
        ThreadPoolExecutor(1) as pool,
    ):
        # Read while waiting: a full pipe would stop the load.
        reading = pool.submit(process.communicate)
        waited = wait_for_load(reading.done, process.pid, timeout=timeout)
        if waited is not None:
            process.kill()
            reading.result()
            raise UsageError(too_slow(f"{app} did not load", waited))
        stdout, stderr = reading.result()
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    loaded_in(time.monotonic() - began)
    return done


def choose_handlers(
    found: Sequence[AppHandler], wanted: Sequence[str], *, app: str
) -> tuple[list[AppHandler], list[AppHandler]]:
    """The handlers to sweep and those left out: the `wanted` ones (SERVICE/HANDLER, or SERVICE for all of
    a service's), in the order given; with none wanted, every handler but a Workflow's shared ones (left
    out, to be named explicitly). A shared handler that awaits a promise only its workflow's run resolves
    is left out even when its service is named, and refused when it is named itself. `UsageError` names a
    wanted one the app does not serve."""
    if not found:
        raise UsageError(f"{app} serves no handler")
    if not wanted:
        passed = [h for h in found if h.beside_a_run or h.private]
        return [h for h in found if h not in passed], passed
    chosen: list[AppHandler] = []
    left_out: list[AppHandler] = []
    for name in wanted:
        service, _, handler = name.partition("/")
        matched = [h for h in found if h.service == service and (not handler or h.handler == handler)]
        if not any(h.service == service for h in found):
            services = ", ".join(dict.fromkeys(h.service for h in found))
            raise UsageError(f"no Restate service {service!r} in {app} (services found: {services})")
        if not matched:
            handlers = ", ".join(h.handler for h in found if h.service == service)
            raise UsageError(f"service {service!r} has no handler {handler!r} (handlers: {handlers})")
        private = [h for h in matched if h.private and (handler or all(m.private for m in matched))]
        if private:
            raise UsageError(f"{private[0].name} {NOT_PUBLIC}: sweep a handler that calls it")
        alone = [h for h in matched if h.waits_on_the_run]
        if alone and handler:
            raise UsageError(alone_without_run(alone[0], found))
        chosen += [h for h in matched if h not in chosen and not h.private and h not in alone]
        left_out += [h for h in alone if h not in left_out]
    return chosen, left_out


def alone_without_run(handler: AppHandler, found: Sequence[AppHandler]) -> str:
    """Why a Workflow's shared handler that awaits a promise only its run resolves is not swept."""
    runs = [h.name for h in found if h.service == handler.service and h.handler_kind == "WORKFLOW"]
    promises = ", ".join(repr(p) for p in handler.waits_on_the_run)
    run = f"workflow's run ({runs[0]})" if runs else "workflow's run"
    return (
        f"{handler.name}, a Workflow's shared handler, waits for promise {promises}, which only the {run} "
        "resolves: called alone it would wait for good, and --resolve cannot answer it (a Workflow's "
        "promise is resolved only by a handler of the workflow); it is not swept on its own"
    )


NOT_PUBLIC = (
    "is private (ingress_private): the ingress refuses to call it, so it is swept in the invocation tree of "
    "each handler of the app that calls it"
)
"""Why a private handler is not swept on its own."""


def needs_input(schema: Any) -> bool:
    """Whether a handler with this input schema needs an input: its schema is not absent or empty and does
    not admit null."""
    if not isinstance(schema, dict) or not schema:
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return False
    choices = schema.get("anyOf") or schema.get("oneOf") or []
    return not any(isinstance(c, dict) and c.get("type") == "null" for c in choices)


def note(line: str) -> None:
    """A line for the user on stderr (what discovery left out)."""
    print(f"paidtwice: {line}", file=sys.stderr)
