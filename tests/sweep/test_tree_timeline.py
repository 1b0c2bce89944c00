"""A tree of invocations on one timeline (no server: the step log is data): the callees' lines, filed under
the swept invocation by paidtwice's host, give moments named for the callee, while the swept handler's
journal count stays its own (its call's command and the callee's id, the result once it goes on)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paidtwice.stub import Lane
from paidtwice.sweep._approvals import read_waits
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


def event(
    event: str, n: int, at: float, *, kind: str = "", name: str = "", by: str = "", place: str = ""
) -> StepEvent:
    return StepEvent(event, n, name, kind, at, 0, by, "Helper/think" if by else "", place=place)


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
        ("in flight: model call 1 in Helper/think", 3, None, ("model:1",)),
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
        event("model_start", 1, 1.0, by="inv_a", place="1"),
        event("model_start", 2, 1.1, by="inv_b", place="2"),
        event("model_end", 1, 2.0, by="inv_a", place="1"),
        event("model_end", 2, 2.1, by="inv_b", place="2"),
    ]
    points = derive_points(events, journal, ended=3.0)
    assert [p.gate for p in points if p.gate and p.gate.startswith("op:")] == ["op:1:before"]
    together = [p for p in points if p.kind == "in-flight-parallel"]
    assert [(p.name, p.journal_entries, p.model_holds) for p in together] == [
        # Each held call is named by its callee's place and its own count, as the host names it.
        ("in flight: model calls 1 and 2 together in Helper/think", 5, ("1/model:1", "2/model:1"))
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


def test_a_gate_names_its_callee_by_its_place_and_counts_its_own() -> None:
    """Two clerks, sent at position 1 and called at position 3 of the root's attempt: each one's gates
    count its own steps and operations after its place, the root's its own, whatever ran in between (the
    tree's count of a moment depends on the order its callees happened to run in)."""
    journal = ["Command: Input", "Command: OneWayCall", "Notification: CallInvocationId", "Command: Sleep"]
    journal += ["Notification: Sleep", "Command: Call", "Notification: CallInvocationId"]
    journal += ["Notification: Call", "Command: Run", "Notification: Run", "Command: Output"]
    sent: dict[str, Any] = {"by": "inv_sent", "handler": "Clerk/file", "place": "1", "sent": True}
    called: dict[str, Any] = {"by": "inv_called", "handler": "Clerk/file", "place": "3"}
    events = [
        StepEvent("op", 1, "Clerk/file", "send", 0.0),
        StepEvent("op", 2, "", "sleep", 0.1),
        StepEvent("op", 3, "write", "run", 0.2, **sent),
        StepEvent("step_start", 1, "write", "", 0.3, **sent),
        StepEvent("step_end", 1, "write", "", 0.4, **sent),
        StepEvent("op", 4, "Clerk/file", "call", 1.1),
        StepEvent("op", 5, "write", "run", 1.2, **called),
        StepEvent("step_start", 2, "write", "", 1.3, **called),
        StepEvent("step_end", 2, "write", "", 1.4, **called),
        StepEvent("op", 6, "save", "run", 2.0),
        StepEvent("step_start", 3, "save", "", 2.1),
        StepEvent("step_end", 3, "save", "", 2.2),
    ]
    gates = [(p.name, p.gate) for p in derive_points(events, journal, ended=3.0) if p.gate]
    # The root's call is its third operation, its step its first: the clerks' are their own.
    assert gates == [
        ("after entry 0 (Command: Input)", "op:1:before"),
        ("in pause", "op:2:pause"),  # the host withholds the pause's end until the kill
        ("in Clerk/file: before run write", "1/op:1:before"),
        ("in flight: step write in Clerk/file", "1/step:1:inside"),
        ("after entry 4 (Notification: Sleep)", "op:3:before"),
        ("in Clerk/file: before run write", "3/op:1:before"),
        ("in flight: step write in Clerk/file", "3/step:1:inside"),
        ("after entry 7 (Notification: Call)", "op:4:before"),
        ("after entry 8 (Command: Run)", "step:1:before"),
        ("in flight: step save", "step:1:inside"),
    ]


def test_a_pause_and_a_wait_are_named_by_their_handler_whatever_the_callees_logged_first(
    tmp_path: Path,
) -> None:
    """A sent clerk runs beside its caller: in the clean run the root's sleep is the tree's second operation;
    in a point's run the clerk may log first and take that number. The pause is named as the host names its
    gates (the root's own second operation), so the point's run is not at it before the root is; a callee's
    wait is named by its place and its own count, which a point holds it back by."""
    journal = ["Command: Input", "Command: OneWayCall", "Notification: CallInvocationId", "Command: Sleep"]
    journal += ["Notification: Sleep", "Command: Output"]
    sent: dict[str, Any] = {"by": "inv_sent", "handler": "Clerk/file", "place": "1", "sent": True}
    clean = [
        StepEvent("op", 1, "Clerk/file", "send", 0.0),
        StepEvent("op", 2, "", "sleep", 0.1),
        StepEvent("op", 3, "sign", "awakeable", 0.2, **sent),
    ]
    [pause] = [p for p in derive_points(clean, journal, ended=3.0) if p.kind == "pause"]
    assert pause.pause_op == "op:2"
    root = {"invocation": "inv_root", "event": "op"}
    raced = [
        {**root, "kind": "send", "name": "Clerk/file", "n": 1, "at": 0.0},
        {**root, "kind": "awakeable", "name": "sign", "n": 2, "at": 0.1, **sent},
    ]
    log = tmp_path / "steps.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in raced))
    trace = HostTrace(log, Lane.__new__(Lane))
    assert not trace.stopped_at("inv_root", pause)
    assert [(w.n, w.named) for w in read_waits(log, "inv_root")] == [(2, "1/op:1")]
    assert pause.gate == "op:2:pause"  # the host logs it as the root's sleep is made, after its line
    with log.open("a") as more:
        more.write(json.dumps({**root, "kind": "sleep", "name": "", "n": 3, "at": 0.2}) + "\n")
        more.write(
            json.dumps({"invocation": "inv_root", "event": "gate", "gate": pause.gate, "at": 0.2}) + "\n"
        )
    assert trace.stopped_at("inv_root", pause)


def test_callees_called_at_once_are_held_together_before_the_first_begins() -> None:
    """Two workers gathered: the moment before the first begins holds the other too (its result would
    reach the caller's journal before the kill), whichever of them begins first in the point's run."""
    journal = ["Command: Input", "Command: Call", "Notification: CallInvocationId", "Command: Call"]
    journal += ["Notification: CallInvocationId", "Notification: Call", "Notification: Call"]
    journal += ["Command: Output"]
    a: dict[str, Any] = {"by": "inv_a", "handler": "Worker/write", "place": "1"}
    b: dict[str, Any] = {"by": "inv_b", "handler": "Worker/write", "place": "2"}
    events = [
        StepEvent("op", 1, "Worker/write", "call", 0.0, pos=1),
        StepEvent("op", 2, "Worker/write", "call", 0.1, pos=2),
        StepEvent("op", 3, "write", "run", 1.0, **b),
        StepEvent("op", 4, "write", "run", 1.1, **a),
    ]
    gates = [p.gate for p in derive_points(events, journal, ended=3.0) if p.name.startswith("in Worker")]
    assert gates == ["2/op:1:before,1/op:1:before"]
