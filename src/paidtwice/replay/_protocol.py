"""Restate's service protocol, as much of it as an offline replay speaks.

A journal entry is kept by the server as the protobuf body of its protocol message (`sys_journal.raw`); its
message type follows from `sys_journal.entry_type`. A replay frames each body behind a StartMessage: a 64-bit
header (16 bits type, 16 bits flags, 32 bits length, big-endian), then the body. Type codes and field
numbers are those of restatedev/restate `service-protocol/dev/restate/service/protocol.proto` and
`crates/service-protocol-v4/src/message_codec/mod.rs`.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from paidtwice.agent import FrameReader, read_fields

__all__ = [
    "END",
    "ERROR",
    "PROPOSE_RUN_COMPLETION",
    "SUSPENSION",
    "Frame",
    "command_name",
    "entry_message_type",
    "frame",
    "is_command",
    "message_label",
    "read_frames",
    "start_message",
]

START = 0x0000
SUSPENSION = 0x0001
ERROR = 0x0002
END = 0x0003
COMMAND_ACK = 0x0004
PROPOSE_RUN_COMPLETION = 0x0005
_FIRST_COMMAND = 0x0400
_FIRST_NOTIFICATION = 0x8000

_COMMANDS = {
    "Input": 0x0400,
    "Output": 0x0401,
    "GetLazyState": 0x0402,
    "SetState": 0x0403,
    "ClearState": 0x0404,
    "ClearAllState": 0x0405,
    "GetLazyStateKeys": 0x0406,
    "GetEagerState": 0x0407,
    "GetEagerStateKeys": 0x0408,
    "GetPromise": 0x0409,
    "PeekPromise": 0x040A,
    "CompletePromise": 0x040B,
    "Sleep": 0x040C,
    "Call": 0x040D,
    "OneWayCall": 0x040E,
    "SendSignal": 0x0410,
    "Run": 0x0411,
    "AttachInvocation": 0x0412,
    "GetInvocationOutput": 0x0413,
    "CompleteAwakeable": 0x0414,
}
_NOTIFICATIONS = {
    "GetLazyState": 0x8002,
    "GetLazyStateKeys": 0x8006,
    "GetPromise": 0x8009,
    "PeekPromise": 0x800A,
    "CompletePromise": 0x800B,
    "Sleep": 0x800C,
    "Call": 0x800D,
    "CallInvocationId": 0x800E,
    "Run": 0x8011,
    "AttachInvocation": 0x8012,
    "GetInvocationOutput": 0x8013,
    "Signal": 0xFBFF,
}
_COMMAND_NAMES = {code: name for name, code in _COMMANDS.items()}
_NAME_FIELD = 12
"""Every command message carries its name (`ctx.run`'s name, for one) in field 12."""

_HEADER = struct.Struct(">HHI")


@dataclass(frozen=True)
class Frame:
    """One protocol message the SDK sent."""

    type: int
    """Message type code."""
    body: bytes
    """Its protobuf body."""


@functools.cache
def entry_message_type(entry_type: str) -> int:
    """The message type of a `sys_journal.entry_type` ("Command: Run" -> 0x0411); ValueError if unknown."""
    kind, _, name = entry_type.partition(":")
    table = {"Command": _COMMANDS, "Notification": _NOTIFICATIONS}.get(kind.strip(), {})
    code = table.get(name.strip().replace(" ", ""))
    if code is None:
        raise ValueError(f"unknown journal entry type {entry_type!r}")
    return code


def is_command(message_type: int) -> bool:
    return _FIRST_COMMAND <= message_type < _FIRST_NOTIFICATION


def command_name(body: bytes) -> str:
    """The name a command message carries ("" if none)."""
    value = read_fields(body).get(_NAME_FIELD, b"")
    return value.decode(errors="replace") if isinstance(value, bytes) else ""


def message_label(message: Frame) -> str:
    """A command as the journal reader labels it: "run weather", "sleep", "output"."""
    kind = _COMMAND_NAMES.get(message.type, f"message {message.type:#06x}")
    name = command_name(message.body) if is_command(message.type) else ""
    return f"{kind.lower()} {name}".strip()


def frame(message_type: int, body: bytes) -> bytes:
    return _HEADER.pack(message_type, 0, len(body)) + body


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _field_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def start_message(
    *, raw_id: bytes, debug_id: str, known_entries: int, key: str | None, random_seed: int
) -> bytes:
    """A framed StartMessage: id 1, debug_id 2, known_entries 3, partial_state 5, key 6, random_seed 9.

    The state map is left empty and marked partial, so state the handler reads is taken from the journal
    (eager reads carry their value there) or asked for as a new command.
    """
    body = (
        _field_bytes(1, raw_id)
        + _field_bytes(2, debug_id.encode())
        + _field_varint(3, known_entries)
        + _field_varint(5, 1)
        + (_field_bytes(6, key.encode()) if key else b"")
        + _field_varint(9, random_seed)
    )
    return frame(START, body)


def read_frames(stream: bytes) -> list[Frame]:
    return [Frame(kind, body) for kind, body in FrameReader().feed(stream)]
