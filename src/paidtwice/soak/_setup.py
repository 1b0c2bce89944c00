"""The soak's first phase: its agent started and registered, and one clean invocation run with no fault,
whose counts are the clean counts every invocation of the soak is measured against, and whose journal says
in which Run steps the agent journals its model's answers."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from paidtwice._exceptions import ExperimentError, LabCancelled, UsageError
from paidtwice.engine import SqlClient
from paidtwice.lab import Lab
from paidtwice.soak._monitor import SETTLED
from paidtwice.soak._subject import Calling, Soaked
from paidtwice.stub import Answer, Lane, ModelCall
from paidtwice.sweep import NO_MODEL_CALL
from paidtwice.targets import Agent

__all__ = ["Clean", "set_up"]

_CLEAN_TIMEOUT = 120.0


@dataclass(frozen=True)
class Clean:
    """What the setup found, on the agent the soak drives."""

    calling: Calling
    """How each invocation is sent."""
    model_calls: int
    """Model calls of the clean invocation."""
    counts_tools: bool
    """Tool runs are counted (the deck's agent's), not only model calls (`Soaked.counts_tools`)."""
    tool_runs: int
    """Its tool runs (0 when they are not counted)."""
    model_steps: frozenset[str]
    """The names of the Run steps that hold a model answer."""
    by_order: bool
    """A call's place among its invocation's answers is its order since its agent's life began, not its
    script turn (`Soaked.by_order`)."""


def set_up(lab: Lab, soaked: Soaked, agent: Agent, lane: Lane, served_as: str) -> Clean:
    """Start the agent, register it, and run the clean invocation on it. A `UsageError` when the soak could
    not count anything: a key for a plain service, no model call reaching the stub, a call unanswered."""
    agent.start()
    deployment = lab.admin.register_deployment(agent.uri)
    calling = soaked.calling(served_as, keyed=served_as in deployment.keyed)
    clean_id = _run_clean(lab, calling, agent, lane)
    calls = lane.model_calls(clean_id)
    # A call's place among its invocation's answers is its script turn when the clean invocation's turns are
    # 1, 2, 3... in order (the deck's conversation turns); else the call's order since the last restart.
    return Clean(
        calling=calling,
        model_calls=len(calls),
        counts_tools=soaked.counts_tools,
        tool_runs=len(lane.tool_runs(clean_id)) if soaked.counts_tools else 0,
        model_steps=_model_steps(lab.sql, clean_id, calls),
        by_order=soaked.by_order([call.turn for call in calls]),
    )


def _run_clean(lab: Lab, calling: Calling, agent: Agent, lane: Lane) -> str:
    """Send one invocation and wait for it to complete with no fault: the clean counts are its counts. An
    invocation that fails before any model call reached the stub, or whose call the script does not answer,
    is a `UsageError`: the soak would count nothing, or only errors."""
    invocation = calling.send(lab, "clean")
    deadline = time.monotonic() + _CLEAN_TIMEOUT
    while True:
        row = lab.sql.invocation(invocation)
        calls = lane.model_calls(invocation)
        unanswered = [c for c in calls if c.unanswered]
        problem = None
        if unanswered:
            problem = f"{unanswered[0].answer.text} (model call {unanswered[0].call} of the clean invocation)"
        elif not calls and any(a.last_event == "error" for a in agent.attempts(invocation)):
            problem = NO_MODEL_CALL
        elif row is not None and row.status in SETTLED:
            if row.status != "completed" or row.completion_result != "success":
                raise ExperimentError(f"the soak's clean invocation did not complete ({row.status})")
            if not calls:
                raise UsageError(NO_MODEL_CALL)
            return invocation
        if problem is not None:
            lab.admin.kill(invocation)
            raise UsageError(problem)
        if time.monotonic() > deadline:
            raise ExperimentError(f"the soak's clean invocation did not settle in {_CLEAN_TIMEOUT:.0f}s")
        if lab.cancelled.wait(0.05):
            raise LabCancelled("interrupted")


def _model_steps(sql: SqlClient, invocation: str, calls: list[ModelCall]) -> frozenset[str]:
    """The names of the Run steps the agent journals its model answers in, read from one clean invocation:
    those whose result holds what the stub answered one of its model calls (the tool asked for, or the
    words). Whatever the agent names them; empty when it journals no answer (a naive agent's next step,
    the tool's, holds the weather, not the model's words)."""
    markers = {_marker(call.answer) for call in calls} - {""}
    rows = sql.query(
        "SELECT index, entry_type, name, raw FROM sys_journal "
        f"WHERE id = '{invocation}' AND entry_type IN ('Command: Run', 'Notification: Run') ORDER BY index"
    )
    pending: list[str] = []
    names: set[str] = set()
    for row in rows:
        if row["entry_type"] == "Command: Run":
            pending.append(str(row.get("name") or ""))
        elif pending:
            name = pending.pop(0)
            try:
                result = bytes.fromhex(str(row.get("raw") or ""))
            except ValueError:
                continue
            if any(form in result for marker in markers for form in _encodings(marker)):
                names.add(name)
    return frozenset(names)


def _marker(answer: Answer) -> str:
    """What a journaled answer must hold: the tool the model asked for, else its words."""
    return answer.tool_call.name if answer.tool_call is not None else answer.text


def _encodings(text: str) -> tuple[bytes, bytes]:
    """The text as it reads in a JSON-serialized result: raw UTF-8, or escaped as json.dumps escapes it."""
    return text.encode(), json.dumps(text)[1:-1].encode()
