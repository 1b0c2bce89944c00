"""Read every stuck invocation off a Restate server, price it, and list its ways out. Read-only.

One query finds them (retrying after a failure, or paused). Each one is then read as `explain` and `recover`
read it (`plan_recovery`: its failure against its journal, the ways out its state allows), which costs a few
queries per invocation; those are kept between refreshes while its journal and its failure stay the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from paidtwice._exceptions import NotFound, PaidtwiceError, ServerUnreachable, UsageError
from paidtwice.engine import JournalEntry, QueryFailed, SqlClient, epoch
from paidtwice.lab import PRICES_AS_OF, price_usage
from paidtwice.recover import Explanation, Judge, explain, plan_recovery
from paidtwice.results import Reason, StuckInvocation, WatchSnapshot, WayOutLine
from paidtwice.watch._profile import Profile, looks_like_model_step

__all__ = ["Scanner", "check_profile"]

_STUCK = (
    "SELECT id, target_service_name, target_service_key, target_handler_name, status, pinned_deployment_id, "
    "retry_count, created_at, last_start_at, next_retry_at, last_failure, last_failure_error_code, "
    "journal_size FROM sys_invocation WHERE status = 'paused' OR status = 'backing-off' "
    "OR (status <> 'completed' AND last_failure IS NOT NULL)"
)
_MISMATCH_CODE = "RT0016"

JudgeFor = Callable[[str], Judge]
"""Builds, for an invocation id, the judge of whether the code replays its journal kept up to an index."""


@dataclass
class _Read:
    """What is kept of one invocation between refreshes."""

    key: tuple[object, ...]
    """Journal size, whether paused, and the failure's code it was read at."""
    failure: Explanation | None
    journal: tuple[JournalEntry, ...]
    ways: tuple[WayOutLine, ...]
    verdict: str | None
    since: str


@dataclass
class Scanner:
    """Takes snapshots of one server, remembering what it saw of each invocation between them."""

    nodes: tuple[SqlClient, ...]
    """The admin APIs to read (headers included): one server, or nodes of one cluster, asked in turn until
    one answers."""
    price_model: str
    """The model the dollars are priced at."""
    profile: Profile | None = None
    """Per-attempt costs outside the journal."""
    judge_for: JudgeFor | None = None
    """With `--app`: replay-check's judge of each journal against the code."""
    app: str = ""
    """The code `judge_for` replays (for the record)."""
    _reads: dict[str, _Read] = field(default_factory=dict)
    _attempts: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """The most attempts seen per invocation, and whether that count was read while the attempt ran."""
    _current: int = 0

    def judge_with(self, judge_for: JudgeFor, app: str) -> None:
        """From now on, replay-check each journal against `app` (what was read without it is read again)."""
        self.judge_for, self.app = judge_for, app
        self._reads.clear()

    @property
    def sql(self) -> SqlClient:
        """The node that answered last."""
        return self.nodes[self._current]

    def snapshot(self) -> WatchSnapshot:
        """Every stuck invocation now. Raises ServerUnreachable (or QueryFailed) when no node answers."""
        first: PaidtwiceError | None = None
        for step in range(len(self.nodes)):
            self._current = (self._current + step) % len(self.nodes)
            try:
                return self._snapshot()
            except ServerUnreachable as err:
                first = first or err
            except QueryFailed as err:
                if err.status < 500:
                    raise  # refused (a wrong credential): another node would refuse it too
                first = first or err
        assert first is not None
        raise first

    def _snapshot(self) -> WatchSnapshot:
        now = time.time()
        rows = self.sql.query(_STUCK)
        stuck = []
        for row in rows:
            found = self._one(row, now)
            if found is not None:
                stuck.append(found)
        live = {s.invocation_id for s in stuck}
        for gone in set(self._reads) - live:
            del self._reads[gone]
        stuck.sort(key=lambda s: (s.since, s.invocation_id))
        return WatchSnapshot(
            taken_at=now,
            admin_url=self.sql.url,
            stuck=tuple(stuck),
            price_model=self.price_model,
            prices_as_of=PRICES_AS_OF,
            profile=self.profile.describe() if self.profile else "",
            app=self.app,
        )

    def _one(self, row: dict[str, object], now: float) -> StuckInvocation | None:
        invocation_id = str(row["id"])
        status = str(row.get("status", ""))
        read = self._read(invocation_id, row)
        if read is None:
            return None  # it finished between the two queries
        failure = read.failure
        # The failure was read after the row (an attempt may have failed in between): its code and message
        # are the newer, so the reason and the mismatch shown are of one failure.
        code = (failure.code if failure else None) or str(row.get("last_failure_error_code") or "") or None
        reason: Reason = (
            "journal-mismatch"
            if code == _MISMATCH_CODE
            else "other-error"
            if code or failure
            else "no-failure-recorded"
        )
        service = str(row.get("target_service_name") or "")
        handler = str(row.get("target_handler_name") or "")
        attempts, attempts_source = self._count(invocation_id, status, row.get("retry_count"))
        cost = (
            self.profile.cost(reason) if self.profile and self.profile.applies_to(service, handler) else None
        )
        per_attempt_usd = price_usage(cost.usage, self.price_model, now) if cost and cost.priced else None
        repaid = cost.calls * (attempts - 1) if cost is not None and attempts else None
        rate = _attempts_per_hour(status, row, attempts, read.since, now)
        steps = self.profile.model_steps if self.profile else ()
        return StuckInvocation(
            invocation_id=invocation_id,
            service=service,
            handler=handler,
            key=str(row["target_service_key"]) if row.get("target_service_key") else None,
            deployment=str(row["pinned_deployment_id"]) if row.get("pinned_deployment_id") else None,
            status=status,
            state="paused" if status == "paused" else "retrying",
            reason=reason,
            attempts=attempts,
            attempts_source=attempts_source,
            since=read.since,
            last_start_at=_text(row.get("last_start_at")),
            next_retry_at=_text(row.get("next_retry_at")),
            error_code=code or None,
            last_error=(failure.message if failure else "") or str(row.get("last_failure") or ""),
            mismatch=failure.mismatch if failure else None,
            journal_model_steps=tuple(
                e.name
                for e in read.journal
                if e.type == "Command: Run" and (e.name in steps or looks_like_model_step(e.name))
            ),
            per_attempt=cost,
            cost_per_attempt_usd=per_attempt_usd,
            repaid_calls=repaid,
            repaid_usd=per_attempt_usd * (attempts - 1) if per_attempt_usd is not None and attempts else None,
            attempts_per_hour=rate,
            burn_usd_per_hour=per_attempt_usd * rate
            if per_attempt_usd is not None and rate is not None
            else None,
            ways_out=read.ways,
            replay_verdict=read.verdict,
        )

    def _read(self, invocation_id: str, row: dict[str, object]) -> _Read | None:
        status = str(row.get("status", ""))
        # Not the status itself: a retrying invocation flips between running and backing-off on every
        # attempt, and is read again only when its journal, its failure's code or being paused changes.
        key = (row.get("journal_size"), status == "paused", row.get("last_failure_error_code"))
        kept = self._reads.get(invocation_id)
        # Paused, backing off, or running an attempt after a failure (retrying): each has its ways out.
        retrying = status == "running" and bool(row.get("last_failure"))
        plannable = status in ("paused", "backing-off") or retrying
        if kept is not None and kept.key == key and (kept.ways or not plannable):
            return kept
        journal: tuple[JournalEntry, ...] = ()
        ways: tuple[WayOutLine, ...] = kept.ways if kept else ()
        verdict = kept.verdict if kept else None
        judge = self.judge_for(invocation_id) if self.judge_for is not None else None
        plan = None
        try:
            if plannable:
                try:
                    plan = plan_recovery(self.sql, invocation_id, judge=judge, retrying=True)
                except UsageError:
                    plan = None  # its state moved on between the queries: read as it is now
            if plan is not None:
                failure = plan.failure
                journal = plan.journal
                ways = tuple(WayOutLine(w.name, w.title, w.runs_again, w.replay) for w in plan.ways)
            else:
                failure = _failure(self.sql, invocation_id)
                journal = tuple(self.sql.journal(invocation_id))
        except NotFound:
            return None
        if judge is not None and journal:
            verdict, _ = judge(journal[-1].index)
        events = self.sql.failures(invocation_id)
        since = events[0].appended_at if events else str(row.get("created_at") or "")
        read = _Read(key, failure, journal, ways, verdict, since)
        self._reads[invocation_id] = read
        return read

    def _count(self, invocation_id: str, status: str, retry_count: object) -> tuple[int | None, str]:
        """Attempts so far: sys_invocation's retry count (backing off, the attempts made; running, the attempt
        under way is counted in it). Once paused the server drops the count, and the most this watch saw
        stands, plus the attempt that paused it unless that one was seen running."""
        seen = self._attempts.get(invocation_id)
        if isinstance(retry_count, int) and retry_count > 0:
            if seen is None or retry_count >= seen[0]:
                seen = self._attempts[invocation_id] = (retry_count, status == "running")
            return seen[0], "sys_invocation.retry_count"
        if seen is None:
            if status == "paused":
                return None, "unknown: the server keeps no retry count once paused, and this watch saw none"
            return None, "sys_invocation.retry_count (seen by this watch)"
        most, was_running = seen
        if status == "paused" and not was_running:
            return most + 1, "sys_invocation.retry_count while it retried (seen by this watch), + the last"
        return most, "sys_invocation.retry_count (seen by this watch)"


def _failure(sql: SqlClient, invocation_id: str) -> Explanation | None:
    try:
        return explain(sql, invocation_id)
    except UsageError:
        return None  # no failure recorded (yet)


def _attempts_per_hour(
    status: str, row: dict[str, object], attempts: int | None, since: str, now: float
) -> float | None:
    if status == "paused":
        return 0.0
    start, due = epoch(_text(row.get("last_start_at"))), epoch(_text(row.get("next_retry_at")))
    if start is not None and due is not None and due > start:
        return 3600.0 / (due - start)
    began = epoch(since)
    if attempts and began is not None and now > began:
        return attempts * 3600.0 / (now - began)
    return None


def _text(value: object) -> str | None:
    return str(value) if value else None


def check_profile(sql: SqlClient, profile: Profile) -> None:
    """A profile of a service the server does not have is a mistake: said in one line (UsageError)."""
    if profile.service is None:
        return
    names = {str(row.get("name")) for row in sql.query("SELECT name FROM sys_service")}
    if profile.service not in names:
        known = ", ".join(sorted(names)) or "none"
        raise UsageError(
            f"--profile {profile.path} measured {profile.service}/{profile.handler}, a service the server at "
            f"{sql.url} does not have (its services: {known})"
        )
