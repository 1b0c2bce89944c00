"""A replay hands the SDK the step's return type it would read itself, read once per function.

The SDK reads `inspect.signature(action, eval_str=True).return_annotation` on every `ctx.run` and
`ctx.run_typed` with the default serde; the replayer reads the same annotation once and passes it as the
type hint, so the SDK picks the same serde. These tests hold the replayer to that: the same annotation, the
caller's own options and serde untouched.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from restate.context import RunOptions
from restate.serde import DefaultSerde, JsonSerde

from paidtwice.replay import _intercept


@dataclasses.dataclass
class Forecast:
    city: str


def forecast(city: str) -> Forecast:
    return Forecast(city)


async def answer(question: str) -> dict[str, Any]:
    return {"question": question}


def unannotated(x):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN201
    return x


class Tools:
    def lookup(self) -> list[int]:
        return [1]


ACTIONS: list[Callable[..., Any]] = [
    forecast,
    answer,
    unannotated,
    functools.partial(forecast, "Paris"),
    Tools().lookup,
    lambda: 1,
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: getattr(a, "__name__", type(a).__name__))
def test_the_hint_is_the_annotation_the_sdk_reads(action: Callable[..., Any]) -> None:
    expected = inspect.signature(action, eval_str=True).return_annotation
    assert _intercept._return_hint(action) == expected
    assert _intercept._return_hint(action) == expected  # again, from the cache where it is kept
    (options,) = _intercept._run_typed_with_hint(action, ())
    assert options == RunOptions(type_hint=expected)
    args, kwargs = _intercept._run_with_hint(action, (), {})
    assert args == () and kwargs == {"type_hint": expected}


def test_a_function_is_read_once() -> None:
    _intercept._RETURN_HINTS.pop(forecast, None)
    _intercept._return_hint(forecast)
    assert _intercept._RETURN_HINTS[forecast] is Forecast


def test_the_callers_options_are_kept_and_not_changed() -> None:
    given = RunOptions[Forecast](max_attempts=3)
    (options, extra) = _intercept._run_typed_with_hint(forecast, (given, "Paris"))
    assert options == dataclasses.replace(given, type_hint=Forecast) and extra == "Paris"
    assert given.type_hint is None


def test_an_explicit_serde_or_type_hint_is_left_to_the_sdk() -> None:
    own_serde = RunOptions[Forecast](serde=JsonSerde())
    assert _intercept._run_typed_with_hint(forecast, (own_serde,)) == (own_serde,)
    hinted = RunOptions[Any](type_hint=dict)
    assert _intercept._run_typed_with_hint(forecast, (hinted,)) == (hinted,)
    json_serde = JsonSerde[Forecast]()
    assert _intercept._run_with_hint(forecast, (json_serde,), {}) == ((json_serde,), {})
    assert _intercept._run_with_hint(forecast, (), {"type_hint": dict}) == ((), {"type_hint": dict})
    assert _intercept._run_with_hint(forecast, (DefaultSerde(), None, None, dict), {})[1] == {}


def test_an_annotation_that_does_not_evaluate_is_left_to_the_sdk() -> None:
    def broken() -> NoSuchType:  # type: ignore[name-defined]  # noqa: F821
        return None

    assert _intercept._run_typed_with_hint(broken, ()) == ()
    assert _intercept._run_with_hint(broken, (), {}) == ((), {})
