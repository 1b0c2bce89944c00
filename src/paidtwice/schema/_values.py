"""A value valid against a JSON schema, the same for the same seed.

`value_for(schema, seed=...)` walks the schema (drafts 4 to 2020-12, OpenAPI's `nullable`) and builds one
instance: a handler's input when the user gave none, a tool call's arguments, a structured answer. What the
walk supports is what pydantic, dataclasses (through pydantic), msgspec and the model APIs' tool schemas
produce: types (one or several), `enum`, `const`, numeric bounds (inclusive and exclusive, both drafts'
spellings) and `multipleOf`, string lengths, `pattern` (rstr builds a match, retried until Python's `re`
agrees), `format`, objects with `required`, `properties`, `additionalProperties`, `min/maxProperties`,
arrays with `items`/`prefixItems`, `min/maxItems`, `uniqueItems`, `contains`, `$ref` into `$defs` or
`definitions`, `allOf` (merged), `anyOf`/`oneOf` (a branch that matches, for `oneOf` only that one).

Each node's choices come from a random generator seeded with the seed and the node's path, so a value does not
change when an unrelated field is added. A schema no value satisfies (or one this walk cannot satisfy: a
lookahead the generator cannot honour, bounds with no multiple between them) raises `UnsatisfiableSchema`
naming the path, so the caller can ask the user for a value instead.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import string
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rstr.xeger import Xeger

from paidtwice._exceptions import UnsatisfiableSchema

__all__ = ["value_for"]

# Past this depth optional properties are left out and arrays take their fewest items, so a recursive
# schema (a tree of nodes) ends.
_OPTIONAL_DEPTH = 3
_MAX_DEPTH = 40
_PATTERN_TRIES = 40
_WORDS = (
    "amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "harbor", "indigo", "juniper",
    "kestrel", "lumen", "meadow", "nectar", "orchid", "pebble", "quartz", "river", "saffron", "tundra",
)  # fmt: skip


def value_for(
    schema: Any,
    *,
    seed: int | str = 0,
    root: Any = None,
    strings: Sequence[str] = (),
    numbers: Sequence[float] = (),
) -> Any:
    """One value valid against `schema` (a JSON schema as parsed JSON), the same for the same `seed`.

    `root` is the document `$ref`s resolve against (default: `schema` itself). `strings` and `numbers` are
    values to use first, in order, where the schema leaves a string or a number free (no enum, pattern or
    format; within its bounds): a model fills a tool's arguments from the question ("120 EUR in USD" gives
    120, "EUR", "USD"). Raises `UnsatisfiableSchema` naming the path when no value can be made."""
    walk = _Walk(seed=str(seed), root=schema if root is None else root)
    walk.strings, walk.numbers = list(strings), list(numbers)
    return walk.value(schema, "$", 0)


class _Xeger(Xeger):
    """rstr's generator with two changes for a value that must be the same every run and short: a negated
    class (`[^a]`) picks from a sorted alphabet, not a set's order, which string hashing changes per
    process; `*` and `+` repeat a few times, not up to 100."""

    def _handle_in(self, value: Any) -> Any:
        candidates = [c for state in value for c in self._handle_state(state)]
        if candidates and candidates[0] is False:
            candidates = sorted(set(string.printable).difference(candidates[1:]))
        return self._random.choice(candidates)

    def _handle_repeat(self, start_range: int, end_range: int, value: Any) -> str:
        times = self._random.randint(start_range, max(start_range, min(end_range, start_range + 6)))
        return "".join("".join(self._handle_state(s) for s in value) for _ in range(times))


class _Walk:
    def __init__(self, *, seed: str, root: Any) -> None:
        self._seed = seed
        self._root = root
        self.strings: list[str] = []
        """Values for free strings, taken in order (see `value_for`)."""
        self.numbers: list[float] = []
        """Values for free numbers, taken in order when they fit."""

    def _hinted_number(self, low: float, high: float, *, integer: bool, exclusive: tuple[bool, bool]) -> Any:
        """The next given number, if it fits the bounds (and is whole, for an integer); else None."""
        if not self.numbers:
            return None
        given = self.numbers[0]
        fits = low <= given <= high and not (exclusive[0] and given <= low or exclusive[1] and given >= high)
        if not fits or (integer and not float(given).is_integer()):
            return None
        self.numbers.pop(0)
        return int(given) if float(given).is_integer() else given

    def _rng(self, path: str, salt: str = "") -> random.Random:
        digest = hashlib.sha256(f"{self._seed}\0{path}\0{salt}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    # -- dispatch ------------------------------------------------------------------------------------------

    def value(self, schema: Any, path: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise UnsatisfiableSchema(
                path, "the schema nests deeper than 40 levels (a $ref cycle with no end)"
            )
        if schema is True or schema == {}:
            return self._word(self._rng(path))
        if schema is False:
            raise UnsatisfiableSchema(path, "the schema is `false`: no value is valid")
        if not isinstance(schema, Mapping):
            raise UnsatisfiableSchema(path, f"not a schema: {json.dumps(schema)[:60]}")
        schema = self._resolved(schema, path)
        if "allOf" in schema:
            return self.value(self._merged(schema, path), path, depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._from_enum(schema, path)
        if "anyOf" in schema or "oneOf" in schema:
            return self._from_branches(schema, path, depth)
        kind = self._kind(schema, path)
        maker: Callable[[Mapping[str, Any], str, int], Any] = getattr(self, f"_{kind}")
        made = maker(schema, path, depth)
        if "not" in schema and _matches(schema["not"], made, self):
            raise UnsatisfiableSchema(path, "the value made also matches the schema's `not`; give one")
        return made

    def _resolved(self, schema: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        seen: set[str] = set()
        while "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#") or ref in seen:
                raise UnsatisfiableSchema(
                    path, f"cannot follow $ref {ref!r} (only references into this document)"
                )
            seen.add(ref)
            target: Any = self._root
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    raise UnsatisfiableSchema(path, f"$ref {ref!r} points at nothing in the schema")
            if target is True:
                target = {}
            if not isinstance(target, Mapping):
                raise UnsatisfiableSchema(
                    path, f"$ref {ref!r} points at {json.dumps(target)[:40]}, not a schema"
                )
            # Keywords beside a $ref (2019-09 on) apply too: they are merged over the target.
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest} if rest else target
        return schema

    def _kind(self, schema: Mapping[str, Any], path: str) -> str:
        declared = schema.get("type")
        types = [declared] if isinstance(declared, str) else list(declared or [])
        if schema.get("nullable") is True and types:
            types.append("null")
        if not types:
            for kind, keys in _IMPLIED.items():
                if any(k in schema for k in keys):
                    return kind
            return "string"
        # A real value says more than null; null only when it is all the schema allows.
        for kind in ("object", "array", "string", "integer", "number", "boolean", "null"):
            if kind in types:
                return kind
        raise UnsatisfiableSchema(path, f"unknown type {declared!r}")

    # -- combinators ---------------------------------------------------------------------------------------

    def _from_enum(self, schema: Mapping[str, Any], path: str) -> Any:
        rest = {k: v for k, v in schema.items() if k not in ("enum", "title", "description")}
        options = [v for v in schema["enum"] if _matches(rest, v, self)] if rest else list(schema["enum"])
        if not options:
            raise UnsatisfiableSchema(path, "no value of the enum fits the schema's other keywords")
        return self._rng(path).choice(options)

    def _from_branches(self, schema: Mapping[str, Any], path: str, depth: int) -> Any:
        key = "oneOf" if "oneOf" in schema else "anyOf"
        branches: Sequence[Any] = schema[key]
        base = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
        # A branch that is only null comes last: a real value exercises more of the handler.
        order = sorted(range(len(branches)), key=lambda i: _is_null(branches[i]))
        reasons = []
        for i in order:
            branch = {"allOf": [base, branches[i]]} if _has_constraints(base) else branches[i]
            try:
                made = self.value(branch, f"{path}", depth + 1)
            except UnsatisfiableSchema as err:
                reasons.append(err.reason)
                continue
            if key == "oneOf" and any(_matches(b, made, self) for j, b in enumerate(branches) if j != i):
                reasons.append(f"branch {i}'s value also matches another branch")
                continue
            return made
        raise UnsatisfiableSchema(path, f"no branch of {key} can be satisfied ({'; '.join(reasons)[:200]})")

    def _merged(self, schema: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if part is True:
                continue
            if part is False:
                raise UnsatisfiableSchema(path, "allOf holds `false`")
            part = self._resolved(part, path)
            if "allOf" in part:
                part = self._merged(part, path)
            for k, v in part.items():
                if k not in merged:
                    merged[k] = v
                elif k == "properties":
                    merged[k] = _merge_properties(merged[k], v)
                elif k == "required":
                    merged[k] = list(dict.fromkeys([*merged[k], *v]))
                elif k in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
                    merged[k] = max(merged[k], v) if not isinstance(v, bool) else merged[k] or v
                elif k in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
                    merged[k] = min(merged[k], v) if not isinstance(v, bool) else merged[k] or v
                elif k == "type":
                    merged[k] = _type_intersection(merged[k], v, path)
                elif k == "enum":
                    merged[k] = [e for e in merged[k] if e in v]
                elif k in ("anyOf", "oneOf"):
                    merged.setdefault("allOf", []).append({k: v})
                else:
                    merged[k] = v
        if "allOf" in merged:
            return self._merged(merged, path)
        return merged

    # -- the kinds -----------------------------------------------------------------------------------------

    def _null(self, schema: Mapping[str, Any], path: str, depth: int) -> None:
        return None

    def _boolean(self, schema: Mapping[str, Any], path: str, depth: int) -> bool:
        return self._rng(path).random() < 0.5

    def _integer(self, schema: Mapping[str, Any], path: str, depth: int) -> int:
        lo, hi = _bounds(schema)
        low = math.ceil(lo) if lo is not None else None
        high = math.floor(hi) if hi is not None else None
        low, high = _window(low, high, span=100)
        step = schema.get("multipleOf")
        rng = self._rng(path)
        if step is None:
            if low > high:
                raise UnsatisfiableSchema(path, f"no integer between {lo} and {hi}")
            given = self._hinted_number(low, high, integer=True, exclusive=(False, False))
            return int(given) if given is not None else rng.randint(int(low), int(high))
        first, last = math.ceil(low / step), math.floor(high / step)
        for _ in range(2):
            if first <= last:
                k = rng.randint(int(first), int(min(last, first + 20)))
                made = k * step
                if float(made).is_integer():
                    return int(made)
        raise UnsatisfiableSchema(path, f"no integer multiple of {step} between {lo} and {hi}")

    def _number(self, schema: Mapping[str, Any], path: str, depth: int) -> float | int:
        lo, hi = _bounds(schema)
        exclusive_low = lo is not None and _is_exclusive(schema, "min")
        exclusive_high = hi is not None and _is_exclusive(schema, "max")
        low, high = _window(lo, hi, span=100.0)
        rng = self._rng(path)
        step = schema.get("multipleOf")
        if step is not None:
            first, last = math.ceil(low / step), math.floor(high / step)
            candidates = [k for k in range(int(first), int(min(last, first + 40)) + 1)]
            rng.shuffle(candidates)
            for k in candidates:
                made = float(k * step) if isinstance(step, float) else k * step
                if (exclusive_low and made <= low) or (exclusive_high and made >= high):
                    continue
                if _is_multiple(made, step):
                    return made
            raise UnsatisfiableSchema(path, f"no multiple of {step} between {lo} and {hi}")
        if low > high or (low == high and (exclusive_low or exclusive_high)):
            raise UnsatisfiableSchema(path, f"no number between {lo} and {hi}")
        given = self._hinted_number(low, high, integer=False, exclusive=(exclusive_low, exclusive_high))
        if given is not None:
            return float(given) if isinstance(given, float) else given
        # Two decimals, strictly inside the bounds when they are exclusive: a number that is plainly not an
        # integer, so a oneOf of integer and number tells the two apart.
        for _ in range(20):
            made = round(rng.uniform(low, high), 2)
            if (
                (exclusive_low and made <= low)
                or (exclusive_high and made >= high)
                or not low <= made <= high
            ):
                continue
            return made
        middle: float = (low + high) / 2
        return middle if not (exclusive_low or exclusive_high) or low < middle < high else low

    def _string(self, schema: Mapping[str, Any], path: str, depth: int) -> str:
        shortest = int(schema.get("minLength", 0))
        longest = int(schema.get("maxLength", max(shortest, 24) + 40))
        if shortest > longest:
            raise UnsatisfiableSchema(path, f"minLength {shortest} is above maxLength {longest}")
        rng = self._rng(path)
        pattern = schema.get("pattern")
        fmt = schema.get("format")
        if pattern is not None:
            return self._from_pattern(str(pattern), shortest, longest, rng, path)
        if isinstance(fmt, str) and fmt in _FORMATS:
            made = _FORMATS[fmt](rng)
            if not shortest <= len(made) <= longest:
                raise UnsatisfiableSchema(path, f"a {fmt} does not fit in {shortest} to {longest} characters")
            return made
        if self.strings and shortest <= len(self.strings[0]) <= longest:
            return self.strings.pop(0)
        made = self._word(rng)
        while len(made) < shortest:
            made += "-" + self._word(rng)
        return made[: max(longest, 0)] if len(made) > longest else made

    def _from_pattern(self, pattern: str, shortest: int, longest: int, rng: random.Random, path: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise UnsatisfiableSchema(
                path, f"pattern {pattern!r} is not a regex Python reads ({err})"
            ) from None
        xeger = _Xeger(rng)
        for _ in range(_PATTERN_TRIES):
            try:
                made = xeger.xeger(pattern)
            except (KeyError, IndexError, ValueError):
                break
            if shortest <= len(made) <= longest and compiled.search(made):
                return made
        raise UnsatisfiableSchema(
            path, f"no string of {shortest} to {longest} characters made matches pattern {pattern!r}"
        )

    def _object(self, schema: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        rng = self._rng(path)
        names = list(dict.fromkeys(required))
        if depth < _OPTIONAL_DEPTH:
            names += [n for n in properties if n not in names]
        for name, needs in (schema.get("dependentRequired") or {}).items():
            if name in names:
                names += [n for n in needs if n not in names]
        most = schema.get("maxProperties")
        if most is not None and len(names) > most:
            names = names[: max(int(most), len(required))]
        made: dict[str, Any] = {}
        extra = schema.get("additionalProperties", True)
        for name in names:
            sub = properties.get(name)
            if sub is None:
                sub = extra if isinstance(extra, Mapping) else {} if extra is not False else None
            if sub is None:
                raise UnsatisfiableSchema(
                    f"{path}.{name}", "required but not allowed (additionalProperties false)"
                )
            if isinstance(sub, Mapping) and "default" in sub:
                # The model's own default says more than a made-up value (msgspec's schema of a datetime
                # says only "string"); zod's schema of a field with a default also lists it as required.
                if _matches(sub, sub["default"], self):
                    made[name] = sub["default"]
                    continue
            made[name] = self.value(sub, f"{path}.{name}", depth + 1)
        fewest = int(schema.get("minProperties", 0))
        while len(made) < fewest:
            if extra is False:
                raise UnsatisfiableSchema(
                    path, f"minProperties {fewest} but only {len(made)} properties allowed"
                )
            name = f"{self._word(rng)}_{len(made)}"
            sub = extra if isinstance(extra, Mapping) else {}
            made[name] = self.value(sub, f"{path}.{name}", depth + 1)
        if most is not None and len(made) > most:
            raise UnsatisfiableSchema(path, f"{len(required)} required properties but maxProperties {most}")
        return made

    def _array(self, schema: Mapping[str, Any], path: str, depth: int) -> list[Any]:
        fewest = int(schema.get("minItems", 0))
        most = schema.get("maxItems")
        prefix: Sequence[Any] = schema.get("prefixItems") or []
        items: Any = schema.get("items", {})
        if isinstance(items, list):  # draft 4 to 2019-09 tuples
            prefix, items = items, schema.get("additionalItems", {})
        if most is not None and fewest > most:
            raise UnsatisfiableSchema(path, f"minItems {fewest} is above maxItems {most}")
        wanted = fewest if depth >= _OPTIONAL_DEPTH else max(fewest, min(len(prefix) or 1, 2))
        if most is not None:
            wanted = min(wanted, int(most))
        if "contains" in schema:
            wanted = max(wanted, 1)
        unique = bool(schema.get("uniqueItems"))
        made: list[Any] = []
        for i in range(wanted):
            sub = prefix[i] if i < len(prefix) else items
            if i == 0 and "contains" in schema:
                sub = {"allOf": [sub, schema["contains"]]} if sub not in ({}, True) else schema["contains"]
            if sub is False:
                raise UnsatisfiableSchema(f"{path}[{i}]", f"needs {wanted} items but allows {i}")
            made.append(self._item(sub, f"{path}[{i}]", depth, made if unique else None))
        return made

    def _item(self, schema: Any, path: str, depth: int, taken: list[Any] | None) -> Any:
        made = self.value(schema, path, depth + 1)
        salt = 0
        while taken is not None and any(_same(made, t) for t in taken):
            salt += 1
            if salt > 30:
                raise UnsatisfiableSchema(path, "uniqueItems: no further distinct value")
            made = _Walk(seed=f"{self._seed}~{salt}", root=self._root).value(schema, path, depth + 1)
        return made

    def _word(self, rng: random.Random) -> str:
        return rng.choice(_WORDS)


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None]:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    for key, is_low in (("exclusiveMinimum", True), ("exclusiveMaximum", False)):
        value = schema.get(key)
        if isinstance(value, bool) or value is None:
            continue  # draft 4's boolean sits beside minimum/maximum, which hold the number
        if is_low:
            lo = value if lo is None or value >= lo else lo
        else:
            hi = value if hi is None or value <= hi else hi
    integer = schema.get("type") == "integer"
    if integer:
        if _is_exclusive(schema, "min") and lo is not None and float(lo).is_integer():
            lo += 1
        if _is_exclusive(schema, "max") and hi is not None and float(hi).is_integer():
            hi -= 1
    return lo, hi


def _is_exclusive(schema: Mapping[str, Any], side: str) -> bool:
    key, plain = ("exclusiveMinimum", "minimum") if side == "min" else ("exclusiveMaximum", "maximum")
    value = schema.get(key)
    if value is True:
        return True
    if value is None or isinstance(value, bool):
        return False
    other = schema.get(plain)
    return other is None or (value >= other if side == "min" else value <= other)


def _window(lo: Any, hi: Any, *, span: Any) -> tuple[Any, Any]:
    """The range to pick from: the bounds, or near them when one is open, or 1 to `span` when both are."""
    if lo is None and hi is None:
        return span // span, span
    if lo is None:
        return hi - span, hi
    if hi is None:
        return lo, lo + span
    return lo, hi


def _is_multiple(value: float, step: float) -> bool:
    # jsonschema's own test for a float multipleOf: the quotient is a whole number.
    quotient = value / step
    return math.isfinite(quotient) and int(quotient) == quotient


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "null"


def _has_constraints(schema: Mapping[str, Any]) -> bool:
    return any(k not in ("title", "description", "default", "examples", "$schema", "$id") for k in schema)


def _merge_properties(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(a)
    for name, sub in b.items():
        merged[name] = {"allOf": [merged[name], sub]} if name in merged else sub
    return merged


def _type_intersection(a: Any, b: Any, path: str) -> Any:
    left = {a} if isinstance(a, str) else set(a)
    right = {b} if isinstance(b, str) else set(b)
    if "number" in left and "integer" in right:
        left.add("integer")
    if "number" in right and "integer" in left:
        right.add("integer")
    both = sorted(left & right)
    if not both:
        raise UnsatisfiableSchema(path, f"allOf asks for type {a} and type {b}")
    return both[0] if len(both) == 1 else both


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _matches(schema: Any, value: Any, walk: _Walk) -> bool:
    """Whether `value` fits the keywords of `schema` that tell branches apart (type, const, enum, required,
    properties' consts and types): enough to keep a `oneOf`'s value to one branch and an enum's values to
    the schema's type. Not a validator; the tests validate with jsonschema."""
    if schema is True or schema == {}:
        return True
    if schema is False or not isinstance(schema, Mapping):
        return False
    try:
        schema = walk._resolved(schema, "$")
    except UnsatisfiableSchema:
        return False
    if "const" in schema and not _same(schema["const"], value):
        return False
    if "enum" in schema and not any(_same(e, value) for e in schema["enum"]):
        return False
    declared = schema.get("type")
    if declared is not None:
        types = [declared] if isinstance(declared, str) else list(declared)
        if schema.get("nullable") is True:
            types.append("null")
        if not any(_TYPE_TESTS.get(t, lambda v: False)(value) for t in types):
            return False
    for key in ("allOf",):
        if key in schema and not all(_matches(s, value, walk) for s in schema[key]):
            return False
    for key in ("anyOf", "oneOf"):
        if key in schema and not any(_matches(s, value, walk) for s in schema[key]):
            return False
    if isinstance(value, dict):
        if any(r not in value for r in schema.get("required") or []):
            return False
        for name, sub in (schema.get("properties") or {}).items():
            if name in value and not _matches(sub, value[name], walk):
                return False
        if schema.get("additionalProperties") is False:
            if any(k not in (schema.get("properties") or {}) for k in value):
                return False
    if isinstance(value, str):
        if "pattern" in schema:
            try:
                if not re.search(schema["pattern"], value):
                    return False
            except re.error:
                return False
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            return False
    if _TYPE_TESTS["number"](value):
        lo, hi = _bounds(schema)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return False
    return True


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (
        isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}

_IMPLIED: dict[str, tuple[str, ...]] = {
    "object": ("properties", "required", "additionalProperties", "minProperties", "maxProperties"),
    "array": ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"),
    "string": ("pattern", "minLength", "maxLength", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


_FORMATS: dict[str, Callable[[random.Random], str]] = {
    "date-time": lambda r: f"2026-0{r.randint(1, 9)}-1{r.randint(0, 9)}T0{r.randint(0, 9)}:30:00Z",
    "date": lambda r: f"2026-0{r.randint(1, 9)}-1{r.randint(0, 9)}",
    "time": lambda r: f"0{r.randint(0, 9)}:30:00Z",
    "duration": lambda r: f"PT{r.randint(1, 59)}M",
    "email": lambda r: f"{r.choice(_WORDS)}@example.com",
    "idn-email": lambda r: f"{r.choice(_WORDS)}@example.com",
    "hostname": lambda r: f"{r.choice(_WORDS)}.example.com",
    "idn-hostname": lambda r: f"{r.choice(_WORDS)}.example.com",
    "ipv4": lambda r: f"192.0.2.{r.randint(1, 254)}",
    "ipv6": lambda r: f"2001:db8::{r.randint(1, 9999)}",
    "uri": lambda r: f"https://example.com/{r.choice(_WORDS)}",
    "iri": lambda r: f"https://example.com/{r.choice(_WORDS)}",
    "uri-reference": lambda r: f"/{r.choice(_WORDS)}",
    "iri-reference": lambda r: f"/{r.choice(_WORDS)}",
    "uri-template": lambda r: f"https://example.com/{{{r.choice(_WORDS)}}}",
    "url": lambda r: f"https://example.com/{r.choice(_WORDS)}",
    "uuid": _uuid,
    "json-pointer": lambda r: f"/{r.choice(_WORDS)}",
    "relative-json-pointer": lambda r: "0",
    "regex": lambda r: f"^{r.choice(_WORDS)}$",
    "byte": lambda r: "aGVsbG8=",
    "binary": lambda r: r.choice(_WORDS),
    "password": lambda r: r.choice(_WORDS) + "-1",
}
