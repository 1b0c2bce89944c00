"""A journal saved from a sweep's run, with its calls named as the user's code names them.

In a sweep, paidtwice's host serves every service of the app under the run's own name and follows each call
into the run's invocation tree with a header (`paidtwice.agent._tree`): the Call and OneWayCall commands the
server journaled name `Service_TAG` and carry `x-paidtwice-root`. Replayed offline against the user's code,
which calls `Service` with no such header, they would diverge at the first call. So a saved journal's call
commands get the code's service name back and lose the header (their protobuf rewritten field by field,
every other byte as it was).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from paidtwice.agent import ROOT_HEADER

if TYPE_CHECKING:  # _journal saves through this module
    from paidtwice.replay._journal import JournalFile

__all__ = ["as_code_names"]

_CALLS = ("Command: Call", "Command: OneWayCall")
_SERVICE_NAME = 1
"""The field number of a call command's service name."""


def as_code_names(journal: JournalFile, served_as: str, code_name: str) -> JournalFile:
    """`journal` (of a run whose swept service `code_name` was served as `served_as`) with each call to a
    service served under the run's tag named as the code does, and the tree's header dropped."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in code_name)
    suffix = served_as[len(clean) :] if served_as.startswith(clean) and served_as != clean else ""
    if not suffix:
        return journal
    entries = tuple(
        dataclasses.replace(e, raw=_untagged(e.raw, suffix)) if e.type in _CALLS else e
        for e in journal.entries
    )
    return dataclasses.replace(journal, entries=entries)


def _untagged(body: bytes, suffix: str) -> bytes:
    out = bytearray()
    for number, wire, field, value in _fields(body):
        if wire == 2 and number == _SERVICE_NAME and value.endswith(suffix.encode()):
            out += _length_field(number, value[: -len(suffix)])
        elif wire == 2 and _is_root_header(value):
            continue
        else:
            out += field
    return bytes(out)


def _is_root_header(value: bytes) -> bool:
    try:
        inner = {n: v for n, w, _, v in _fields(value) if w == 2}
    except (ValueError, IndexError):
        return False
    return inner.get(1) == ROOT_HEADER.encode()


def _fields(data: bytes) -> list[tuple[int, int, bytes, bytes]]:
    """(number, wire type, the field's bytes, a length-delimited field's value) of each field, in order."""
    found = []
    at = 0
    while at < len(data):
        start = at
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        value = b""
        if wire == 0:
            _, at = _read_varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 2:
            length, at = _read_varint(data, at)
            value = data[at : at + length]
            at += length
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if at > len(data):
            raise ValueError("truncated protobuf field")
        found.append((number, wire, data[start:at], value))
    return found


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _length_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)
