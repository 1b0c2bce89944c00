"""Which of an app's heavy third-party imports a fork server may import before the app's agents fork from it.

Importing an agent framework costs one to two seconds of CPU (`agents`, `restate.ext.openai`,
`langchain_openai`; `anthropic` one and a half, `openai` alone half a second; Google's ADK with
`restate.ext.adk` about half a second), and a sweep starts two agents
per crash point. A fork server that has imported the framework once saves that at every start, for a
user's sweep as for the tests.

A verdict must not depend on it, so only modules on `FRAMEWORK_PRELOAD` are ever preloaded: the model
clients, frameworks and Restate integrations paidtwice knows, each swept with and without the preload in
the tests with the same counts. They are imported by a fork server forked for the app, in the agent's own
environment and directory, less the variables that differ between runs (`RUN_VARIABLES`: the lane's
addresses, the step log, the gate, the service's name), which are unset there, so that a library that read
one at import could not keep another run's. The app itself is never preloaded: the child imports it with
its run's environment set. `PAIDTWICE_PRELOAD=0` switches the preload off.

Which ones an app uses is read from the app module's own source and its own modules' it imports (their
`import` statements, parsed, never run); an app module that is not a file under its directory (an installed
package) gets no preload.
"""

from __future__ import annotations

import ast
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from paidtwice.agent._env import RUN_VARIABLES

__all__ = ["FRAMEWORK_PRELOAD", "PRELOAD", "framework_preload", "preload_enabled", "preload_env"]

PRELOAD = "PAIDTWICE_PRELOAD"
"""`0`: start every agent without a framework preloaded (each start imports its framework itself)."""

FRAMEWORK_PRELOAD = (
    "openai",
    "anthropic",
    "agents",
    "restate.ext.openai",
    "pydantic_ai",
    "restate.ext.pydantic",
    "langchain.agents",
    "langchain.tools",
    "langchain_openai",
    "restate.ext.langchain",
    "google.genai",
    "google.adk",
    "restate.ext.adk",
)
"""The allowlist: the OpenAI, Anthropic and Gemini (google-genai) clients, the OpenAI Agents SDK,
pydantic-ai, LangChain and Google's ADK, and restate-sdk's integration of each. Each starts no thread,
event loop or network client and reads no run's address at import (google-genai reads
GOOGLE_GEMINI_BASE_URL when a client is made, not at import), checked for each by a sweep with and without
it: tests/sweep/test_sweep_frameworks.py, test_sweep_frameworks_auto.py (ADK), test_sweep_answers.py (the
clients). A module added here needs such a test. (`google.adk` alone imports little; `restate.ext.adk`
imports ADK's agents, runners and google-genai's types, most of an ADK app's import.)"""

IMPORTED_WITH = {
    "agents": ("openai.lib._response_resources",),
    "pydantic_ai": ("pydantic_ai.models.openai",),
    "google.adk": ("google.adk.workflow._workflow", "google.adk.flows.llm_flows.single_flow"),
}
"""Modules a framework of the allowlist imports only once it runs, preloaded with it (found by logging the
imports each forked agent of the examples still made, `PYTHONPROFILEIMPORTTIME=1`): the Agents SDK's
Responses calls import openai's response resources (0.2 s of CPU at each start), pydantic-ai imports its
model's module when an `Agent` is made, from the model's name (`"openai:gpt-4o-mini"`), which no import
statement names (the OpenAI model's, with the openai client: 0.4 s), and ADK's runner imports its
`Workflow` to route each run and its single-agent flow to run it (0.3 to 0.5 s). An app that never uses one
pays its import once, in its fork server; a library version without it loses only the saving (the fork
server logs "not preloaded"). Checked with the framework that imports it
(tests/sweep/test_sweep_frameworks.py, ..._auto.py)."""

_PARSING = threading.Lock()


def preload_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether agents are forked from a fork server that preloaded their framework (`PAIDTWICE_PRELOAD`)."""
    return (env if env is not None else os.environ).get(PRELOAD, "1") != "0"


def framework_preload(app: str, cwd: str | Path | None) -> tuple[str, ...]:
    """The modules of `FRAMEWORK_PRELOAD` that the app module (MODULE of MODULE:APP, a file under `cwd`) or
    a module of its own it imports (a file under `cwd` too, followed up to `_LOCAL_MODULES` files: Restate's
    examples import their models and agents from `utils`) imports, in the allowlist's order, each followed
    by those `IMPORTED_WITH` it; () when it imports none or its source is not found there."""
    root = Path(cwd or ".")
    imported: set[str] = set()
    pending: list[str] = [app.partition(":")[0]]
    read: set[str] = set()
    while pending and len(read) < _LOCAL_MODULES:
        module = pending.pop(0)
        read.add(module)
        found = _imports_of(module, root)
        pending += sorted(m for m in found - read - set(pending) if _path_of(m, root) is not None)
        imported |= found
    return tuple(
        preloaded
        for module in FRAMEWORK_PRELOAD
        if module in imported
        for preloaded in (module, *IMPORTED_WITH.get(module, ()))
    )


_LOCAL_MODULES = 20
"""The most files of an app's own modules read for its imports."""


def _imports_of(module: str, cwd: Path) -> set[str]:
    """The absolute module names `module`'s source (a file under `cwd`) imports; none when it is not there."""
    source = _source_of(module, cwd)
    if source is None:
        return set()
    try:
        # One parse at a time: CPython 3.11's AST conversion keeps a process-wide recursion count, and
        # parses in two threads at once (a sweep's clean runs start together) fail with SystemError.
        with _PARSING:
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module)
            # `from restate.ext import openai` imports the module restate.ext.openai.
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    return imported


def _path_of(module: str, cwd: Path) -> Path | None:
    """The file under `cwd` that holds `module`'s source; None when it is not one of the app's own."""
    base = cwd.joinpath(*module.split("."))
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


def _source_of(module: str, cwd: Path) -> str | None:
    path = _path_of(module, cwd)
    try:
        return path.read_text(encoding="utf-8") if path is not None else None
    except (OSError, UnicodeDecodeError):
        return None


def preload_env(env: Mapping[str, str]) -> dict[str, str]:
    """A fork server's environment for agents of `env`: the same, less the variables each run sets."""
    return {name: value for name, value in env.items() if name not in RUN_VARIABLES}
