"""Server-free checks of the two rules for work started together: an answer delivered inside a step and
asked again is cut off in flight (not paid outside the journal), and under `--cmd` model calls made in
steps started by one await are one moment, from the proxy's log as captured for examples/parallel_agent."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from paidtwice.agent import WireStep
from paidtwice.engine._sql import JournalEntry
from paidtwice.results import CleanRun, CrashPoint
from paidtwice.stub import ModelCall
from paidtwice.stub._scripts import Answer
from paidtwice.sweep._paid import calls_at_kill, why_not_placed
from paidtwice.targets._wire_timeline import wire_points


def call(n: int, turn: int, started: float, finished: float, delivered: bool, asked: str) -> ModelCall:
    return ModelCall(
        "lane", "inv", n, turn, 1, 1, Answer(text="x"), started, finished, delivered, asked=asked
    )


def clean(in_steps: tuple[int, ...]) -> CleanRun:
    return CleanRun(
        "completed", "a", 4, (), (), "inv", len(in_steps), model_turns=(1, 2, 3, 4), calls_in_steps=in_steps
    )


# The parallel agent killed with call 2 held and call 3's answer delivered 15 ms before the kill, not
# journaled yet; the replay asks both again.
KILL = 10.0
CALLS = [
    call(1, 1, 1.0, 1.1, True, "summary"),
    call(2, 2, 5.0, 10.5, False, "customers"),
    call(3, 3, 5.0, 9.985, True, "employees"),
    call(4, 2, 12.0, 12.1, True, "customers"),
    call(5, 3, 12.0, 12.1, True, "employees"),
    call(6, 4, 13.0, 13.1, True, "combine"),
]


def test_an_answer_delivered_inside_a_step_and_asked_again_is_cut_off_in_flight() -> None:
    at_kill = calls_at_kill(CALLS, KILL, clean(in_steps=(1, 2, 3, 4)))
    assert (at_kill.held, at_kill.in_flight, at_kill.answered, at_kill.asked_again) == (1, 2, 2, 0)


def test_the_same_answer_outside_any_step_is_paid_outside_the_journal() -> None:
    at_kill = calls_at_kill(CALLS, KILL, clean(in_steps=()))
    assert (at_kill.held, at_kill.in_flight, at_kill.asked_again) == (1, 1, 1)


def test_an_answer_sent_as_the_agent_died_is_cut_off_in_flight() -> None:
    # Call 2's answer finished sending 2 ms after the kill (delivered, to a dying process), call 3's before
    # it; both steps in flight. Seen under load with three parallel steps: the replay's two calls were paid
    # twice once call 2 was counted neither answered nor cut off.
    calls = [replace(CALLS[1], finished=10.002, delivered=True), *CALLS[2:]]
    at_kill = calls_at_kill([CALLS[0], *calls], KILL, clean(in_steps=(1, 2, 3, 4)))
    assert (at_kill.held, at_kill.in_flight, at_kill.answered, at_kill.asked_again) == (1, 2, 2, 0)


def journal_of(types: list[str]) -> list[JournalEntry]:
    return [JournalEntry(i, kind, "", f"2026-12-05T23:00:{i:02d}.000Z") for i, kind in enumerate(types)]


WIRE = Path(__file__).parent / "parallel_agent_wire.jsonl"
"""The proxy's log of a clean run of examples/parallel_agent's `run` by command (times from 0)."""

CAPTURED_STEPS = (
    WireStep("summarize", 1, 1.594617, 1.787157),
    WireStep("impact on customers", 1, 1.791297, 1.8167953),
    WireStep("impact on employees", 1, 1.7913172, 1.8108726),
    WireStep("combine", 1, 1.8259563, 1.8347385),
)
"""That run's steps as its proxy saw them (name, attempt, RunCommand's time, its result's time)."""


def test_calls_in_steps_started_together_are_one_moment_on_the_wire() -> None:
    """Captured here: calls 2 and 3 did not even overlap at the stub (0.4 ms apart), but their steps sent
    their RunCommands between the same two server frames."""
    records = [json.loads(line) for line in WIRE.read_text().splitlines()]
    invocation = records[0]["invocation"]
    steps = list(CAPTURED_STEPS)
    calls = [
        call(1, 1, 1.7663512, 1.766685, True, ""),
        call(2, 2, 1.8057275, 1.8060029, True, ""),
        call(3, 3, 1.8064468, 1.8097646, True, ""),
        call(4, 4, 1.8295453, 1.8297532, True, ""),
    ]
    types = ["Command: Input", "Command: Run", "Notification: Run", "Command: Run", "Command: Run"]
    types += [
        "Notification: Run",
        "Notification: Run",
        "Command: Run",
        "Notification: Run",
        "Command: Output",
    ]
    journal = journal_of(types)
    points = wire_points(
        journal=journal, wire_log=WIRE, invocation_id=invocation, steps=steps, calls=calls, tools=[]
    )
    names = [p.name for p in points]
    assert "in flight: model calls 2 and 3 together" in names, names
    assert "in flight: model call 2" not in names and "in flight: model call 3" not in names
    (together,) = [p for p in points if p.kind == "in-flight-parallel"]
    assert together.model_holds == ("model:2", "model:3") and together.journal_entries == 5


def late_wire(tmp_path: Path, lag: float) -> tuple[Path, str]:
    """The captured log as a loaded proxy would have written it: the gather's two RunCommands read `lag`
    seconds late. The agent does not wait for the server after sending them (it runs the steps at once),
    so nothing orders their reading before the calls the steps make; everything after them on the wire
    waits on the server, so comes in order."""
    records = [json.loads(line) for line in WIRE.read_text().splitlines()]
    for record in records:
        if record.get("entries") in (4, 5) and record["event"] == "command" or record.get("id") in (2, 3):
            if record["event"] in ("command", "run"):
                record["at"] += lag
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path, records[0]["invocation"]


TYPES = [
    "Command: Input",
    "Command: Run",
    "Notification: Run",
    "Command: Run",
    "Command: Run",
    "Notification: Run",
    "Notification: Run",
    "Command: Run",
    "Notification: Run",
    "Command: Output",
]
"""The journal of the captured run."""


def test_the_parallel_calls_stay_one_moment_when_the_proxy_reads_the_commands_late(tmp_path: Path) -> None:
    """The order that split them under load: the proxy read the gather's two RunCommands after both calls
    had begun (and call 2 ended) at the stub. The steps a call may be in are read from what cannot come
    out of order (the server's frames are stamped before the agent sees them, a step's result after the
    stub answered), so the two stay one moment."""
    lag = 0.0157
    wire, invocation = late_wire(tmp_path, lag)
    first, customers, employees, combine = CAPTURED_STEPS
    late = [replace(step, commanded=step.commanded + lag) for step in (customers, employees)]
    steps = [first, *late, combine]
    calls = [
        call(1, 1, 1.7663512, 1.766685, True, ""),
        call(2, 2, 1.8057275, 1.8060029, True, ""),
        call(3, 3, 1.8064468, 1.8097646, True, ""),
        call(4, 4, 1.8295453, 1.8297532, True, ""),
    ]
    assert all(s.commanded > c.started for s in steps[1:3] for c in calls[1:3])  # the order that split them
    points = wire_points(
        journal=journal_of(TYPES), wire_log=wire, invocation_id=invocation, steps=steps, calls=calls, tools=[]
    )
    names = [p.name for p in points]
    assert "in flight: model calls 2 and 3 together" in names, names
    assert "in flight: model call 2" not in names and "in flight: model call 3" not in names, names
    (together,) = [p for p in points if p.kind == "in-flight-parallel"]
    # Both RunCommands counted, though read after the calls began: the agent sent them whatever the answers.
    assert together.model_holds == ("model:2", "model:3") and together.journal_entries == 5


def test_a_call_made_just_before_a_gather_is_not_held_with_it(tmp_path: Path) -> None:
    """A plain call the handler made after summarize's result and before it started the two steps comes
    after the same server frame as they do; a batch of two steps holds two calls, the latest: the plain
    call is a moment of its own."""
    steps = list(CAPTURED_STEPS)
    calls = [
        call(1, 1, 1.7663512, 1.766685, True, ""),
        call(2, 2, 1.7890, 1.7900, True, ""),  # plain, between summarize's result and the gather
        call(3, 3, 1.8057275, 1.8060029, True, ""),
        call(4, 4, 1.8064468, 1.8097646, True, ""),
        call(5, 5, 1.8295453, 1.8297532, True, ""),
    ]
    invocation = json.loads(WIRE.read_text().splitlines()[0])["invocation"]
    points = wire_points(
        journal=journal_of(TYPES), wire_log=WIRE, invocation_id=invocation, steps=steps, calls=calls, tools=[]
    )
    names = [p.name for p in points]
    assert "in flight: model call 2" in names, names
    assert "in flight: model calls 3 and 4 together" in names, names


def test_a_point_not_placed_says_what_the_journal_held_instead() -> None:
    point = CrashPoint("in flight: model call 2", 4, "in-flight-model", 5, model_holds=("model:2",))
    journal = journal_of(["Command: Input"] * 5 + ["Notification: Run"])
    why = why_not_placed(point, journal, 6, 1)
    assert (
        why == "the journal already held 6 entries at the kill, not 5: Notification: Run appended before it"
    )
    assert why_not_placed(point, journal, 5, 1) == ""
    assert "0 of the 1 held model calls" in why_not_placed(point, journal, 5, 0)


CHAT = "inv_159XUeFGyxlc1DDuDEQwdzs2lsmqr2ugmE"
CHAT_WIRE = [
    {"event": "start", "retry": 0, "known": 1, "at": 0.0564},
    {"event": "progress", "frame": 1031, "at": 0.9274},
    {"event": "command", "frame": 1031, "entries": 2, "at": 0.9275},
    {"event": "command", "frame": 1041, "entries": 3, "at": 0.9275},
    {"event": "run", "id": 2, "name": "model", "at": 0.9275},
    {"event": "step", "id": 2, "name": "model", "value": '{"text":"Retries, then calm."}', "at": 1.4833},
    {"event": "notification", "frame": 32785, "entries": 4, "at": 1.6649},
    {"event": "command", "frame": 1027, "entries": 5, "at": 1.7990},
    {"event": "command", "frame": 1025, "entries": 6, "at": 1.7990},
    {"event": "end", "at": 1.7990},
]
"""The proxy's log of a clean run of tests/ts_corpus's ChatSession/send beside two CPU-bound processes
(times from its start, the answer shortened): the agent's state read and its step's RunCommand, which the
TypeScript SDK writes together, read 17 ms after the step's model call began at the stub."""


def test_a_command_read_late_with_the_step_s_is_counted_in_the_call_s_moment(tmp_path: Path) -> None:
    """The moment in flight holds the state read as well as the step's command: the agent sent both before
    it asked the model (planned 2 entries, the kill found 3, in every retry)."""
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps({"invocation": CHAT, "attempt": 1, **r}) + "\n" for r in CHAT_WIRE))
    answer = Answer(text="Retries, then calm.")
    asked = ModelCall("lane", CHAT, 1, 1, 1, 1, answer, 0.9107, 1.2802, True, replied=1.1153)
    model = WireStep("model", 1, 0.9275, 1.4833, '{"text":"Retries, then calm."}')
    assert model.commanded > asked.started  # the order the load made
    types = ["Command: Input", "Command: GetEagerState", "Command: Run", "Notification: Run"]
    journal = journal_of([*types, "Command: SetState", "Command: Output"])
    points = wire_points(
        journal=journal, wire_log=wire, invocation_id=CHAT, steps=[model], calls=[asked], tools=[]
    )
    (in_flight,) = [p for p in points if p.kind == "in-flight-model"]
    assert (in_flight.name, in_flight.journal_entries) == ("in flight: model call 1", 3)
