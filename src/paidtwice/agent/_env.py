"""The agent's environment contract: the variables the lab sets for an agent process, in one place.

The model's clients read the vendors' own variables (`OPENAI_*`, `ANTHROPIC_*`), pointed at a lane of the
stub; the deck's agents and the host read the `PAIDTWICE_*` ones. The lab writes them only through
`agent_env`; nothing here imports the lab, so an agent process may read the names too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = [
    "AGENT_HEADER",
    "AGENT_MODE",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "EXPLICIT_RECOVERY",
    "GATE",
    "GEMINI_API_KEYS",
    "GOOGLE_GEMINI_BASE_URL",
    "INVOCATION_HEADER",
    "MODEL_CALL_HEADER",
    "OFFLINE_DEFAULTS",
    "OPENAI_API_BASE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "PAUSE_S",
    "RETRY_POLICY",
    "ROOT_HEADER",
    "RUN_VARIABLES",
    "SERVICE",
    "SERVICE_ALONE",
    "SERVICE_AS",
    "STEP_LOG",
    "STUB_API_KEY",
    "TOOLS_URL",
    "TREE",
    "agent_env",
    "renamed_service",
]

OPENAI_BASE_URL = "OPENAI_BASE_URL"
OPENAI_API_BASE = "OPENAI_API_BASE"
OPENAI_API_KEY = "OPENAI_API_KEY"
ANTHROPIC_BASE_URL = "ANTHROPIC_BASE_URL"
ANTHROPIC_API_KEY = "ANTHROPIC_API_KEY"
GOOGLE_GEMINI_BASE_URL = "GOOGLE_GEMINI_BASE_URL"
"""Where google-genai (and Google's ADK on it) sends Gemini calls."""
GEMINI_API_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""The keys google-genai reads; set to the stub's, so a user's own never reaches the stub's log."""
TOOLS_URL = "PAIDTWICE_TOOLS_URL"
"""Where the deck's agents book and look up the weather: the stub lane's tools."""
AGENT_MODE = "PAIDTWICE_AGENT_MODE"
"""`naive` or `journaled`: whether the deck's agents journal their model calls."""
SERVICE = "PAIDTWICE_SERVICE"
"""The name the deck's agents register their service under."""
SERVICE_AS = "PAIDTWICE_SERVICE_AS"
"""`Old=New,...`: services the host renames, for an app that does not read SERVICE."""
SERVICE_ALONE = "PAIDTWICE_SERVICE_ALONE"
"""`1`: the host serves the renamed services alone, the app's others left out of its endpoint. A sweep
point's agent is killed and then closed: a service of the app that another run calls must not be served (the
latest deployment registered for it) by a process that goes away."""
PAUSE_S = "PAIDTWICE_PAUSE_S"
"""Seconds of the deck agent's durable pause."""
EXPLICIT_RECOVERY = "PAIDTWICE_EXPLICIT_RECOVERY"
"""`1`: the deck's agents run under restate-sdk's preview `explicit_recovery` (a retry runs the handler from
the start, every context operation executed again, no journal replayed)."""
RETRY_POLICY = "PAIDTWICE_RETRY_POLICY"
"""JSON of the deck agents' invocation retry policy, when a row sets its own: `max_attempts`,
`on_max_attempts` ("pause" or "kill"), `initial_interval_s`, `max_interval_s`, `exponentiation_factor`."""
ROOT_HEADER = "x-paidtwice-root"
"""The header a call the host follows into a tree carries: the tree's root invocation."""
TREE = "PAIDTWICE_TREE"
"""The run's tag: the host serves every service of the app as `NAME_TAG` and follows the calls between them
(`paidtwice.agent._tree`)."""
STEP_LOG = "PAIDTWICE_STEP_LOG"
"""Where the host writes its step log (one JSON line per step)."""
GATE = "PAIDTWICE_GATE"
"""The moment at which the host stops the handler for good ("" for none)."""
INVOCATION_HEADER = "x-paidtwice-invocation"
"""The request header that tells the stub which invocation a call serves; the host adds it to every model
request a handler makes without one, so the stub counts a user's calls per invocation, code unchanged."""
AGENT_HEADER = "x-paidtwice-agent"
"""The request header naming the agent process that made a model call (its pid): the stub may read a request
long after it was sent, after the process that sent it was killed, and the soak counts a kill's cost by the
process that asked, not by when the stub read it."""
MODEL_CALL_HEADER = "x-paidtwice-model-call"
"""The request header naming a model call as the host names its gates (`model:2`; `7/model:1`, the first of
the callee at place 7 of its tree): the stub holds that call whatever order a tree's callees ask in."""
STUB_API_KEY = "paidtwice-stub"
"""The API key the model's clients send: the stub takes any, the clients insist on one."""
OFFLINE_DEFAULTS = {
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LOGFIRE_IGNORE_NO_CONFIG": "1",
}
"""What keeps an agent's libraries from reaching past the stub, and their chatter out of paidtwice's output,
unless the user's environment says otherwise: the OpenAI Agents SDK exports traces to api.openai.com with the
key it is given (the stub's, refused; without one it says "OPENAI_API_KEY is not set, skipping trace export"),
litellm fetches its price list from the internet at import (retrying for seconds when it cannot), and
logfire (pydantic-ai's instrumentation) warns that it was not configured. Set for the agent processes of the
lab and for the app replay-check loads in its own process."""


RUN_VARIABLES = frozenset(
    (
        OPENAI_BASE_URL,
        OPENAI_API_BASE,
        ANTHROPIC_BASE_URL,
        GOOGLE_GEMINI_BASE_URL,
        TOOLS_URL,
        SERVICE,
        SERVICE_AS,
        SERVICE_ALONE,
        TREE,
        STEP_LOG,
        GATE,
    )
)
"""The variables that differ between two runs of one target (the lane's addresses, the service's name, the
step log, the gate): a fork server shared by the runs' agents (`paidtwice.agent._preload`) has none of
them."""


def _environment() -> dict[str, str]:
    """This process's environment, copied whole. `dict(os.environ)` lists the names, then looks each one up:
    a name another thread removes in between (pytest's PYTEST_CURRENT_TEST, between two tests, while a
    module's sweeps run in threads) raises KeyError. Copied again then."""
    while True:
        try:
            return dict(os.environ)
        except KeyError:
            continue


def agent_env(
    *,
    openai_url: str,
    anthropic_url: str | None = None,
    gemini_url: str | None = None,
    tools_url: str | None = None,
    given: Mapping[str, str] | None = None,
    mode: str | None = None,
    service: str | None = None,
    service_as: str | None = None,
    pause_s: str | None = None,
    step_log: str | None = None,
    gate: str | None = None,
) -> dict[str, str]:
    """This process's environment for an agent: `given` over it, then the model's clients pointed at the
    stub (`openai_url`, and `anthropic_url` when given), then the `PAIDTWICE_*` variables; None leaves one
    as it was."""
    env = _environment()
    env.update(given or {})
    for variable, default in OFFLINE_DEFAULTS.items():
        env.setdefault(variable, default)
    env[OPENAI_BASE_URL] = openai_url
    # LangChain's ChatOpenAI (and litellm) read this one first: a user's own would send their calls past
    # the stub, to a model that bills.
    env[OPENAI_API_BASE] = openai_url
    env[OPENAI_API_KEY] = STUB_API_KEY
    if anthropic_url is not None:
        env[ANTHROPIC_BASE_URL] = anthropic_url
        env[ANTHROPIC_API_KEY] = STUB_API_KEY
    if gemini_url is not None:
        env[GOOGLE_GEMINI_BASE_URL] = gemini_url
        # Vertex AI would take the calls past the stub, to Google Cloud.
        env["GOOGLE_GENAI_USE_VERTEXAI"] = "false"
        for key in GEMINI_API_KEYS:
            env[key] = STUB_API_KEY
    for name, value in (
        (TOOLS_URL, tools_url),
        (AGENT_MODE, mode),
        (SERVICE, service),
        (SERVICE_AS, service_as),
        (PAUSE_S, pause_s),
        (STEP_LOG, step_log),
        (GATE, gate),
    ):
        if value is not None:
            env[name] = value
    return env


def renamed_service(service: str, tag: str) -> str:
    """The name a service is registered under for one run (`SERVICE`, `SERVICE_AS`), so that many copies of
    one app live on one server; anything but letters, digits and '_' becomes '_'."""
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', service)}_{re.sub(r'[^A-Za-z0-9]', '_', tag)}"
