"""A watch snapshot for people: the terminal table `paidtwice watch` refreshes, and the report's section."""

from __future__ import annotations

from datetime import UTC, datetime

from paidtwice._words import count
from paidtwice.report._html_parts import Section, esc, html_table
from paidtwice.report._text import tokens, usd
from paidtwice.results import AttemptCost, StuckInvocation, WatchSnapshot

__all__ = ["format_watch", "watch_section"]


def _clock(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _money(amount: float | None) -> str:
    return usd(amount) if amount is not None else "-"


def _burn(s: StuckInvocation) -> str:
    return "0 (paused)" if s.state == "paused" else _money(s.burn_usd_per_hour)


def _attempts(s: StuckInvocation) -> str:
    return str(s.attempts) if s.attempts is not None else "?"


def _cost_words(cost: AttemptCost, per_attempt_usd: float | None) -> str:
    calls = f"{cost.calls:g} model call{'s' if cost.calls != 1 else ''}"
    if cost.bound == "at most":
        calls = "at most " + calls
    elif cost.bound == "call sites":
        calls = f"{cost.calls:g} call site{'s' if cost.calls != 1 else ''} (lint)"
    if not cost.priced or per_attempt_usd is None:
        return f"{calls} outside the journal per attempt; not priced ({cost.source})"
    return (
        f"{calls} outside the journal per attempt, {tokens(cost.usage.total_tokens)} tokens, "
        f"{usd(per_attempt_usd)} ({cost.source})"
    )


def _summary(snapshot: WatchSnapshot) -> str:
    n = len(snapshot.stuck)
    if not n:
        return f"nothing stuck at {snapshot.admin_url} ({_clock(snapshot.taken_at)})"
    burn = snapshot.burn_usd_per_hour
    return (
        f"{count(n, 'invocation')} stuck at {snapshot.admin_url} ({_clock(snapshot.taken_at)}): "
        f"{snapshot.paused} paused, {n - snapshot.paused} retrying"
        + (f"; burning {usd(burn)}/hour at {snapshot.price_model}" if burn else "")
    )


def format_watch(snapshot: WatchSnapshot) -> str:
    """The table and, under it, each invocation's error, mismatch, cost and ways out."""
    lines = [_summary(snapshot)]
    if not snapshot.stuck:
        return "\n".join(lines)
    header = (
        "INVOCATION",
        "SERVICE/HANDLER",
        "KEY",
        "STATUS",
        "REASON",
        "ATTEMPTS",
        "SINCE",
        "REPAID",
        "$/HOUR",
    )
    rows = [
        (
            s.invocation_id,
            f"{s.service}/{s.handler}",
            s.key or "-",
            s.status,
            s.reason,
            _attempts(s),
            s.since[:19].replace("T", " "),
            _money(s.repaid_usd),
            _burn(s),
        )
        for s in snapshot.stuck
    ]
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines.append("")
    for row in (header, *rows):
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    for s in snapshot.stuck:
        lines += ["", *_details(s)]
    return "\n".join(lines)


def _details(s: StuckInvocation) -> list[str]:
    first = s.last_error.strip().splitlines()[0] if s.last_error.strip() else "(no message)"
    out = [
        f"{s.invocation_id}  {s.service}/{s.handler}  on {s.deployment or '(not pinned)'}",
        f"  attempts    {_attempts(s)} ({s.attempts_source})",
        f"  last error  {s.error_code or '-'}: {first}",
    ]
    if s.mismatch is not None:
        m = s.mismatch
        out.append(
            f"  mismatch    at journal {m.where}: the journal holds {m.recorded}, the code attempted "
            f"{m.attempted}" + ("" if m.labels_agree else " (the message's labels are swapped)")
        )
    if s.journal_model_steps:
        out.append(f"  journaled   model steps {', '.join(s.journal_model_steps)}: replayed, not paid again")
    if s.per_attempt is not None:
        out.append(f"  per attempt {_cost_words(s.per_attempt, s.cost_per_attempt_usd)}")
        if s.repaid_calls is not None:
            out.append(
                f"  paid again  {s.repaid_calls:g} model calls, {_money(s.repaid_usd)}; "
                f"burn {_money(s.burn_usd_per_hour)}/hour at {s.attempts_per_hour or 0:.0f} attempts/hour"
            )
    else:
        out.append("  per attempt not known: give --profile (a sweep's or soak's --json of this handler)")
    if s.replay_verdict:
        out.append(f"  replay      {s.replay_verdict}")
    for way in s.ways_out:
        again = f"; runs again: {', '.join(way.runs_again)}" if way.runs_again else ""
        out.append(f"  way out     recover {s.invocation_id} --apply {way.name}: {way.title}{again}")
    return out


def watch_section(snapshot: WatchSnapshot) -> Section:
    """A snapshot of `paidtwice watch`: what was stuck, what it cost, and the ways out."""
    rows = [
        (
            esc(s.invocation_id),
            esc(f"{s.service}/{s.handler}"),
            esc(s.key or ""),
            esc(s.status),
            esc(s.reason),
            _attempts(s),
            esc(s.since),
            esc(
                f"{s.mismatch.where}: journal {s.mismatch.recorded}, code {s.mismatch.attempted}"
                if s.mismatch
                else (s.last_error.strip().splitlines() or [""])[0]
            ),
            _money(s.cost_per_attempt_usd),
            _money(s.repaid_usd),
            _burn(s),
            esc(", ".join(w.name for w in s.ways_out) or "-"),
        )
        for s in snapshot.stuck
    ]
    facts = html_table(
        ("figure", "read"),
        [
            ("admin API", esc(snapshot.admin_url)),
            ("read at", esc(_clock(snapshot.taken_at))),
            ("stuck", f"{len(snapshot.stuck)} ({snapshot.paused} paused)"),
            ("burn rate", f"{usd(snapshot.burn_usd_per_hour)}/hour"),
            ("prices", f"{esc(snapshot.price_model)}, as of {esc(snapshot.prices_as_of)}"),
            ("profile", esc(snapshot.profile or "none (per-attempt cost not known)")),
            *([("replay-checked against", esc(snapshot.app))] if snapshot.app else []),
        ],
    )
    table = html_table(
        (
            "invocation",
            "service/handler",
            "key",
            "status",
            "reason",
            "attempts",
            "failing since",
            "mismatch or last error",
            "$ per attempt",
            "$ paid again",
            "$ per hour",
            "ways out",
        ),
        rows,
    )
    body = facts + (table if rows else "<p>Nothing was stuck.</p>")
    return Section("watch", "Watch snapshot", body)
