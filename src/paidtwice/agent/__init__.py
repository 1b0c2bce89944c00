"""The deck's weather agent (`paidtwice.agent.weather`) and the host that runs any Restate app for the lab.

What the lab's other packages use of it, by where it lives:

    _process   what every agent the lab kills shares: `LeasedAgent`, `wait_alive`, what each attempt did
               (the host's agent, `AgentHost`, is in `paidtwice.targets`, beside the kinds it serves)
    _go        when a prepared host process serves: `go_line`, and its port's `listening_socket`; when its
               held pause ends: `RELEASE_PAUSE`; its gates from then on: `GATES`
    _deck      the deck's agent from outside: `DECK_AGENT`, its `QUESTION`, its modes and clean journals
    _env       the environment the lab gives an agent: variable names, `agent_env`, the offline defaults,
               `renamed_service`
    _wire      Restate's service protocol as the host reads it: frame types, `FrameReader`, `read_fields`
    _app       finding a user's app in its module: `load_app`, `endpoint_of`, `load_problem`
    _preload   which of an app's frameworks a fork server may import for its agents: `framework_preload`
    _command   a deployment in any language started by a command, behind `_proxy`, the protocol proxy that
               logs its attempts and steps (each attempt: `_proxy_attempt`; its stream to the agent: `_h2`;
               what it reads of the command's code: `_sources`): `CommandHost`, `read_wire`, `node_path`
"""

from __future__ import annotations

import typing as _typing

from paidtwice import _lazy

if _typing.TYPE_CHECKING:
    from paidtwice.agent._app import MANIFEST_ACCEPT, endpoint_of, load_app, load_problem
    from paidtwice.agent._command import (
        CommandHost,
        WireStep,
        command_label,
        command_manifest,
        node_path,
        read_wire,
    )
    from paidtwice.agent._deck import (
        CLEAN_JOURNALED_JOURNAL,
        CLEAN_NAIVE_JOURNAL,
        DECK_AGENT,
        DECK_RETRY,
        QUESTION,
        AgentMode,
    )
    from paidtwice.agent._env import (
        AGENT_HEADER,
        ANTHROPIC_API_KEY,
        ANTHROPIC_BASE_URL,
        EXPLICIT_RECOVERY,
        GATE,
        INVOCATION_HEADER,
        MODEL_CALL_HEADER,
        OFFLINE_DEFAULTS,
        PAUSE_S,
        RETRY_POLICY,
        ROOT_HEADER,
        SERVICE,
        SERVICE_ALONE,
        SERVICE_AS,
        STEP_LOG,
        STUB_API_KEY,
        TREE,
        agent_env,
        renamed_service,
    )
    from paidtwice.agent._go import GATES, RELEASE_PAUSE, go_line, listening_socket
    from paidtwice.agent._preload import framework_preload, preload_enabled, preload_env
    from paidtwice.agent._process import (
        AGENT_PRELOAD,
        AgentAttempt,
        LeasedAgent,
        attempt_of,
        number_attempts,
        wait_alive,
    )
    from paidtwice.agent._wire import (
        END,
        ERROR,
        FIRST_COMMAND,
        FIRST_NOTIFICATION,
        MISMATCH_ERROR_CODE,
        START,
        SUSPENSION,
        FrameReader,
        read_fields,
    )

_LAZY = {
    **dict.fromkeys(("MANIFEST_ACCEPT", "endpoint_of", "load_app", "load_problem"), "paidtwice.agent._app"),
    **dict.fromkeys(
        ("CommandHost", "WireStep", "command_label", "command_manifest", "node_path", "read_wire"),
        "paidtwice.agent._command",
    ),
    **dict.fromkeys(
        (
            *("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "EXPLICIT_RECOVERY", "GATE", "INVOCATION_HEADER"),
            *(
                "AGENT_HEADER",
                "MODEL_CALL_HEADER",
                "OFFLINE_DEFAULTS",
                "PAUSE_S",
                "RETRY_POLICY",
                "SERVICE",
                "SERVICE_ALONE",
                "SERVICE_AS",
            ),
            *("ROOT_HEADER", "STEP_LOG", "STUB_API_KEY", "TREE", "agent_env", "renamed_service"),
        ),
        "paidtwice.agent._env",
    ),
    **dict.fromkeys(
        (
            "CLEAN_JOURNALED_JOURNAL",
            "CLEAN_NAIVE_JOURNAL",
            "DECK_AGENT",
            "DECK_RETRY",
            "QUESTION",
            "AgentMode",
        ),
        "paidtwice.agent._deck",
    ),
    **dict.fromkeys(("framework_preload", "preload_enabled", "preload_env"), "paidtwice.agent._preload"),
    **dict.fromkeys(
        (
            *("AGENT_PRELOAD", "AgentAttempt", "LeasedAgent", "attempt_of", "number_attempts"),
            "wait_alive",
        ),
        "paidtwice.agent._process",
    ),
    **dict.fromkeys(("GATES", "RELEASE_PAUSE", "go_line", "listening_socket"), "paidtwice.agent._go"),
    **dict.fromkeys(
        (
            *("END", "ERROR", "FIRST_COMMAND", "FIRST_NOTIFICATION", "MISMATCH_ERROR_CODE", "START"),
            *("SUSPENSION", "FrameReader", "read_fields"),
        ),
        "paidtwice.agent._wire",
    ),
}
"""Imported when first used: the agent's own process (`paidtwice.agent.host`) never needs the lab's side
(`_process` imports the engine)."""

__all__ = [
    "AGENT_HEADER",
    "AGENT_PRELOAD",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "CLEAN_JOURNALED_JOURNAL",
    "CLEAN_NAIVE_JOURNAL",
    "DECK_AGENT",
    "DECK_RETRY",
    "END",
    "ERROR",
    "EXPLICIT_RECOVERY",
    "FIRST_COMMAND",
    "FIRST_NOTIFICATION",
    "GATE",
    "GATES",
    "INVOCATION_HEADER",
    "MANIFEST_ACCEPT",
    "MISMATCH_ERROR_CODE",
    "MODEL_CALL_HEADER",
    "OFFLINE_DEFAULTS",
    "PAUSE_S",
    "QUESTION",
    "RELEASE_PAUSE",
    "RETRY_POLICY",
    "ROOT_HEADER",
    "SERVICE",
    "SERVICE_ALONE",
    "SERVICE_AS",
    "START",
    "STEP_LOG",
    "STUB_API_KEY",
    "SUSPENSION",
    "TREE",
    "AgentAttempt",
    "AgentMode",
    "CommandHost",
    "FrameReader",
    "LeasedAgent",
    "WireStep",
    "agent_env",
    "attempt_of",
    "command_label",
    "command_manifest",
    "endpoint_of",
    "framework_preload",
    "go_line",
    "listening_socket",
    "load_app",
    "load_problem",
    "node_path",
    "number_attempts",
    "preload_enabled",
    "preload_env",
    "read_fields",
    "read_wire",
    "renamed_service",
    "wait_alive",
]


__getattr__ = _lazy.attributes(__name__, _LAZY)
