"""The deck's runner: carry out a row on a lab, and measure it.

A run: arm its fault (`_faults`: the moment it kills in is held open); start the agent, load its replacement
beside it, register it; wait until no other run is starting; send the invocation; let the fault land (wait
for its moment, kill, keep the agent down for the restart delay and the retries it stands for, let the
replacement serve), then end the pause held for it; wait until the invocation completes or pauses; measure.
Runs go concurrently on one lab without sharing a count: each has its own agent process, port, stub lane,
service name and invocation.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from paidtwice.agent import EXPLICIT_RECOVERY, QUESTION, RETRY_POLICY, STEP_LOG, renamed_service
from paidtwice.deck._comparisons import run_comparison
from paidtwice.deck._curves import run_curve
from paidtwice.deck._experiments import Comparison, Curve, Experiment, Row, Walk
from paidtwice.deck._faults import FaultedRun, Landing
from paidtwice.deck._measures import node_kill_record
from paidtwice.deck._policy import retries_while_down
from paidtwice.deck._rows import run_rows
from paidtwice.deck._run_record import RunSeen, measure_run
from paidtwice.deck._together import run_together
from paidtwice.deck._walks import run_walk
from paidtwice.lab import Engine, Lab, settled
from paidtwice.results import ComparisonRecord, CurveRecord, Record, RecoveryRecord, RunRecord
from paidtwice.stub import Lane, script_by_name
from paidtwice.targets import CommandTarget, DeckTarget

__all__ = ["Deck"]

_REPO = Path(__file__).resolve().parents[3]
"""The repository's root, from which a row's `command_dir` is named (examples/ts_agent)."""


class Deck:
    """Runs the deck's rows on a lab (which it does not own: start and close the lab around it).

    `Deck(lab).run(EXPERIMENTS[1])` carries out one row; `run_rows` any mix of rows at once.
    """

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def run(self, experiment: Experiment, *, restart_delay: float | None = None) -> RunRecord:
        """Carry out one experiment row and measure it.

        A row whose fault kills restate-server itself gets a server (or cluster) of its own, so the runs
        sharing the lab's are not killed with it. A row that kills a cluster node runs on the lab's cluster
        if it has one (the deck runs it alone, after the others: `run_rows`), else on a 3-node cluster of
        its own.
        """
        lab = self.lab
        fault = experiment.fault
        if fault.own_server or experiment.server_flags:
            # A row's experimental server flags are its own: never set on the server other rows share.
            nodes = lab.cluster
        elif fault.nodes > lab.cluster:
            nodes = fault.nodes
        else:
            return self._run_on(lab.engine, experiment, restart_delay)
        with lab.engine_beside(nodes, dict(experiment.server_flags)) as engine:
            return self._run_on(engine, experiment, restart_delay)

    def run_curve(self, curve: Curve) -> CurveRecord:
        """Run the curve's base experiment once per point, concurrently (see `run_curve`)."""
        return run_curve(self, curve)

    def run_comparison(self, row: Comparison) -> ComparisonRecord:
        """Run both sides of a comparison at once, and set them side by side (see `run_comparison`)."""
        return run_comparison(self, row)

    def run_walk(self, walk: Walk) -> RecoveryRecord:
        """Leave the walk's base run paused, then take each way out of it in turn (see `run_walk`)."""
        return run_walk(self, walk)

    def run_rows(
        self,
        rows: Sequence[Row],
        *,
        concurrent: bool = True,
        on_record: Callable[[Record], None] | None = None,
    ) -> list[Record]:
        """Run any mix of rows; their records in the rows' order (see `run_rows`)."""
        return run_rows(self, rows, concurrent=concurrent, on_record=on_record)

    def _target_of(self, experiment: Experiment, lane: Lane, service: str) -> DeckTarget | CommandTarget:
        """The row's agent as a target: the deck's (or a Python app written to its environment), or a
        command in another language that reads the deck agent's variables by names of its own, and so
        serves `service` under the name it is given, on `lane`'s tools."""
        if not experiment.command:
            return DeckTarget(experiment.mode, app=experiment.agent, pause=None)
        env = {
            "TOOLS_URL": lane.tools_url,
            "AGENT_MODE": experiment.mode,
            "SERVICE": service,
            "PAUSE_MS": f"{float(self._pause_seconds()) * 1000:g}",
            **dict(experiment.command_env),
        }
        return CommandTarget(
            experiment.command,
            service,
            "run",
            QUESTION,
            experiment.mode,
            cwd=str(_REPO / experiment.command_dir),
            env=tuple(env.items()),
        )

    def _run_on(self, engine: Engine, experiment: Experiment, restart_delay: float | None) -> RunRecord:
        lab = self.lab
        delay = experiment.restart_delay if restart_delay is None else restart_delay
        started = time.time()
        run_id = lab.next_id()
        service = renamed_service("Agent", f"{experiment.name}_{run_id}")
        script = script_by_name(experiment.script, hold=experiment.hold)
        lane = lab.stub.open_lane(script, name=f"{service.lower()}")
        lane.model_up = not experiment.model_down
        lane.latency = experiment.model_latency
        lane.booking_seconds = experiment.booking_seconds
        admin = engine.admin
        # The step log marks where the handler was at the kill, and where its replay got back to it.
        step_log = lab.workdir / service / "steps.jsonl"
        fault = experiment.fault
        target = self._target_of(experiment, lane, service)
        agent, _trace = lab.launch(target, lane, service, env=_agent_env(experiment, step_log), traced=False)
        with agent:
            run = FaultedRun(experiment.name, engine, agent, lane, delay, lab.wait, lab.sleep)
            if not experiment.command:
                # The deck's agents run the row's policy (a command runs its own, unknown here).
                run.refused = retries_while_down(
                    experiment.retry_policy, delay, dict(experiment.server_flags)
                )
            fault.arm(run)
            with lab.starting_up():
                # The agent and its replacement load side by side; the replacement is ready before the
                # invocation is sent, so nothing loads inside the fault's window.
                agent.prepare(ahead=2 if run.replacement else 1)
                agent.start(hold_pause=run.hold_pause)
                if run.replacement:
                    agent.wait_ready()
                admin.register_deployment(agent.uri)
            lab.wait_started()
            invocation_id = engine.ingress.send(service, "run", QUESTION)
            run.invocation_id = invocation_id
            polled = engine.poller.follow(invocation_id)
            landing: Landing | None = None
            node_back_at: float | None = None
            try:
                landing = fault.land(run)
                if run.hold_pause:
                    agent.release_pause()  # landed: the pause held for it may end, in whichever attempt
                lab.wait(
                    f"{experiment.name} ({invocation_id}) to complete or pause",
                    lambda: settled(polled.last),
                    experiment.settles_within,
                )
            finally:
                engine.poller.forget(invocation_id)
                if landing is not None and not lab.cancelled.is_set():
                    node_back_at = fault.settle(run, landing)
            final = polled.observe(engine.sql.invocation(invocation_id))
            agent_attempts = agent.attempts(invocation_id)
            seen = RunSeen(
                service=service,
                delay=delay,
                invocation_id=invocation_id,
                lane=lane,
                polled=polled,
                final=final,
                agent_attempts=agent_attempts,
                kill_at=landing.kill_at,
                up_at=landing.up_at,
                started=started,
                admin=admin,
                step_log=step_log,
                node_kill=node_kill_record(
                    landing.node_kill,
                    node_back_at,
                    engine.sql.journal(invocation_id),
                    agent_attempts,
                    pause=self._pause_seconds(),
                ),
            )
            return measure_run(
                engine.sql,
                engine.ingress,
                experiment,
                seen,
                price_model=lab.price_model,
                server_version=lab.server_version,
            )

    def _pause_seconds(self) -> float:
        if self.lab.agent_pause is not None:
            return float(self.lab.agent_pause)
        # The agent's own default, from its module; imported only now, as for the curve's policy.
        from paidtwice.agent import weather

        return weather.RATE_LIMIT_PAUSE.total_seconds()

    def run_many(
        self,
        rows: Sequence[tuple[Experiment, float | None]],
        *,
        concurrent: bool,
        on_record: Callable[[RunRecord], None] | None = None,
    ) -> list[RunRecord]:
        """Run rows serially or all at once; `on_record` sees each record as soon as it is measured."""
        if not concurrent:
            records = []
            for experiment, delay in rows:
                record = self.run(experiment, restart_delay=delay)
                if on_record:
                    on_record(record)
                records.append(record)
            return records
        lock = threading.Lock()

        def run_and_hand_over(experiment: Experiment, delay: float | None) -> RunRecord:
            record = self.run(experiment, restart_delay=delay)
            if on_record:
                with lock:
                    on_record(record)
            return record

        return run_together(
            [
                (_point_name(experiment, delay), functools.partial(run_and_hand_over, experiment, delay))
                for experiment, delay in rows
            ],
            cancelled=self.lab.cancelled,
            thread_name="paidtwice-run",
        )


def _point_name(experiment: Experiment, delay: float | None) -> str:
    """A run among others of one row (a curve's point, a comparison's side), by what sets it apart."""
    if delay is not None:
        return f"{experiment.name} (restart delay {delay:g} s)"
    if experiment.retry_policy is not None:
        return f"{experiment.name} ({experiment.retry_policy.describe()})"
    return experiment.name


def _agent_env(experiment: Experiment, step_log: Path) -> dict[str, str]:
    """What the row sets in its agent's environment, beside the lab's own (a command's are its target's)."""
    if experiment.command:
        return {}
    env = {STEP_LOG: str(step_log)} if experiment.step_log else {}
    if experiment.booking_key:
        env["PAIDTWICE_BOOKING_KEY"] = experiment.booking_key
    if experiment.booking_pause:
        env["PAIDTWICE_BOOKING_PAUSE_S"] = f"{experiment.booking_pause:g}"
    if experiment.explicit_recovery:
        env[EXPLICIT_RECOVERY] = "1"
    if experiment.retry_policy is not None:
        env[RETRY_POLICY] = experiment.retry_policy.to_env()
    return env
