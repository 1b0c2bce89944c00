"""The deck's recovery walk on a real server: resume on the fix, restart while paused, kill and restart.

The stuck invocation comes from the naive changed-for-good run. The fix (journaled mode) is registered as a
new deployment on its own process and port, the production way; nothing is force-overwritten.
"""

from __future__ import annotations

from collections.abc import Callable

from paidtwice._exceptions import AdminError, ExperimentError
from paidtwice._words import count
from paidtwice.engine._admin import AdminClient
from paidtwice.lab._experiments import Walk
from paidtwice.lab._mismatch import explain
from paidtwice.lab._records import Check, Mismatch, RecoveryRecord, RecoveryStep
from paidtwice.lab._recover import plan_recovery
from paidtwice.lab._runner import Lab
from paidtwice.lab._watch import wait_for

__all__ = ["run_walk"]

_TIMEOUT = 60.0


def run_walk(lab: Lab, walk: Walk) -> RecoveryRecord:
    stuck = lab.run(walk.base)
    if stuck.status != "paused":
        calls = "; ".join(f"call {c.call} turn {c.turn} ask {c.ask}: {c.decision}" for c in stuck.model_log)
        raise ExperimentError(
            f"{walk.base.name} ({stuck.invocation_id}) ended {stuck.status}, not paused; nothing to recover. "
            f"Journal: {[e.label() for e in stuck.journal]}; model calls: {calls}; "
            f"attempts {stuck.attempts}, down {stuck.down_time}"
        )
    lane = lab.stub.lane(stuck.lane)
    if lane is None:
        raise ExperimentError(f"stub lane {stuck.lane} is gone")
    sql = lab.sql
    admin = AdminClient(lab.server.admin_url)
    inv = stuck.invocation_id
    steps: list[RecoveryStep] = []

    def costs(invocation_id: str, before: tuple[int, int]) -> tuple[int, int]:
        return (
            len(lane.model_calls(invocation_id)) - before[0],
            len(lane.tool_runs(invocation_id)) - before[1],
        )

    def counts(invocation_id: str) -> tuple[int, int]:
        return len(lane.model_calls(invocation_id)), len(lane.tool_runs(invocation_id))

    def wait(what: str, condition: Callable[[], bool]) -> None:
        wait_for(what, condition, timeout=_TIMEOUT, stop=lab.cancelled.is_set)

    def status(invocation_id: str) -> str:
        row = sql.invocation(invocation_id)
        return row.status if row is not None else "unknown"

    with lab.new_agent(mode=walk.fix_mode, lane=lane, service=stuck.service, name="fix") as fix:
        fix.start()
        deployment = admin.register_deployment(fix.uri, force=False)

        # 0. Run the fix once on a fresh invocation: evidence of the first steps it takes, so recover can
        # judge a resume onto it before anyone tries one.
        probe = lab.ingress.send(stuck.service, "run", "probe: what does the fix run first?")
        wait("the probe on the fix to complete", lambda: status(probe) == "completed")
        model, tools = counts(probe)
        plan = plan_recovery(sql, inv, deployment=deployment.id)
        verdict = next(way for way in plan.ways if way.name == "resume")
        steps.append(
            RecoveryStep(
                "probe the fix, then ask recover about a resume onto it",
                200,
                probe,
                verdict.replay,
                probe,
                model,
                tools,
            )
        )

        # 1. Resume on the fix: accepted, then the replay meets the recorded journal.
        before = counts(inv)
        admin.resume(inv, deployment=deployment.id)
        resumed = admin.log[-1]

        def failed_on_fix() -> bool:
            row = sql.invocation(inv)
            return (
                row is not None
                and row.last_failure_error_code == "RT0016"
                and "Difference" in (row.last_failure or "")
            ) or (row is not None and row.status in ("paused", "completed") and row.last_failure is None)

        wait("the resumed invocation to fail on the fix", failed_on_fix)
        found = explain(sql, inv)
        mismatch: Mismatch | None = found.mismatch
        model, tools = costs(inv, before)
        outcome = (
            f"replay on {deployment.id} failed: {found.code} at index {mismatch.index}, journal has "
            f"{mismatch.recorded}, code attempted {mismatch.attempted}"
            if mismatch is not None
            else f"{found.status}: {found.message[:120]}"
        )
        steps.append(
            RecoveryStep(
                f"resume on the fix ({deployment.id})",
                resumed.status,
                resumed.answer,
                outcome,
                inv,
                model,
                tools,
            )
        )

        # The resumed invocation retries the same mismatch; pause it again rather than wait out the policy.
        admin.pause(inv)
        paused = admin.log[-1]
        wait("the invocation to be paused again", lambda: status(inv) == "paused")
        steps.append(RecoveryStep("pause it again", paused.status, paused.answer, "paused", inv, 0, 0))

        # 2. Restart-as-new while paused: refused.
        try:
            admin.restart_as_new(inv)
            refused = admin.log[-1]
            outcome = "accepted (the deck saw it refused)"
        except AdminError:
            refused = admin.log[-1]
            outcome = "refused while paused"
        steps.append(
            RecoveryStep("restart-as-new while paused", refused.status, refused.answer, outcome, inv, 0, 0)
        )

        # 3. Kill, then restart-as-new: a new invocation with a fresh journal.
        admin.kill(inv)
        killed = admin.log[-1]
        wait("the kill to complete the invocation", lambda: status(inv) == "completed")
        steps.append(RecoveryStep("kill", killed.status, killed.answer, "completed (killed)", inv, 0, 0))
        new = admin.restart_as_new(inv)
        restarted = admin.log[-1]
        wait("the restarted invocation to finish", lambda: status(new) in ("completed", "paused"))
        model, tools = counts(new)
        journal = sql.journal(new)
        ran = ", ".join(e.name for e in journal if e.type == "Command: Run")
        steps.append(
            RecoveryStep(
                "restart-as-new after the kill",
                restarted.status,
                restarted.answer,
                f"{status(new)} with a fresh journal of {count(len(journal), 'entry', 'entries')}; "
                f"ran again: {ran}",
                new,
                model,
                tools,
            )
        )

    checks = (
        Check(
            "recover flags the resume as certain to mismatch",
            "index 1",
            f"index {verdict.certain_mismatch_at}",
            verdict.certain_mismatch_at == 1,
        ),
        Check("resume on the fix accepted", "200", str(steps[1].status), steps[1].status == 200),
        Check(
            "the resumed replay fails with RT0016 at index 1",
            "index 1: weather recorded, model attempted",
            f"index {mismatch.index}: {mismatch.recorded} recorded, {mismatch.attempted} attempted"
            if mismatch
            else "no mismatch",
            mismatch is not None
            and mismatch.index == 1
            and mismatch.recorded == "run weather"
            and mismatch.attempted == "run model",
        ),
        Check("restart-as-new while paused", "409", str(steps[3].status), steps[3].status == 409),
        Check(
            "after the kill, restart-as-new completes",
            "completed, 2 model calls",
            f"{status(steps[-1].invocation_id)}, {count(steps[-1].model_calls, 'model call')}",
            status(steps[-1].invocation_id) == "completed" and steps[-1].model_calls == 2,
        ),
        Check(
            "the tool runs again after a restart from the start",
            "1 tool call",
            count(steps[-1].tool_calls, "tool call"),
            steps[-1].tool_calls == 1,
        ),
    )
    return RecoveryRecord(
        name=walk.name,
        invocation_id=inv,
        fix_deployment=deployment.id,
        predicted_mismatch_at=verdict.certain_mismatch_at,
        steps=tuple(steps),
        mismatch=mismatch,
        admin_log=tuple(admin.log),
        checks=checks,
        matches=all(c.ok for c in checks),
        stuck_run=stuck,
    )
