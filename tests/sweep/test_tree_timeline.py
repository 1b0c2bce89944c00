"""A tree of invocations on one timeline (no server: the step log is data): the callees' lines, filed under
the swept invocation by paidtwice's host, give moments named for the callee, while the swept handler's
journal count stays its own (its call's command and the callee's id, the result once it goes on)."""

from __future__ import annotations

import json
from pathlib import Path

from paidtwice.stub import Lane
from paidtwice.targets import HostTrace
from paidtwice.targets._timeline import StepEvent, derive_points

CALLEE = "inv_callee"
JOURNAL = [
    "Command: Input",
    "Command: Call",
    "Notification: CallInvocationId",
    "Notification: Call",
    "Command: Run",
    "Notification: Run",
    "Command: Output",
]


def event(event: str, n: int, at: float, *, kind: str = "", name: str = "", by: str = "") -> StepEvent:
    return StepEvent(event, n, name, kind, at, 0, by, "Helper/think" if by else "")


def test_a_callees_moments_are_on_the_callers_timeline() -> None:
    events = [
        event("op", 1, 0.0, kind="call", name="Helper/think"),
        event("model_start", 1, 1.0, by=CALLEE),  # the callee's model call, outside the journal
        event("model_end", 1, 2.0, by=CALLEE),
        event("op", 2, 3.0, kind="run", name="save"),  # the caller goes on
        event("step_start", 1, 4.0, name="save"),
        event("step_end", 1, 5.0, name="save"),
    ]
    points = derive_points(events, JOURNAL, ended=6.0)
    assert [(p.name, p.journal_entries, p.gate, p.model_holds) for p in points] == [
        ("after entry 0 (Command: Input)", 1, "op:1:before", ()),
        # While the callee runs, the caller's journal holds its call's command and the callee's id.
        ("in Helper/think: before model call 1", 3, "model:1:before", ()),
        ("in flight: model call 1 in Helper/think", 3, None, (1,)),
        ("after model call 1 returned (not journaled) in Helper/think", 3, "model:1:after", ()),
        ("after entry 3 (Notification: Call)", 4, "op:2:before", ()),
        ("after entry 4 (Command: Run)", 5, "step:1:before", ()),
        ("in flight: step save", 5, "step:1:inside", ()),
    ]


def test_calls_made_at_once_hold_before_the_first(tmp_path: Path) -> None:
    """Two calls gathered: the second is no moment of its own (its command is sent with the first's)."""
    journal = ["Command: Input", "Command: Call", "Notification: CallInvocationId", "Command: Call"]
    journal += ["Notification: CallInvocationId", "Notification: Call", "Notification: Call"]
    journal += ["Command: Output"]
    events = [
        event("op", 1, 0.0, kind="call", name="Helper/think"),
        event("op", 2, 0.1, kind="call", name="Helper/think"),
        event("model_start", 1, 1.0, by="inv_a"),
        event("model_start", 2, 1.1, by="inv_b"),
        event("model_end", 1, 2.0, by="inv_a"),
        event("model_end", 2, 2.1, by="inv_b"),
    ]
    points = derive_points(events, journal, ended=3.0)
    assert [p.gate for p in points if p.gate and p.gate.startswith("op:")] == ["op:1:before"]
    together = [p for p in points if p.kind == "in-flight-parallel"]
    assert [(p.name, p.journal_entries, p.model_holds) for p in together] == [
        ("in flight: model calls 1 and 2 together in Helper/think", 5, (1, 2))
    ]


def test_a_call_the_host_could_not_follow_is_said(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    lines = [
        {"invocation": "inv_root", "event": "op", "kind": "call", "name": "Billing/charge", "n": 1,
         "follows": False, "at": 1.0},
        {"invocation": "inv_root", "event": "op", "kind": "call", "name": "Helper/think", "n": 2,
         "follows": True, "at": 2.0},
    ]  # fmt: skip
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    trace = HostTrace(log, Lane.__new__(Lane))
    [said] = trace.unfollowed("inv_root", [])
    assert said.startswith("Billing/charge, because Billing is not a service of this app")
