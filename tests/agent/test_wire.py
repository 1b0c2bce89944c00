"""Reading attempts off the service protocol: frames, fields, and numbering attempts from the retry count."""

from __future__ import annotations

import struct

import pytest

from paidtwice.agent import AgentAttempt
from paidtwice.agent._process import attempt_of, number_attempts
from paidtwice.agent._wire import FrameReader, read_fields


def frame(kind: int, body: bytes) -> bytes:
    return struct.pack(">HHI", kind, 0, len(body)) + body


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_frames_are_split_whatever_the_chunking() -> None:
    start = varint(2 << 3 | 2) + varint(7) + b"inv_abc" + varint(7 << 3) + varint(300)
    stream = frame(0x0000, start) + frame(0x0411, b"") + frame(0x0002, varint(1 << 3) + varint(570))
    reader = FrameReader()
    frames = [f for i in range(len(stream)) for f in reader.feed(stream[i : i + 1])]
    assert [kind for kind, _ in frames] == [0x0000, 0x0411, 0x0002]
    assert read_fields(frames[0][1]) == {2: b"inv_abc", 7: 300}
    assert read_fields(frames[2][1]) == {1: 570}


def attempt(retry: int, progressed: bool = False, code: int | None = None) -> AgentAttempt:
    return AgentAttempt("inv", 0.0, 1, retry, progressed, code)


def test_attempts_made_while_the_agent_was_down_are_numbered_in() -> None:
    # Killed after progress; two refused attempts; the replay makes progress and completes.
    assert number_attempts([attempt(0, True), attempt(3, True)]) == [1, 4]
    # Then a mismatch (no progress): the count runs on from the same base.
    assert number_attempts([attempt(0, True), attempt(3, code=570), attempt(4, True)]) == [1, 4, 5]
    # A restarted server forgets its count: an attempt is still after the one before.
    assert number_attempts([attempt(0, True), attempt(0, True)]) == [1, 2]


def test_journal_round_trips_pair_each_proposal_with_the_next_frame_back() -> None:
    records = [
        {"event": "start", "invocation": "inv", "retry": 0, "at": 10.0},
        {"event": "progress", "at": 10.1},
        {"event": "propose", "at": 13.0},
        {"event": "ack", "at": 13.004},
        {"event": "propose", "at": 16.0},
        {"event": "ack", "at": 16.25},
        {"event": "propose", "at": 19.0},  # cut off by a kill: no answer came back
    ]
    attempt = attempt_of(records, pid=7)
    assert attempt is not None
    assert attempt.journal_waits == pytest.approx((0.004, 0.25))
