"""The deck's recovery walk on a real server: resume on the fix, restart while paused, kill and restart.

The stuck invocation comes from the naive changed-for-good run. The fix (journaled mode) is registered as a
new deployment on its own process and port, the production way; nothing is force-overwritten. Each step is
one function; what the walk expects of them is on its row (`Walk`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paidtwice._exceptions import AdminError, ExperimentError
from paidtwice._words import count
from paidtwice.deck._experiments import Walk
from paidtwice.engine import AdminClient, SqlClient
from paidtwice.lab import PRICES_AS_OF, Lab, bill, wait_for
from paidtwice.recover import MISMATCH_CODE, WayOut, explain, plan_recovery
from paidtwice.results import Check, Mismatch, RecoveryRecord, RecoveryStep, RunRecord
from paidtwice.stub import NO_TOKENS, Lane, TokenUsage
from paidtwice.targets import DeckTarget

if TYPE_CHECKING:
    from paidtwice.deck._runner import Deck

__all__ = ["run_walk"]

_TIMEOUT = 60.0

_Costs = tuple[int, int, TokenUsage, float]
"""What a step cost: model calls, tool runs, the calls' tokens and their price in dollars."""
_FREE: _Costs = (0, 0, NO_TOKENS, 0.0)


@dataclass(frozen=True)
class _Walking:
    """What the steps of one walk share: the lab, the stuck invocation's lane, and the fix's deployment."""

    lab: Lab
    lane: Lane
    sql: SqlClient
    admin: AdminClient
    stuck: RunRecord
    deployment: str

    @property
    def inv(self) -> str:
        return self.stuck.invocation_id

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        wait_for(what, condition, timeout=_TIMEOUT, stop=self.lab.cancelled.is_set)

    def status(self, invocation_id: str) -> str:
        row = self.sql.invocation(invocation_id)
        return row.status if row is not None else "unknown"

    def counts(self, invocation_id: str) -> tuple[int, int]:
        """Model calls and tool runs the invocation has cost so far (stub ledger)."""
        return len(self.lane.model_calls(invocation_id)), len(self.lane.tool_runs(invocation_id))

    def costs(self, invocation_id: str, since: tuple[int, int] = (0, 0)) -> _Costs:
        """What the invocation cost after `since` (its counts before the step), priced at the lab's model."""
        calls = self.lane.model_calls(invocation_id)[since[0] :]
        tools = self.lane.tool_runs(invocation_id)[since[1] :]
        paid = bill(calls, self.lab.price_model)
        return len(calls), len(tools), paid.usage, paid.cost_usd

    def act(
        self, request: Callable[[str], object], action: str, outcome: str, *, until: str, what: str
    ) -> RecoveryStep:
        """Make an admin request on the stuck invocation, then wait until it is `until`."""
        request(self.inv)
        step = self.step(action, outcome, self.inv)
        self.wait(what, lambda: self.status(self.inv) == until)
        return step

    def step(self, action: str, outcome: str, invocation_id: str, costs: _Costs = _FREE) -> RecoveryStep:
        """A step whose admin request is the latest one made."""
        call = self.admin.log[-1]
        return RecoveryStep(action, call.status, call.answer, outcome, invocation_id, *costs)


def run_walk(deck: Deck, walk: Walk) -> RecoveryRecord:
    """Leave the walk's base run paused, deploy the fix beside it, then take each way out in turn: a probe of
    the fix, resume, pause again, restart while paused, kill, restart after the kill."""
    lab = deck.lab
    stuck = _stuck_run(deck, walk)
    lane = lab.stub.lane(stuck.lane)
    if lane is None:
        raise ExperimentError(f"stub lane {stuck.lane} is gone")
    admin = AdminClient(lab.server.admin_url)
    # The fix's logs beside the stuck run's, in a directory of their own.
    fix, _trace = lab.launch(
        DeckTarget(walk.fix_mode, pause=None),
        lane,
        stuck.service,
        workdir=lab.workdir / stuck.service / "fix",
    )
    with fix:
        fix.start()
        deployment = admin.register_deployment(fix.uri, force=False).id
        w = _Walking(lab, lane, lab.sql, admin, stuck, deployment)
        probe, verdict = _probe(w)
        resume, mismatch = _resume_on_fix(w)
        steps = (
            probe,
            resume,
            _pause_again(w),
            _restart_while_paused(w),
            _kill(w),
            _restart_after_kill(w),
        )
    checks = _checks(w, walk, verdict, steps, mismatch)
    usage = NO_TOKENS
    for step in steps:
        usage = usage + step.usage
    return RecoveryRecord(
        name=walk.name,
        invocation_id=stuck.invocation_id,
        fix_deployment=deployment,
        predicted_mismatch_at=verdict.certain_mismatch_at,
        steps=steps,
        mismatch=mismatch,
        admin_log=tuple(admin.log),
        checks=checks,
        matches=all(c.ok for c in checks),
        stuck_run=stuck,
        usage=usage,
        cost_usd=sum((step.cost_usd for step in steps), 0.0),
        price_model=lab.price_model,
        prices_as_of=PRICES_AS_OF,
    )


def _stuck_run(deck: Deck, walk: Walk) -> RunRecord:
    """The walk's base run, which must leave its invocation paused."""
    stuck = deck.run(walk.base)
    if stuck.status != "paused":
        calls = "; ".join(f"call {c.call} turn {c.turn} ask {c.ask}: {c.decision}" for c in stuck.model_log)
        raise ExperimentError(
            f"{walk.base.name} ({stuck.invocation_id}) ended {stuck.status}, not paused; nothing to recover. "
            f"Journal: {[e.label() for e in stuck.journal]}; model calls: {calls}; "
            f"attempts {stuck.attempts}, down {stuck.down_time}"
        )
    return stuck


def _probe(w: _Walking) -> tuple[RecoveryStep, WayOut]:
    """Run the fix once on a fresh invocation: evidence of the first steps it takes, so recover can judge a
    resume onto it before anyone tries one."""
    probe = w.lab.ingress.send(w.stuck.service, "run", "probe: what does the fix run first?")
    w.wait("the probe on the fix to complete", lambda: w.status(probe) == "completed")
    costs = w.costs(probe)
    plan = plan_recovery(w.sql, w.inv, deployment=w.deployment)
    verdict = next(way for way in plan.ways if way.name == "resume")
    step = RecoveryStep(
        "probe the fix, then ask recover about a resume onto it", 200, probe, verdict.replay, probe, *costs
    )
    return step, verdict


def _resume_on_fix(w: _Walking) -> tuple[RecoveryStep, Mismatch | None]:
    """Resume on the fix: accepted, then the replay meets the recorded journal."""
    before = w.counts(w.inv)
    w.admin.resume(w.inv, deployment=w.deployment)
    resumed = w.admin.log[-1]

    def failed_on_fix() -> bool:
        row = w.sql.invocation(w.inv)
        return (
            row is not None
            and row.last_failure_error_code == MISMATCH_CODE
            and "Difference" in (row.last_failure or "")
        ) or (row is not None and row.status in ("paused", "completed") and row.last_failure is None)

    w.wait("the resumed invocation to fail on the fix", failed_on_fix)
    found = explain(w.sql, w.inv)
    mismatch = found.mismatch
    outcome = (
        f"replay on {w.deployment} failed: {found.code} at {mismatch.where}, journal has "
        f"{mismatch.recorded}, code attempted {mismatch.attempted}"
        if mismatch is not None
        else f"{found.status}: {found.message[:120]}"
    )
    step = RecoveryStep(
        f"resume on the fix ({w.deployment})",
        resumed.status,
        resumed.answer,
        outcome,
        w.inv,
        *w.costs(w.inv, since=before),
    )
    return step, mismatch


def _pause_again(w: _Walking) -> RecoveryStep:
    """The resumed invocation retries the same mismatch; pause it again rather than wait out the policy."""
    return w.act(
        w.admin.pause, "pause it again", "paused", until="paused", what="the invocation to be paused again"
    )


def _restart_while_paused(w: _Walking) -> RecoveryStep:
    try:
        w.admin.restart_as_new(w.inv)
        outcome = "accepted (the deck saw it refused)"
    except AdminError:
        outcome = "refused while paused"
    return w.step("restart-as-new while paused", outcome, w.inv)


def _kill(w: _Walking) -> RecoveryStep:
    return w.act(
        w.admin.kill,
        "kill",
        "completed (killed)",
        until="completed",
        what="the kill to complete the invocation",
    )


def _restart_after_kill(w: _Walking) -> RecoveryStep:
    """Restart-as-new after the kill: a new invocation with a fresh journal."""
    new = w.admin.restart_as_new(w.inv)
    restarted = w.admin.log[-1]
    w.wait("the restarted invocation to finish", lambda: w.status(new) in ("completed", "paused"))
    costs = w.costs(new)
    journal = w.sql.journal(new)
    ran = ", ".join(e.name for e in journal if e.type == "Command: Run")
    outcome = (
        f"{w.status(new)} with a fresh journal of {count(len(journal), 'entry', 'entries')}; ran again: {ran}"
    )
    return RecoveryStep(
        "restart-as-new after the kill", restarted.status, restarted.answer, outcome, new, *costs
    )


def _checks(
    w: _Walking, walk: Walk, verdict: WayOut, steps: tuple[RecoveryStep, ...], mismatch: Mismatch | None
) -> tuple[Check, ...]:
    """Each figure the walk's row expects, against the steps."""
    resume, refused, restarted = steps[1], steps[3], steps[-1]
    final = w.status(restarted.invocation_id)
    return (
        Check(
            "recover flags the resume as certain to mismatch",
            f"entry {walk.mismatch_at}",
            f"entry {verdict.certain_mismatch_at}",
            verdict.certain_mismatch_at == walk.mismatch_at,
        ),
        Check(
            "resume on the fix accepted",
            str(walk.resume_status),
            str(resume.status),
            resume.status == walk.resume_status,
        ),
        Check(
            f"the resumed replay fails with {MISMATCH_CODE} at entry {walk.mismatch_at}",
            f"entry {walk.mismatch_at}: {walk.recorded} recorded, {walk.attempted} attempted",
            f"{mismatch.where}: {mismatch.recorded} recorded, {mismatch.attempted} attempted"
            if mismatch
            else "no mismatch",
            mismatch is not None
            and mismatch.index == walk.mismatch_at
            and mismatch.recorded == walk.recorded
            and mismatch.attempted == walk.attempted,
        ),
        Check(
            "restart-as-new while paused",
            str(walk.restart_paused_status),
            str(refused.status),
            refused.status == walk.restart_paused_status,
        ),
        Check(
            "after the kill, restart-as-new completes",
            f"completed, {count(walk.restart_model_calls, 'model call')}",
            f"{final}, {count(restarted.model_calls, 'model call')}",
            final == "completed" and restarted.model_calls == walk.restart_model_calls,
        ),
        Check(
            "the tool runs again after a restart from the start",
            count(walk.restart_tool_calls, "tool call"),
            count(restarted.tool_calls, "tool call"),
            restarted.tool_calls == walk.restart_tool_calls,
        ),
    )
