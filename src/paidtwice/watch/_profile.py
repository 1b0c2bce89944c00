"""What each attempt of a handler pays outside its journal, read from a profile made before the deploy.

A journal replays its steps for free; what an attempt pays again is the model calls its code makes outside
the journal. Restate's tables do not show those, so `watch --profile FILE` reads them from paidtwice's own
measurements of the same handler:

- a sweep's records (`sweep --json`): the attempts that ended in a journal mismatch (and those that ended in
  another error) on its crash points, each with the model calls the stub answered during it, their tokens;
- a soak's record (`soak --json`): its clean invocation's model calls, at most that many per attempt, with
  the soak's tokens per call;
- lint's findings (`lint --format json`): the call sites outside ctx.run; no tokens, so nothing is priced.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from paidtwice._exceptions import UsageError
from paidtwice.results import AttemptCost, AttemptLine, PointResult, Reason, SoakRecord
from paidtwice.stub import NO_TOKENS, TokenUsage

__all__ = ["Profile", "load_profile", "looks_like_model_step"]

_MODEL_WORDS = re.compile(r"model|llm|chat|complet|gpt|claude|gemini|openai|anthropic|think|generat", re.I)
_NAIVE_CODES = frozenset({"PT001", "PT002", "PT003"})


def looks_like_model_step(name: str) -> bool:
    """A run step named as model calls usually are ("model", "llm", "chat", "think", ...)."""
    return bool(_MODEL_WORDS.search(name))


@dataclass(frozen=True)
class Profile:
    """Per-attempt costs of one handler (or of any, for lint's findings)."""

    path: str
    """The file read."""
    kind: str
    """"sweep", "soak" or "lint"."""
    service: str | None
    """The service it measured (None: lint's findings name none)."""
    handler: str | None
    """The handler it measured."""
    mismatch: AttemptCost | None
    """An attempt that ends in a journal mismatch."""
    error: AttemptCost | None
    """An attempt that ends in another error."""
    model_steps: tuple[str, ...] = ()
    """Names of the run steps that hold model calls, when the profile knows them."""

    def applies_to(self, service: str, handler: str) -> bool:
        return self.service is None or (self.service == service and self.handler in (None, handler))

    def cost(self, reason: Reason) -> AttemptCost | None:
        """Per-attempt cost of an invocation listed for `reason` (a paused one: as its retries were)."""
        if reason == "other-error":
            return self.error or self.mismatch
        return self.mismatch or self.error

    def describe(self) -> str:
        target = f"{self.service}/{self.handler}" if self.service else "any handler"
        return f"{self.kind} of {target} ({self.path})"


def load_profile(path: Path) -> Profile:
    """Read a sweep's or soak's records, or lint's findings; UsageError in one line if it is none of them."""
    # Imported here: the report's reader reads watch snapshots, so it imports this package.
    from paidtwice.results import load_results

    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"--profile {path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UsageError(f"--profile {path} cannot be read as JSON ({err})") from None
    if isinstance(data, list) and data and all(isinstance(i, dict) and "code" in i for i in data):
        return _lint_profile(path, data)
    results = load_results([path])
    if results.points:
        return _sweep_profile(path, results.points)
    if results.soaks:
        return _soak_profile(path, results.soaks[0])
    raise UsageError(
        f"--profile {path} holds no sweep points, soak or lint findings (give the --json of sweep or soak, "
        "or lint --format json)"
    )


def _target_of(point: PointResult) -> tuple[str, str]:
    if "/" in point.mode:
        service, _, handler = point.mode.partition("/")
        return point.service or service, handler
    return point.service or "Agent", "run"  # the deck's agent, swept as naive/journaled


def _sweep_profile(path: Path, points: Sequence[PointResult]) -> Profile:
    targets = {_target_of(p) for p in points}
    if len(targets) > 1:
        named = ", ".join(sorted(f"{s}/{h}" for s, h in targets))
        raise UsageError(f"--profile {path} sweeps several handlers ({named}); give the records of one")
    service, handler = targets.pop()
    mismatch = _attempt_cost(path, points, lambda outcome: outcome == "RT0016", "journal mismatch")
    error = _attempt_cost(path, points, lambda outcome: outcome.startswith("error"), "error")
    return Profile(str(path), "sweep", service, handler, mismatch, error)


def _attempt_cost(
    path: Path, points: Sequence[PointResult], ended: Callable[[str], bool], what: str
) -> AttemptCost | None:
    """The median attempt among those whose outcome `ended` tells, with the model calls made during it."""
    samples: list[tuple[int, TokenUsage]] = []
    for point in points:
        for attempt in point.attempt_log:
            if attempt.at is None or attempt.ended is None or not ended(attempt.outcome):
                continue
            during = [line for line in point.model_log if _during(line.at, attempt)]
            samples.append((len(during), sum((line.usage for line in during), NO_TOKENS)))
    if not samples:
        return None
    samples.sort(key=lambda s: (s[0], s[1].total_tokens))
    calls, usage = samples[len(samples) // 2]
    mean = statistics.fmean(n for n, _ in samples)
    return AttemptCost(
        calls=calls,
        usage=usage,
        source=(
            f"sweep {path}: the median of {len(samples)} attempts that ended in a {what} "
            f"({mean:.2f} model calls each on average), the stub's ledger"
        ),
    )


def _during(at: float, attempt: AttemptLine) -> bool:
    assert attempt.at is not None and attempt.ended is not None
    return attempt.at <= at <= attempt.ended


def _soak_profile(path: Path, soak: SoakRecord) -> Profile:
    words = soak.app.split(" ", 1)
    service, handler = words[1].split("/", 1) if len(words) == 2 else ("Agent", "run")
    if soak.model_calls == 0:
        raise UsageError(f"--profile {path}: the soak made no model call, there is nothing to price")
    per_call = TokenUsage(
        soak.usage.prompt_tokens // soak.model_calls, soak.usage.completion_tokens // soak.model_calls
    )
    outside = 0 if soak.model_steps else soak.clean_model_calls
    cost = AttemptCost(
        calls=outside,
        usage=TokenUsage(per_call.prompt_tokens * outside, per_call.completion_tokens * outside),
        bound="at most",
        source=(
            f"soak {path}: its clean invocation's {soak.clean_model_calls} model calls, "
            + (f"journaled in {', '.join(soak.model_steps)}" if soak.model_steps else "none journaled")
            + f"; tokens per call averaged over its {soak.model_calls} calls"
        ),
    )
    return Profile(str(path), "soak", service, handler, cost, cost, tuple(soak.model_steps))


def _lint_profile(path: Path, findings: list[dict[str, object]]) -> Profile:
    naive = [f for f in findings if f.get("code") in _NAIVE_CODES]
    if not naive:
        raise UsageError(f"--profile {path}: lint found no call outside ctx.run, there is nothing to count")
    files = sorted({str(f.get("path", "?")) for f in naive})
    cost = AttemptCost(
        calls=len(naive),
        priced=False,
        bound="call sites",
        source=f"lint {path}: {len(naive)} call sites outside ctx.run in {', '.join(files)}; no tokens",
    )
    return Profile(str(path), "lint", None, None, cost, cost)
