"""`[tool.paidtwice]`: a project's paidtwice settings, in pyproject.toml or a paidtwice.toml beside it.

Read with `tomllib` and validated strictly, as ruff and mypy read theirs: an unknown key or a value of the
wrong type is one `ConfigError` naming the file, the key and what was expected. Paths are relative to the
file. Every key has a default where one makes sense; see docs/reference/configuration.md.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from paidtwice._exceptions import UsageError
from paidtwice.stub import AUTO, DEFAULT_SEED, VARIATIONS
from paidtwice.sweep import DEFAULT_RETRIES

__all__ = [
    "Budget",
    "Config",
    "ConfigError",
    "ReplayCheckConfig",
    "SweepConfig",
    "find_config",
    "load_config",
]

_T = TypeVar("_T")


class ConfigError(UsageError):
    """The configuration file is wrong: its message names the file, the key and what was expected."""


@dataclass(frozen=True)
class SweepConfig:
    """One `[[tool.paidtwice.sweep]]`: an app whose handlers are swept."""

    app: str
    """MODULE:APP (that app object) or MODULE (every service it defines)."""
    app_dir: Path
    """The directory MODULE is imported from (absolute)."""
    service: str | None
    """The service to sweep; None: every service of the app."""
    handler: str | None
    """The handler to sweep (with `service`); None: every handler of the service."""
    input: Any
    """The handlers' input (parsed from the key's JSON); None when absent."""
    script: Path | None
    """The script file answering the model calls (absolute); None: answers made from each request."""
    seed: int
    """What made answers and made inputs are derived from."""
    variations: tuple[str, ...]
    """The script's variations swept."""
    every_tool: bool
    """With auto answers: each tool offered that no clean run called gets runs of its own, swept too."""
    key: str | None
    """The key a Virtual Object's or a Workflow's handler is called with; None: paidtwice's."""


@dataclass(frozen=True)
class ReplayCheckConfig:
    """`[tool.paidtwice.replay-check]`: captured journals checked against the code."""

    app: str
    """MODULE:APP, the code the journals are replayed against."""
    app_dir: Path
    """The directory MODULE is imported from (absolute)."""
    journals: Path
    """A journal file or a directory of them (absolute)."""
    script: str
    """How the stub answers calls outside the journal: a stub script's name or a script file (absolute)."""
    variation: str
    """With a script file: its variation."""


@dataclass(frozen=True)
class Budget:
    """`[tool.paidtwice.budget]`: what a sweep may measure before `paidtwice check` fails."""

    repaid_model_calls: int | None
    """Model calls a crash point may pay again beyond those cut off in flight; None: not checked."""
    expected_extra_usd_per_1000: float | None
    """Expected extra dollars per 1,000 invocations at `crash_rate`, per handler and variation."""
    crash_rate: float
    """Crashes per 1,000 invocations the expected cost is taken at."""


@dataclass(frozen=True)
class Config:
    """A project's whole configuration."""

    path: Path
    """The file it was read from."""
    app_dir: Path
    """The default directory apps are imported from (absolute)."""
    lint: tuple[Path, ...]
    """The files and directories `paidtwice lint` reads (absolute)."""
    sweeps: tuple[SweepConfig, ...]
    """Every sweep, in the file's order."""
    replay_check: ReplayCheckConfig | None
    """The replay-check of captured journals; None when not configured."""
    budget: Budget
    """The budgets."""
    results_dir: Path
    """Where `paidtwice check` writes the sweeps' records (absolute)."""
    price_model: str | None
    """The model whose prices the dollars are at; None: paidtwice's default."""
    allow_undecided: bool = False
    """A crash point left undecided (its kill not placed after its retries, or its replay unable to finish)
    does not fail the check."""
    retries: int = DEFAULT_RETRIES
    """Times a point whose kill missed its moment is run again before it is called not placed."""
    table: str = "tool.paidtwice"
    """The table the settings were read from ("tool.paidtwice", or "paidtwice" for a top-level
    paidtwice.toml), for messages that name a key."""


CONFIG_FILE = "paidtwice.toml"


def find_config(start: Path) -> Path | None:
    """The nearest paidtwice.toml, or pyproject.toml with a [tool.paidtwice] table, from `start` up."""
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text())
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                return pyproject  # load_config says what is wrong with it
            if "paidtwice" in data.get("tool", {}):
                return pyproject
    return None


class _Table:
    """A TOML table being read: each key taken once, typed; the keys left over are unknown."""

    def __init__(self, file: Path, name: str, data: Any) -> None:
        self.file, self.name = file, name
        if not isinstance(data, dict):
            self.fail(name, "a table", data)
        self.data: dict[str, Any] = data
        self.known: list[str] = []

    def fail(self, key: str, expected: str, got: Any) -> NoReturn:
        raise ConfigError(f"{self.file.name}: {key}: expected {expected}, got {_shown(got)}")

    def key(self, key: str) -> str:
        return f"{self.name}.{key}"

    def take(self, key: str, check: Callable[[Any], bool], expected: str, default: _T) -> Any:
        self.known.append(key)
        if key not in self.data:
            return default
        value = self.data[key]
        if not check(value):
            self.fail(self.key(key), expected, value)
        return value

    def string(self, key: str, default: str | None = None) -> Any:
        return self.take(key, lambda v: isinstance(v, str) and v != "", "a non-empty string", default)

    def strings(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self.take(
            key,
            lambda v: isinstance(v, list) and all(isinstance(i, str) and i for i in v),
            "a list of strings",
            default,
        )
        return tuple(value)

    def number(self, key: str, *, integer: bool = False) -> Any:
        def ok(v: Any) -> bool:
            if isinstance(v, bool) or not isinstance(v, int | float):
                return False
            return (isinstance(v, int) or not integer) and v >= 0

        return self.take(key, ok, "a non-negative integer" if integer else "a non-negative number", None)

    def path(self, key: str, default: Path | None = None) -> Path | None:
        value = self.string(key)
        return (self.file.parent / value).resolve() if value is not None else default

    def done(self) -> None:
        unknown = [k for k in self.data if k not in self.known]
        if unknown:
            raise ConfigError(
                f"{self.file.name}: {self.key(unknown[0])}: unknown key (known: {', '.join(self.known)})"
            )


def _shown(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list"}.get(
        type(value), "a table" if isinstance(value, dict) else type(value).__name__
    )
    text = json.dumps(value, default=str)
    return f"{kind} ({text if len(text) <= 40 else text[:37] + '...'})"


def load_config(path: Path) -> Config:
    """Read and validate one configuration file; `ConfigError` (one line) when it is wrong."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path.name}: not valid TOML: {err}") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read it: {err.strerror or err}") from None
    if path.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "paidtwice" not in tool:
            raise ConfigError(f"{path.name}: no [tool.paidtwice] table")
        data, name = tool["paidtwice"], "tool.paidtwice"
    else:
        name = "paidtwice"
    top = _Table(path, name, data)
    app_dir = top.path("app-dir", path.parent.resolve())
    assert app_dir is not None
    lint = tuple((path.parent / p).resolve() for p in top.strings("lint", (str(app_dir),)))
    results = top.path("results-dir", (path.parent / "paidtwice-results").resolve())
    assert results is not None
    price_model = top.string("price-model")
    allow_undecided = top.take("allow-undecided", lambda v: isinstance(v, bool), "true or false", False)
    retries = top.number("retries", integer=True)
    sweeps = top.take("sweep", lambda v: isinstance(v, list), "an array of tables ([[...sweep]])", [])
    replay = top.take("replay-check", lambda v: isinstance(v, dict), "a table", None)
    budget = top.take("budget", lambda v: isinstance(v, dict), "a table", {})
    top.done()
    return Config(
        path=path,
        app_dir=app_dir,
        lint=lint,
        sweeps=tuple(_sweep(path, f"{name}.sweep[{i}]", s, app_dir) for i, s in enumerate(sweeps)),
        replay_check=None if replay is None else _replay(path, f"{name}.replay-check", replay, app_dir),
        budget=_budget(path, f"{name}.budget", budget),
        results_dir=results,
        price_model=price_model,
        allow_undecided=allow_undecided,
        retries=DEFAULT_RETRIES if retries is None else retries,
        table=name,
    )


def _json(table: _Table, key: str) -> Any:
    text = table.string(key)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as err:
        raise ConfigError(
            f"{table.file.name}: {table.key(key)}: expected JSON, got {text!r} ({err})"
        ) from None


def _sweep(path: Path, name: str, data: Any, app_dir: Path) -> SweepConfig:
    table = _Table(path, name, data)
    app = table.string("app")
    if app is None:
        raise ConfigError(f"{path.name}: {table.key('app')}: expected MODULE:APP, got nothing")
    service, handler = table.string("service"), table.string("handler")
    if handler is not None and service is None:
        raise ConfigError(
            f"{path.name}: {table.key('handler')}: expected a service beside it (service = ...)"
        )
    variations = table.strings("variations", VARIATIONS)
    bad = [v for v in variations if v not in VARIATIONS]
    if bad:
        table.fail(table.key("variations"), f"variations among {', '.join(VARIATIONS)}", bad[0])
    script = table.string("script")
    every_tool = table.take("every-tool", lambda v: isinstance(v, bool), "true or false", False)
    if every_tool and script not in (None, AUTO):
        table.fail(
            table.key("every-tool"), "false beside a script file (it makes auto answers call each tool)", True
        )
    config = SweepConfig(
        app=app,
        app_dir=table.path("app-dir", app_dir) or app_dir,
        service=service,
        handler=handler,
        input=_json(table, "input"),
        script=None if script in (None, AUTO) else (path.parent / script).resolve(),
        seed=table.take(
            "seed", lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer", DEFAULT_SEED
        ),
        variations=variations,
        every_tool=every_tool,
        key=table.string("key"),
    )
    table.done()
    return config


def _replay(path: Path, name: str, data: Any, app_dir: Path) -> ReplayCheckConfig:
    table = _Table(path, name, data)
    app = table.string("app")
    journals = table.path("journals")
    if app is None or journals is None:
        missing = "app" if app is None else "journals"
        raise ConfigError(f"{path.name}: {table.key(missing)}: expected a value, got nothing")
    script = table.string("script", "steady")
    if script.endswith(".toml"):
        script = str((path.parent / script).resolve())
    variation = table.string("variation", "steady")
    if variation not in VARIATIONS:
        table.fail(table.key("variation"), f"one of {', '.join(VARIATIONS)}", variation)
    config = ReplayCheckConfig(
        app=app,
        app_dir=table.path("app-dir", app_dir) or app_dir,
        journals=journals,
        script=script,
        variation=variation,
    )
    table.done()
    return config


def _budget(path: Path, name: str, data: Any) -> Budget:
    table = _Table(path, name, data)
    repaid = table.number("repaid-model-calls", integer=True)
    usd = table.number("expected-extra-usd-per-1000")
    rate = table.number("crash-rate")
    table.done()
    return Budget(
        repaid_model_calls=repaid,
        expected_extra_usd_per_1000=None if usd is None else float(usd),
        crash_rate=1.0 if rate is None else float(rate),
    )
