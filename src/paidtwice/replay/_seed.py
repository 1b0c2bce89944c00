"""The random seed restate-server gives an invocation by default, derived from its id.

`StartMessage.random_seed` seeds `ctx.random()` and `ctx.uuid()` and is not kept in any SQL table. With
default settings the server computes it as `InvocationId::to_random_seed()`: Rust's `DefaultHasher`
(SipHash-1-3 with keys 0, 0) over the id's 24 raw bytes hashed as a slice, that is an 8-byte little-endian
length, then the bytes. The raw bytes are the partition key (u64) and the uuid (u128), both big-endian.
The `inv_1...` string carries them base62-encoded (alphabet 0-9, a-z, A-Z, left-padded with "0" to 11 and
22 characters), each encoded after a byte swap, so each decodes to an integer whose little-endian bytes are
the raw bytes.

A server started with `experimental-enable-unique-random-seeds` draws seeds another way; such a journal's
seed cannot be known here.
"""

from __future__ import annotations

__all__ = ["invocation_id_bytes", "random_seed"]

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DIGIT = {char: value for value, char in enumerate(_ALPHABET)}
_MASK = (1 << 64) - 1
_KEY_CHARS, _UUID_CHARS = 11, 22
_PREFIX = "inv_1"


def _base62(text: str) -> int:
    value = 0
    for char in text:
        value = value * 62 + _DIGIT[char]
    return value


def invocation_id_bytes(invocation_id: str) -> bytes:
    """The 24 raw bytes of an `inv_1...` id (partition key, then uuid); ValueError if it is not one."""
    body = invocation_id.removeprefix(_PREFIX)
    if (
        body == invocation_id
        or len(body) != _KEY_CHARS + _UUID_CHARS
        or any(char not in _DIGIT for char in body)
    ):
        raise ValueError(f"{invocation_id!r} is not a Restate invocation id (inv_1 and 33 base62 characters)")
    key = _base62(body[:_KEY_CHARS])
    uuid = _base62(body[_KEY_CHARS:])
    if key > _MASK or uuid >= 1 << 128:
        raise ValueError(f"{invocation_id!r} is not a Restate invocation id (a part is out of range)")
    return key.to_bytes(8, "little") + uuid.to_bytes(16, "little")


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _siphash13(data: bytes) -> int:
    """SipHash-1-3 with keys (0, 0), as Rust's `DefaultHasher` computes it."""
    v0, v1, v2, v3 = 0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573

    def rounds(v0: int, v1: int, v2: int, v3: int, n: int) -> tuple[int, int, int, int]:
        for _ in range(n):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    whole = len(data) - len(data) % 8
    for at in range(0, whole, 8):
        word = int.from_bytes(data[at : at + 8], "little")
        v3 ^= word
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 1)
        v0 ^= word
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 1)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 3)
    return v0 ^ v1 ^ v2 ^ v3


def random_seed(invocation_id: str) -> int:
    """The seed restate-server (default settings) sends in the StartMessage of `invocation_id`."""
    raw = invocation_id_bytes(invocation_id)
    return _siphash13(len(raw).to_bytes(8, "little") + raw)
