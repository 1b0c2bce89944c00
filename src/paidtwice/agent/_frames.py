"""The service protocol's frames as the proxy reads and rewrites them: a byte stream split into frames,
a protobuf message's fields walked without a schema, a call's service renamed, an awakeable's id made."""

from __future__ import annotations

import base64

from paidtwice.agent._wire import _varint, read_fields

__all__ = ["RawFrames", "awakeable_id", "completed_signal", "packed_varints", "renamed_frame"]

RUN_COMMAND = 0x0411
CALL_COMMAND = 0x040D
ONE_WAY_CALL_COMMAND = 0x040E
CALL_INVOCATION_ID = 0x800E
"""CallInvocationIdCompletionNotification: the callee's invocation id (field 16)."""
FIRST_AWAKEABLE = 17
"""The first signal index an SDK gives `ctx.awakeable()` (those below are the protocol's own: 1 is cancel)."""
SIGNAL_NOTIFICATION = 0xFBFF
COMPLETE_AWAKEABLE_COMMAND = 0x0414
"""CompleteAwakeableCommand: the handler resolves or rejects an awakeable by its id (field 1)."""
GET_PROMISE_COMMAND = 0x0409
SLEEP_COMMAND = 0x040C
COMPLETING_COMMANDS = frozenset(
    {0x0402, 0x0406, 0x0409, 0x040A, 0x040B, 0x040C, 0x040D, 0x0411, 0x0412, 0x0413}
)
"""Commands whose result comes back as a notification naming their completion id (field 11): state and
promise reads, promise completion, sleep, call, run, attach, invocation output."""


def awakeable_id(raw_invocation_id: bytes, signal: int) -> str:
    """The id `ctx.awakeable()` gives (and the ingress resolves): "sign_1" and, in URL-safe base64 without
    padding, the invocation's id followed by the awakeable's signal index (32-bit big-endian), as the SDKs'
    shared core makes it."""
    encoded = base64.urlsafe_b64encode(raw_invocation_id + signal.to_bytes(4, "big")).decode()
    return "sign_1" + encoded.rstrip("=")


def completed_signal(body: bytes, raw_invocation_id: bytes) -> int | None:
    """The signal index of the awakeable a CompleteAwakeableCommand's body completes (its id, field 1, as
    `awakeable_id` makes it), when the invocation made it; None for another invocation's awakeable, or an id
    in another form."""
    awakeable = read_fields(body).get(1, b"")
    text = awakeable.decode(errors="replace") if isinstance(awakeable, bytes) else ""
    if not text.startswith("sign_1") or not raw_invocation_id:
        return None
    encoded = text[len("sign_1") :]
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        return None
    if len(raw) != len(raw_invocation_id) + 4 or not raw.startswith(raw_invocation_id):
        return None
    return int.from_bytes(raw[-4:], "big")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(body: bytes) -> list[tuple[int, int, int, int]]:
    """Each field of a protobuf message: (number, wire type, start of its key, start of the next field)."""
    found = []
    at = 0
    while at < len(body):
        start = at
        key, at = _varint(body, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, at = _varint(body, at)
        elif wire == 1:
            at += 8
        elif wire == 2:
            length, at = _varint(body, at)
            at += length
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        found.append((number, wire, start, at))
    return found


def packed_varints(body: bytes, number: int) -> list[int]:
    """The values of a repeated integer field (packed, or one by one)."""
    values = []
    for field, wire, start, end in _fields(body):
        if field != number:
            continue
        at = _varint(body, start)[1]
        if wire == 0:
            values.append(_varint(body, at)[0])
        elif wire == 2:
            _, at = _varint(body, at)
            while at < end:
                value, at = _varint(body, at)
                values.append(value)
    return values


def renamed_frame(raw: bytes, names: dict[str, str]) -> bytes:
    """A call's or send's frame (header and body) with its service (field 1) renamed as `names` says; the
    frame as it was when the service is not in `names`."""
    body = raw[8:]
    out = bytearray()
    changed = False
    for number, wire, start, end in _fields(body):
        if number == 1 and wire == 2:
            at = _varint(body, start)[1]
            _, value_at = _varint(body, at)
            name = body[value_at:end].decode(errors="replace")
            if name in names:
                new = names[name].encode()
                out += body[start:at] + _encode_varint(len(new)) + new
                changed = True
                continue
        out += body[start:end]
    if not changed:
        return raw
    return raw[:4] + len(out).to_bytes(4, "big") + bytes(out)


class RawFrames:
    """Splits a byte stream into protocol frames, each kept whole (header included) to be passed on."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        self._buffer += chunk
        frames = []
        while len(self._buffer) >= 8:
            kind = int.from_bytes(self._buffer[0:2], "big")
            end = 8 + int.from_bytes(self._buffer[4:8], "big")
            if len(self._buffer) < end:
                break
            frames.append((kind, bytes(self._buffer[:end])))
            del self._buffer[:end]
        return frames
