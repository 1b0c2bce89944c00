"""Crash points derived from step logs with branches in flight at once (no server: the timelines are data)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from paidtwice.agent import CommandHost, WireStep
from paidtwice.agent._frames import awakeable_id, completed_signal
from paidtwice.engine import IngressClient, JournalEntry
from paidtwice.results import CrashPoint
from paidtwice.stub import Lane, ModelCall
from paidtwice.stub._scripts import Answer
from paidtwice.sweep._approvals import Resolution, Resolver, read_waits
from paidtwice.targets._command import WireTrace
from paidtwice.targets._timeline import StepEvent, derive_points, read_step_log
from paidtwice.targets._wire_timeline import wire_points


def timeline(*rows: tuple[Any, ...]) -> list[StepEvent]:
    """(event, n[, name or kind[, step]]) rows, one second apart."""
    events = []
    for at, row in enumerate(rows):
        event, n = row[0], row[1]
        text = row[2] if len(row) > 2 else ""
        step = row[3] if len(row) > 3 else 0
        kind = text if event == "op" else ""
        name = "" if event == "op" else text
        events.append(StepEvent(event, n, name, kind, float(at), step))
    return events


def brief(points: list[CrashPoint]) -> list[tuple[str, int, str | None, tuple[int, ...]]]:
    return [(p.name, p.journal_entries, p.gate, p.model_holds) for p in points]


def test_parallel_calls_outside_the_journal() -> None:
    events = timeline(
        ("model_start", 1),
        ("model_end", 1),
        ("model_start", 2),
        ("model_start", 3),
        ("model_end", 3),  # the second answer comes back first
        ("model_end", 2),
        ("model_start", 4),
        ("model_end", 4),
    )
    points = derive_points(events, ["Command: Input", "Command: Output"])
    assert brief(points) == [
        ("after entry 0 (Command: Input)", 1, "model:1:before", ()),
        ("in flight: model call 1", 1, None, ("model:1",)),
        ("after model call 1 returned (not journaled)", 1, "model:1:after", ()),
        ("in flight: model calls 2 and 3 together", 1, None, ("model:2", "model:3")),
        ("after model calls 2 and 3 returned (not journaled)", 1, "model:2:after,model:3:after", ()),
        ("in flight: model call 4", 1, None, ("model:4",)),
        ("after model call 4 returned (not journaled)", 1, "model:4:after", ()),
    ]
    assert [p.kind for p in points][3] == "in-flight-parallel"
    assert [p.order for p in points] == list(range(1, 8))


def test_parallel_steps_one_of_which_asks_the_model() -> None:
    journal = [
        "Command: Input",
        "Command: Run summarize",
        "Notification: Run",
        "Command: Run impact",
        "Command: Run lookup",
        "Notification: Run",
        "Notification: Run",
        "Command: Output",
    ]
    events = timeline(
        ("op", 1, "run"),
        ("step_start", 1, "summarize"),
        ("model_start", 1, "", 1),
        ("model_end", 1, "", 1),
        ("step_end", 1, "summarize"),
        ("op", 2, "run"),  # two runs created before the handler awaits both: sent together
        ("op", 3, "run"),
        ("step_start", 2, "impact"),
        ("model_start", 2, "", 2),
        ("step_start", 3, "lookup"),
        ("step_end", 3, "lookup"),
        ("model_end", 2, "", 2),
        ("step_end", 2, "impact"),
    )
    points = derive_points(events, journal)
    assert brief(points) == [
        ("after entry 0 (Command: Input)", 1, "op:1:before", ()),
        ("after entry 1 (Command: Run summarize)", 2, "step:1:before", ()),
        ("in flight: model call 1", 2, None, ("model:1",)),
        ("after entry 2 (Notification: Run)", 3, "op:2:before", ()),
        # No "after entry 3": its command reaches the journal only with the next one.
        ("after entry 4 (Command: Run lookup)", 5, "step:2:before,step:3:before", ()),
        ("in flight: model call 2 and step lookup together", 5, "step:3:inside", ("model:2",)),
    ]


CLAIM = [
    "Command: Input",
    "Command: Run plan",
    "Notification: Run",
    "Command: Run eligibility",
    "Command: Run cost",
    "Command: Run fraud",
    "Notification: Run",
    "Notification: Run",
    "Notification: Run",
    "Command: Run decide",
    "Notification: Run",
    "Command: Output",
]


def test_steps_started_together_are_one_moment_though_their_bodies_ran_in_turn() -> None:
    """Restate's claim example: three quick steps gathered with `restate.gather`. The SDK runs each body as
    a task of its own; bodies without an await run one after another, so their spans in the clean run do
    not overlap, yet the steps were started by one await: holding one alone lets the others finish into
    the kill (the trial's `landed NO`). They are one moment, every step held."""
    events = timeline(
        ("op", 1, "run"),
        ("step_start", 1, "plan"),
        ("model_start", 1, "", 1),
        ("model_end", 1, "", 1),
        ("step_end", 1, "plan"),
        ("op", 2, "run"),
        ("op", 3, "run"),
        ("op", 4, "run"),
        ("step_start", 2, "fraud"),  # the SDK's order, not the handler's
        ("step_end", 2, "fraud"),
        ("step_start", 3, "eligibility"),
        ("step_end", 3, "eligibility"),
        ("step_start", 4, "cost"),
        ("step_end", 4, "cost"),
        ("op", 5, "run"),
        ("step_start", 5, "decide"),
        ("model_start", 2, "", 5),
        ("model_end", 2, "", 5),
        ("step_end", 5, "decide"),
    )
    points = derive_points(events, CLAIM)
    assert brief(points) == [
        ("after entry 0 (Command: Input)", 1, "op:1:before", ()),
        ("after entry 1 (Command: Run plan)", 2, "step:1:before", ()),
        ("in flight: model call 1", 2, None, ("model:1",)),
        ("after entry 2 (Notification: Run)", 3, "op:2:before", ()),
        ("after entry 5 (Command: Run fraud)", 6, "step:2:before,step:3:before,step:4:before", ()),
        (
            "in flight: steps fraud, eligibility and cost together",
            6,
            "step:2:inside,step:3:inside,step:4:inside",
            (),
        ),
        ("after entry 8 (Notification: Run)", 9, "op:5:before", ()),
        ("after entry 9 (Command: Run decide)", 10, "step:5:before", ()),
        ("in flight: model call 2", 10, None, ("model:2",)),
    ]


def test_steps_awaited_one_after_another_stay_apart() -> None:
    """The same quick steps, each awaited before the next is made: each its own moments."""
    events = timeline(
        ("op", 1, "run"),
        ("step_start", 1, "fraud"),
        ("step_end", 1, "fraud"),
        ("op", 2, "run"),
        ("step_start", 2, "cost"),
        ("step_end", 2, "cost"),
    )
    journal = ["Command: Input", "Command: Run fraud", "Notification: Run", "Command: Run cost"]
    points = derive_points(events, [*journal, "Notification: Run", "Command: Output"])
    assert not [p for p in points if p.kind == "in-flight-parallel"]
    assert [p.name for p in points] == [
        "after entry 0 (Command: Input)",
        "after entry 1 (Command: Run fraud)",
        "in flight: step fraud",
        "after entry 2 (Notification: Run)",
        "after entry 3 (Command: Run cost)",
        "in flight: step cost",
    ]


def test_a_sequential_timeline_has_no_parallel_point() -> None:
    events = timeline(
        ("model_start", 1),
        ("model_end", 1),
        ("op", 1, "run"),
        ("step_start", 1, "weather"),
        ("step_end", 1, "weather"),
        ("op", 2, "sleep"),
        ("op", 3, "run"),  # after an awaited sleep: a moment of its own
        ("step_start", 2, "ask"),
        ("model_start", 2, "", 2),
        ("model_end", 2, "", 2),
        ("step_end", 2, "ask"),
    )
    journal = ["Command: Input", "Command: Run weather", "Notification: Run", "Command: Sleep"]
    points = derive_points(events, journal + ["Notification: Sleep", "Command: Run ask", "Notification: Run"])
    assert not [p for p in points if p.kind == "in-flight-parallel"]
    assert [p.name for p in points] == [
        "after entry 0 (Command: Input)",
        "in flight: model call 1",
        "after model call 1 returned (not journaled)",
        "after entry 1 (Command: Run weather)",
        "in flight: step weather",
        "after entry 2 (Notification: Run)",
        "in pause after weather",
        "after entry 4 (Notification: Sleep)",
        "after entry 5 (Command: Run ask)",
        "in flight: model call 2",
    ]


def test_a_timer_raced_against_a_model_call_is_no_pause() -> None:
    # `restate.select(answer=ctx.run_typed("draft", ...), timeout=ctx.sleep(...))`: the timer's command is
    # journaled beside the step's, the step runs at once, and the timer that lost is never completed.
    journal = [
        "Command: Input",
        "Command: Run draft",
        "Command: Sleep",
        "Notification: Run",
        "Command: Run check",
        "Notification: Run",
        "Command: Output",
    ]
    events = timeline(
        ("op", 1, "run"),
        ("op", 2, "sleep"),  # created before the handler awaits: sent with the run's command
        ("step_start", 1, "draft"),
        ("model_start", 1, "", 1),
        ("model_end", 1, "", 1),
        ("step_end", 1, "draft"),
        ("op", 3, "run"),
        ("step_start", 2, "check"),
        ("model_start", 2, "", 2),
        ("model_end", 2, "", 2),
        ("step_end", 2, "check"),
    )
    assert brief(derive_points(events, journal)) == [
        ("after entry 0 (Command: Input)", 1, "op:1:before", ()),
        ("after entry 2 (Command: Sleep)", 3, "step:1:before", ()),
        ("in flight: model call 1", 3, None, ("model:1",)),
        ("after entry 3 (Notification: Run)", 4, "op:3:before", ()),
        ("after entry 4 (Command: Run check)", 5, "step:2:before", ()),
        ("in flight: model call 2", 5, None, ("model:2",)),
    ]


def test_model_calls_a_step_makes_at_once_are_one_moment() -> None:
    # `ctx.run_typed("translate", both)` where `both` asks the model twice under `asyncio.gather`: the two
    # calls are held together; holding one alone would let the other's answer come back into the kill.
    journal = ["Command: Input", "Command: Run translate", "Notification: Run", "Command: Output"]
    events = timeline(
        ("op", 1, "run"),
        ("step_start", 1, "translate"),
        ("model_start", 1, "", 1),
        ("model_start", 2, "", 1),
        ("model_end", 2, "", 1),
        ("model_end", 1, "", 1),
        ("step_end", 1, "translate"),
    )
    points = derive_points(events, journal)
    assert brief(points) == [
        ("after entry 0 (Command: Input)", 1, "op:1:before", ()),
        ("after entry 1 (Command: Run translate)", 2, "step:1:before", ()),
        ("in flight: model calls 1 and 2 together", 2, None, ("model:1", "model:2")),
    ]
    assert points[2].kind == "in-flight-parallel"


def test_waiting_for_an_awakeable_alone_is_a_point_and_its_resolution_an_entry() -> None:
    events = timeline(
        ("op", 1, "run"),
        ("step_start", 1, "draft"),
        ("model_start", 1, "", 1),
        ("model_end", 1, "", 1),
        ("step_end", 1, "draft"),
        ("op", 2, "awakeable"),
        ("op", 3, "run"),
        ("step_start", 2, "send"),
        ("step_end", 2, "send"),
    )
    journal = ["Command: Input", "Command: Run", "Notification: Run", "Notification: Signal", "Command: Run"]
    points = derive_points(events, [*journal, "Notification: Run", "Command: Output"])
    waiting = [(p.name, p.journal_entries, p.pause_op) for p in points if p.kind == "waiting"]
    assert waiting == [("waiting for the awakeable", 3, "op:2")]
    # The handler went on once the approval came: the next moment counts the signal's entry.
    after = [p.name for p in points if p.order > next(q.order for q in points if q.kind == "waiting")]
    assert after[0] == "after entry 3 (Notification: Signal)", after


def test_an_awakeable_made_before_the_step_that_sends_its_id_is_waited_on_after_it() -> None:
    # Restate's human-approval example: awakeable, then a "Request review" step with its id, then await.
    events = timeline(
        ("op", 1, "awakeable"),
        ("op", 2, "run"),
        ("step_start", 2, "Request review"),
        ("step_end", 2, "Request review"),
    )
    journal = ["Command: Input", "Command: Run", "Notification: Run", "Notification: Signal"]
    points = derive_points(events, [*journal, "Command: Output"])
    assert [(p.kind, p.name, p.journal_entries, p.pause_op, p.begins) for p in points][-2:] == [
        ("in-flight-step", "in flight: step Request review", 2, None, 2.0),
        # From the step's end (its result journaled) until the approval: the kill lands while it waits.
        ("waiting", "waiting for the awakeable", 3, "op:1", 3.0),
    ]
    # Made before the step and resolved after it in the clean run: every moment until the wait holds its
    # resolution back until the kill (a handler stopped at a gate looks as quiet as one waiting), none after.
    assert [(p.name, p.held_waits) for p in points] == [
        ("after entry 0 (Command: Input)", ()),
        ("after entry 1 (Command: Run)", ("op:1",)),
        ("in flight: step Request review", ("op:1",)),
        ("waiting for the awakeable", ("op:1",)),
    ]
    # The wait lasts until the handler goes on (the model's next call), not until the step's end.
    went_on = derive_points([*events, *timeline(*[("op", 9)] * 4, ("model_start", 1))[4:]], journal)
    assert [(p.name, p.begins) for p in went_on][-3:-1] == [
        ("waiting for the awakeable", 3.0),
        ("after entry 3 (Notification: Signal)", 4.0),
    ]
    # Made, sent out, and not resolved in the clean run's journal (the run timed out): no waiting point.
    unresolved = derive_points(events, ["Command: Input", "Command: Run", "Notification: Run"])
    assert all(p.kind != "waiting" for p in unresolved)


def test_an_awakeable_raced_against_a_timer_waits_at_the_timer_whichever_wins() -> None:
    events = timeline(("op", 1, "awakeable"), ("op", 2, "sleep"))
    won = derive_points(
        events, ["Command: Input", "Command: Sleep", "Notification: Signal", "Command: Output"]
    )
    assert [(p.kind, p.name, p.journal_entries, p.pause_op) for p in won if p.kind != "after-entry"] == [
        ("waiting", "waiting for the awakeable (raced against a timer)", 2, "op:2")
    ]
    # Its pause_op is the timer's; the awakeable it holds back is its own.
    assert [p.held_waits for p in won if p.kind == "waiting"] == [("op:1",)]
    assert derive_points(events[:1], ["Command: Input", "Command: Output"])[-1].held_waits == ()
    timed_out = derive_points(
        events, ["Command: Input", "Command: Sleep", "Notification: Sleep", "Command: Output"]
    )
    assert [(p.kind, p.journal_entries) for p in timed_out if p.kind != "after-entry"] == [("pause", 2)]


def test_a_workflow_promise_is_its_get_command_then_the_wait() -> None:
    events = timeline(("op", 1, "promise"))
    points = derive_points(events, ["Command: Input", "Command: GetPromise", "Notification: GetPromise"])
    assert [(p.kind, p.journal_entries, p.pause_op) for p in points if p.kind == "waiting"] == [
        ("waiting", 2, "op:1")
    ]


# -- the same moment in process and by command, from captured clean runs ---------------------------------

TIMELINES = Path(__file__).resolve().parents[1] / "fixtures" / "timelines"
"""Clean runs of examples/parallel_agent's `run` (two model calls in steps gathered with `restate.gather`),
captured from sweeps on a loaded machine: the host's step log in process (parallel-app), and by command the
proxy's log, the stub's ledger and the journal (parallel-cmd-*); and by command the clean run of
tests/conformance/ts_apps' signals_app (signals-cmd)."""


def captured_cmd(name: str) -> tuple[list[CrashPoint], list[ModelCall], list[WireStep]]:
    """The crash points `sweep --cmd` plans from a captured clean run, with its model calls and steps."""
    meta = json.loads((TIMELINES / f"{name}.json").read_text())
    calls = [
        ModelCall("lane", meta["invocation_id"], c["call"], c["call"], 1, 1, Answer(text=""), c["started"],
                  c["finished"], True)
        for c in meta["calls"]
    ]  # fmt: skip
    steps = [WireStep(**s) for s in meta["steps"]]
    points = wire_points(
        journal=[JournalEntry(**e) for e in meta["journal"]],
        wire_log=TIMELINES / f"{name}.wire.jsonl",
        invocation_id=meta["invocation_id"],
        steps=steps,
        calls=calls,
        tools=[],
    )
    return points, calls, steps


def test_calls_held_together_plan_the_journal_a_held_run_reaches_in_process_and_by_command() -> None:
    """While the two analyses' calls are both held, the journal holds the input, summarize's command and
    result, and the two steps' RunCommands: 5 entries, in process and by command alike.

    By command it is read off the wire, where two clean runs went out of the usual order. In one the stub
    answered call 2 and its step's result was journaled (entry 5) before call 3 began: counted at call 3's
    start, the moment was planned at 6 entries, which a run holding call 2 never writes (it waited, then
    said 'not placed'). In the other the proxy read the two RunCommands only after both calls had been
    answered: counted at the calls' starts it was planned at 4, and the held run, whose agent sends its
    commands whatever the answers, was already past it."""
    meta = json.loads((TIMELINES / "parallel-app.json").read_text())
    events = read_step_log(TIMELINES / "parallel-app.steps.jsonl", meta["invocation_id"])
    in_process = derive_points(events, meta["journal"], meta["tool_starts"], ended=meta["ended"])
    (held,) = [p for p in in_process if p.kind == "in-flight-parallel"]
    assert (held.name, held.model_holds, held.journal_entries) == (
        "in flight: model calls 2 and 3 together",
        ("model:2", "model:3"),
        5,
    )
    late_call, calls, steps = captured_cmd("parallel-cmd-late-call")
    _, customers, _, _ = steps
    assert customers.proposed is not None and customers.proposed < calls[2].started  # the order it shows
    late_commands, calls, steps = captured_cmd("parallel-cmd-late-commands")
    assert all(s.commanded > c.finished for s in steps[1:3] for c in calls[1:3] if c.finished is not None)
    planned = [[(p.name, p.model_holds, p.journal_entries) for p in points if p.kind == "in-flight-parallel"]
               for points in (late_call, late_commands)]  # fmt: skip
    assert planned == [[(held.name, held.model_holds, held.journal_entries)]] * 2


def test_no_moment_is_planned_between_the_signals_of_awakeables_the_handler_completes_itself() -> None:
    """signals_app's Relay by command: the handler resolves one awakeable and rejects another, then awaits
    them raced against a timer. The server appends their signals as it journals the completions, whatever
    the proxy holds back from the agent: a moment after the timer's command, or after the first signal,
    found the journal past it at every kill ('not placed'). The timer is no pause: the handler goes on."""
    points, _, _ = captured_cmd("signals-cmd")
    meta = json.loads((TIMELINES / "signals-cmd.json").read_text())
    labels = [JournalEntry(**e).label() for e in meta["journal"]]
    completed = [i for i, label in enumerate(labels) if label == "Command: CompleteAwakeable"]
    assert completed, labels
    for point in points:
        held = labels[: point.journal_entries]
        assert held.count("Command: CompleteAwakeable") <= held.count("Notification: Signal"), point.name
    assert not [p.name for p in points if p.kind == "pause"]
    # Once both signals came, the moment is the journal's again.
    signals = [i for i, label in enumerate(labels) if label == "Notification: Signal"]
    assert (f"after entry {signals[1]} (Notification: Signal)", signals[1] + 1) in [
        (p.name, p.journal_entries) for p in points
    ]


def test_the_signal_index_of_an_awakeable_the_invocation_completes_is_read_from_its_id() -> None:
    mine, other = bytes(range(17)), bytes(range(1, 18))
    body = b"\x0a" + bytes([len(awakeable_id(mine, 18))]) + awakeable_id(mine, 18).encode()
    assert completed_signal(body, mine) == 18
    assert completed_signal(body, other) is None  # another invocation's awakeable
    assert completed_signal(b"\x0a\x05prom_", mine) is None


def _op(n: int, kind: str, name: str, at: float, **callee: Any) -> StepEvent:
    return StepEvent("op", n, name, kind, at, **callee)


def test_awakeables_the_handler_resolves_itself_are_never_waited_for() -> None:
    # signals_app's shape: each awakeable made, then resolved (rejected) by the handler; awaited after both.
    events = [
        *timeline(("op", 1, "run"), ("step_start", 1, "ask"), ("step_end", 1, "ask")),
        _op(2, "awakeable", "sign_a", 3.0),
        _op(3, "complete_awakeable", "sign_a", 4.0),
        _op(4, "awakeable", "sign_b", 5.0),
        _op(5, "complete_awakeable", "sign_b", 6.0),
        _op(6, "run", "next", 7.0),
        StepEvent("step_start", 2, "next", "", 8.0),
        StepEvent("step_end", 2, "next", "", 9.0),
    ]
    journal = [
        "Command: Input", "Command: Run ask", "Notification: Run", "Command: CompleteAwakeable",
        "Command: CompleteAwakeable", "Notification: Signal", "Notification: Signal", "Command: Run next",
        "Notification: Run", "Command: Output",
    ]  # fmt: skip
    points = derive_points(events, journal)
    assert all(p.kind != "waiting" and not p.held_waits for p in points), points
    # Their commands and signals are counted: the step after them is planned on the journal it meets.
    assert ("after entry 7 (Command: Run next)", 8, "step:2:before") in [
        (p.name, p.journal_entries, p.gate) for p in points
    ]


def test_a_promise_the_workflow_completes_itself_is_read_at_once() -> None:
    # workflow_app's Review/run: the promise resolved, then read, then another rejected; each awaited.
    events = [
        *timeline(("op", 1, "run"), ("step_start", 1, "ask"), ("step_end", 1, "ask")),
        _op(2, "set", "draft", 3.0),
        _op(3, "complete_promise", "drafted", 4.0),
        _op(4, "promise", "drafted", 5.0),
        _op(5, "complete_promise", "withdrawn", 6.0),
    ]
    journal = [
        "Command: Input", "Command: Run ask", "Notification: Run", "Command: SetState",
        "Command: CompletePromise", "Notification: CompletePromise", "Command: GetPromise",
        "Notification: GetPromise", "Command: CompletePromise", "Notification: CompletePromise",
        "Command: Output",
    ]  # fmt: skip
    points = derive_points(events, journal)
    assert all(p.kind != "waiting" for p in points), points
    assert [(p.name, p.journal_entries, p.gate) for p in points][-2:] == [
        ("after entry 5 (Notification: CompletePromise)", 6, "op:4:before"),
        ("after entry 7 (Notification: GetPromise)", 8, "op:5:before"),
    ]


@pytest.mark.parametrize(
    ("journal", "entries"),
    [
        # The caller ended before its callee ran: the moment's journal is the caller's whole, output included.
        (["Command: Input", "Command: OneWayCall", "Notification: CallInvocationId", "Command: Output"], 4),
        # The caller attached to it: it goes on until its AttachInvocation command, and waits there.
        (
            [
                "Command: Input",
                "Command: OneWayCall",
                "Notification: CallInvocationId",
                "Command: AttachInvocation",
                "Notification: AttachInvocation",
                "Command: Output",
            ],
            4,
        ),
    ],  # fmt: skip
)
def test_a_callee_a_send_started_is_planned_where_its_caller_waits_or_ends(
    journal: list[str], entries: int
) -> None:
    callee: dict[str, Any] = {"by": "inv_callee", "handler": "Archive/file", "sent": True}
    events = [
        _op(1, "send", "Archive/file", 0.0),
        _op(2, "run", "write", 1.0, **callee),
        StepEvent("step_start", 1, "write", "", 2.0, **callee),
        StepEvent("step_end", 1, "write", "", 3.0, **callee),
    ]
    points = [p for p in derive_points(events, journal) if "Archive/file" in p.name]
    assert [(p.name, p.journal_entries) for p in points] == [
        ("in Archive/file: before run write", entries),
        ("in flight: step write in Archive/file", entries),
    ]


def test_a_promise_the_workflow_completes_itself_is_no_wait_on_nothing(tmp_path: Path) -> None:
    # workflow_app's Review/run, quiet for over a second after reading the promise it resolved (a loaded
    # machine): the clean run is not taken as waiting on a promise nothing resolves.
    log = tmp_path / "steps.jsonl"
    long_ago = time.time() - 5.0
    ops = [("complete_promise", "drafted"), ("promise", "drafted")]
    lines = [
        {"invocation": "inv_1", "event": "op", "kind": kind, "name": name, "n": n, "at": long_ago + n}
        for n, (kind, name) in enumerate(ops, start=1)
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    resolver = Resolver(IngressClient("http://127.0.0.1:9"), log, service="Review", served_as="Review",
                        resolution=Resolution())  # fmt: skip
    resolver.invocation_id = "inv_1"
    assert resolver.waiting_on_nothing() is None
    # Read without its completion, the same promise is one nothing resolves.
    log.write_text(json.dumps(lines[1]) + "\n")
    assert "promise 'drafted'" in (resolver.waiting_on_nothing() or "")


def test_a_wait_its_own_tree_completes_is_not_the_sweeps_to_resolve(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    ops = [("awakeable", "sign_a"), ("complete_awakeable", "sign_a"), ("awakeable", "sign_b")]
    lines = [
        {"invocation": "inv_1", "event": "op", "kind": kind, "name": name, "n": n, "at": float(n)}
        for n, (kind, name) in enumerate(ops, start=1)
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [(w.name, w.index) for w in read_waits(log, "inv_1")] == [("sign_b", 0)]


def test_a_wait_resolved_after_the_moment_is_held_however_late_the_journal_reads(tmp_path: Path) -> None:
    # The CI failure: stopped before the step that sends the awakeable's id, the handler looks quiet; on a
    # loaded machine the journal read lagged behind the moment's entries, and the approval landed before
    # the kill. The plan's held wait is held whatever the journal says.
    wait = read_waits(_awakeable_log(tmp_path), "inv_1")[0]
    behind = {"hold_at": 4, "journal_length": lambda: 3}
    ingress = IngressClient("http://127.0.0.1:9")
    planned = Resolver(ingress, tmp_path, service="A", served_as="A", resolution=Resolution(),
                       hold_ops=frozenset({wait.named}), **behind)  # type: ignore[arg-type]  # fmt: skip
    assert planned._held(wait)
    unplanned = Resolver(ingress, tmp_path, service="A", served_as="A", resolution=Resolution(),
                         **behind)  # type: ignore[arg-type]  # fmt: skip
    assert not unplanned._held(wait)
    planned.release()
    assert not planned._held(wait)


def _awakeable_log(tmp_path: Path) -> Path:
    log = tmp_path / "awakeable.jsonl"
    line = {"invocation": "inv_1", "event": "op", "kind": "awakeable", "name": "sign_a", "n": 1, "at": 1.0}
    log.write_text(json.dumps(line) + "\n")
    return log


def test_a_command_s_step_cut_off_counts_as_an_execution_as_the_host_counts_it() -> None:
    """A race's loser cancelled mid-step in the clean run, finished by a replay: both runs executed it once
    (the wire sees its RunCommand in the one, its result in the other), so the replay paid nothing again."""
    clean = [WireStep("think", 1, 1.0, 2.0, "a"), WireStep("answer", 1, 1.1, None)]
    replay = [WireStep("think", 1, 5.0, 6.0, "a"), WireStep("answer", 1, 5.1, 6.1, "b")]
    killed = [
        WireStep("answer", 1, 1.1, None),
        WireStep("answer", 2, 4.0, 4.5, "b"),
    ]  # cut by the kill, redone
    for steps, counts in ((clean, 1), (replay, 1), (killed, 2)):
        agent = SimpleNamespace(tree=lambda invocation: [invocation], steps=lambda invocation, s=steps: s)
        trace = WireTrace(cast(CommandHost, agent), cast(Lane, None))
        assert dict(trace.steps("inv"))["answer"] == counts, steps
