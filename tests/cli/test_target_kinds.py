"""A kind of target is registered whole: its class (paidtwice.targets), its option (cli/_target.py) and its
branch in `TargetSpec`, as the recipe in paidtwice.targets says; one registered half way fails here."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

import paidtwice.targets as targets
from paidtwice._exceptions import PaidtwiceError
from paidtwice.cli._target import target_options

SAMPLES = {"app": "agent:app", "command": "node agent.ts"}
"""A value for each option that takes free text (a Choice takes its first choice)."""


def _kinds() -> set[type]:
    """Every kind of target the package exports: a class with the protocol's methods, not the protocol."""
    found = set()
    for name in targets.__all__:
        obj = getattr(targets, name)
        if isinstance(obj, type) and not getattr(obj, "_is_protocol", False):
            if all(callable(getattr(obj, method, None)) for method in ("launch", "offline", "recorded_as")):
                found.add(obj)
    return found


def _reached() -> dict[str, type]:
    """The kind each option of `target_options` names on its own, as `TargetSpec.code()` builds it (which
    imports and starts nothing)."""
    built: list[targets.TargetSpec] = []

    @click.command()
    @target_options(modes="one")
    def probe(target: targets.TargetSpec) -> None:
        built.append(target)

    reached = {}
    for param in probe.params:
        if not isinstance(param, click.Option) or param.name is None:
            continue
        value = (
            param.type.choices[0] if isinstance(param.type, click.Choice) else SAMPLES.get(param.name, "x")
        )
        built.clear()
        done = CliRunner().invoke(probe, [param.opts[0], str(value)], catch_exceptions=False)
        if done.exit_code != 0:
            continue  # refused alone (--cwd without --cmd, a directory that is not there, ...)
        try:
            reached[param.opts[0]] = type(built[0].code())
        except PaidtwiceError:
            continue  # names no kind alone (--port-env, --key, ...)
    return reached


def test_every_kind_of_target_has_its_option_and_its_branch() -> None:
    reached = _reached()
    # The probe reaches the kinds there are (a new kind's option joins them without an edit here).
    known = {"--app": targets.AppTarget, "--cmd": targets.CommandTarget, "--mode": targets.DeckTarget}
    assert reached.items() >= known.items()
    # A new class with no option (or an option TargetSpec builds no kind of its own for) fails here.
    assert set(reached.values()) == _kinds(), "a kind without its option in cli/_target.py"
    assert len(set(reached.values())) == len(reached), "two options build the same kind"


@pytest.mark.parametrize("kind", sorted(_kinds(), key=lambda k: k.__name__))
def test_every_kind_is_in_the_package_s_table(kind: type) -> None:
    assert kind.__name__ in (targets.__doc__ or "").split("Adding a kind")[0]
