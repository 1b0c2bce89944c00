"""Plain-text reports: the deck table, a journal by index, the model-call log, a mismatch, a curve."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence

from paidtwice._words import agent_name, count, signed
from paidtwice.engine import JournalEntry
from paidtwice.recover import RecoveryPlan
from paidtwice.report._behaviour import behaviour_lines
from paidtwice.report._coverage import coverage_lines, reached
from paidtwice.report._findings import landed, undecided_lines
from paidtwice.results import (
    ComparisonRecord,
    CurvePoint,
    CurveRecord,
    Mismatch,
    NodeKillRecord,
    PointResult,
    Record,
    RecoveryRecord,
    RunRecord,
    SweepMatrix,
)

__all__ = [
    "curve_x",
    "fit_lines",
    "format_attempt_log",
    "format_bill",
    "format_checks",
    "format_comparison",
    "format_crash_cost",
    "format_curve",
    "format_deck_table",
    "format_handler_summary",
    "format_journal",
    "format_mismatch",
    "format_model_log",
    "format_node_kill",
    "format_plan",
    "format_run",
    "format_walk",
    "table",
    "tokens",
    "usd",
]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, width: int | None = None) -> str:
    """A left-aligned text table with a rule under the header.

    With `width` (a terminal's columns), a table wider than that is fitted to it with no text lost: its
    widest columns' cells wrap onto more lines, each in its own column, every column keeping at least its
    longest word (and its header, where that fits); where even that is too wide, each row becomes a
    block, its first two cells on a line and the others below as "header: value", wrapped. Without
    `width`, or when it fits, one line per row as always (what a pipe and `--wide` get)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    room = None if width is None else width - 2 * (len(widths) - 1)
    if width is not None and room is not None and sum(widths) > room:
        columns = zip(headers, *rows, strict=True)
        words = [
            max((len(word) for cell in column for word in cell.split()), default=0) for column in columns
        ]
        floors = [min(w, max(_NARROWEST, n)) for w, n in zip(widths, words, strict=True)]
        if sum(floors) > room:
            return _stacked(headers, rows, width)
        # Whole headers where they fit: a wrapped header reads worse than a wrapped cell.
        headed = [max(f, len(h)) for f, h in zip(floors, headers, strict=True)]
        return _wrapped_table(headers, rows, _fitted(widths, headed if sum(headed) <= room else floors, room))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


_NARROWEST = 4
"""The fewest characters a wrapped column keeps."""


def _fitted(widths: Sequence[int], floors: Sequence[int], room: int) -> list[int]:
    """Column widths that add up to at most `room`, none below its floor: above their floors the widest
    columns share the rest equally (the largest cap that fits), and what the cap leaves over goes to them
    one by one."""
    cap = max(widths)
    while cap > 0 and sum(max(f, min(w, cap)) for f, w in zip(floors, widths, strict=True)) > room:
        cap -= 1
    fitted = [max(f, min(w, cap)) for f, w in zip(floors, widths, strict=True)]
    spare = room - sum(fitted)
    for i in sorted(range(len(widths)), key=lambda i: -widths[i]):
        if spare <= 0:
            break
        grow = min(spare, widths[i] - fitted[i])
        fitted[i] += grow
        spare -= grow
    return fitted


def _stacked(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> str:
    """Each row as a block: its first two cells on a line, then "header: value" for the others, wrapped."""
    lines = []
    for row in rows:
        lead, rest = row[:2], list(zip(headers[2:], row[2:], strict=True))
        lines += _cell_lines("  ".join(c for c in lead if c), width, indent="", then="    ")
        fields = "; ".join(f"{h}: {c}" for h, c in rest)
        lines += _cell_lines(fields, width, indent="    ", then="      ")
    return "\n".join(lines)


def _cell_lines(text: str, width: int, *, indent: str = "", then: str = "") -> list[str]:
    """Text in lines of at most `width`, broken between words where it can, inside one where not."""
    lines = textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=then,
        break_long_words=True,
        break_on_hyphens=False,
    )
    return lines or [""]


def _wrapped_table(headers: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]) -> str:
    def physical(cells: Sequence[str]) -> list[str]:
        wrapped = [_cell_lines(c, w) for c, w in zip(cells, widths, strict=True)]
        height = max(len(w) for w in wrapped)
        return [
            "  ".join(
                (w[i] if i < len(w) else "").ljust(n) for w, n in zip(wrapped, widths, strict=True)
            ).rstrip()
            for i in range(height)
        ]

    lines = [*physical(headers), "  ".join("-" * w for w in widths)]
    for row in rows:
        lines += physical(row)
    return "\n".join(lines)


def fit_lines(text: str, width: int | None, *, hang: str | None = None) -> str:
    """Prose lines longer than `width` wrapped at words, continuing under their own indent plus two (a line
    that starts unindented: under `hang`, when given); a line of a table made for that width already fits.
    None: as it is."""
    if width is None:
        return text
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        then = hang if hang is not None and not indent and len(hang) < width // 2 else indent + "  "
        out += textwrap.wrap(
            line.strip(),
            width,
            initial_indent=indent,
            subsequent_indent=then,
            break_long_words=True,
            break_on_hyphens=False,
        )
    return "\n".join(out)


def _verdict(ok: bool) -> str:
    return "matches" if ok else "DIFFERS"


def usd(amount: float) -> str:
    """Dollars with enough digits for a fraction of a cent ($0.000213), and two significant ones below a
    millionth ($0.000000047), so that a cost is never printed as zero."""
    if amount >= 1:
        return f"${amount:,.2f}"
    if 0 < amount < 1e-6:
        return f"${amount:.{1 - math.floor(math.log10(amount))}f}"
    return f"${amount:.6f}"


def tokens(count: int) -> str:
    return f"{count:,}"


def _paid(runs: Sequence[RunRecord]) -> str:
    """Model calls, tokens and dollars of some runs, and the dollars their crashes added."""
    calls = sum(r.model_calls for r in runs)
    total = sum(r.usage.total_tokens for r in runs)
    cost = sum(r.cost_usd for r in runs)
    extra = sum(r.extra_cost_usd for r in runs)
    return f"{count(calls, 'call')}, {tokens(total)} tok, {usd(cost)} (+{usd(extra)})"


def format_deck_table(records: Sequence[Record], *, width: int | None = None) -> str:
    """One row per run: the deck's figures beside the measured ones, a verdict, and what the model cost
    (calls, tokens, dollars, and in parentheses the dollars the crash added). With `width`, wrapped to it."""
    rows = []
    for record in records:
        if isinstance(record, RecoveryRecord):
            deck = "; ".join(c.deck for c in record.checks[:3])
            measured = "; ".join(c.measured for c in record.checks[:3])
            paid = _paid([record.stuck_run])
            rows.append((record.name, "walk", deck, measured, _verdict(record.matches), paid))
            continue
        if isinstance(record, CurveRecord):
            deck = " ".join(map(str, record.deck_model_calls)) + " model calls"
            measured = " ".join(str(p.model_calls) for p in record.points) + " model calls"
            rows.append((record.name, "curve", deck, measured, _verdict(record.matches), _paid(record.runs)))
            continue
        if isinstance(record, ComparisonRecord):
            claim = record.checks[0]
            # The runs are named after the row and what sets them apart: "naive", "request-id".
            sides = " vs ".join(r.name.removeprefix(record.name + "-") for r in record.runs)
            rows.append(
                (record.name, sides, claim.deck, claim.measured, _verdict(record.matches), _paid(record.runs))
            )
            continue
        main = [c for c in record.checks if c.figure in ("status", "model calls", "tool calls")]
        deck = ", ".join(f"{c.deck} {_short(c.figure)}".strip() for c in main)
        measured = ", ".join(f"{c.measured} {_short(c.figure)}".strip() for c in main)
        others = [c for c in record.checks if c not in main]
        differing = [c.figure for c in others if not c.ok]
        if others:
            deck += f" (+{len(others)} more)"
            measured += " (+" + (f"differs: {', '.join(differing)}" if differing else "all agree") + ")"
        rows.append(
            (
                record.name,
                f"{record.mode}/{record.stub}",
                deck,
                measured,
                _verdict(record.matches),
                _paid([record]),
            )
        )
    headers = ("run", "agent/stub", "deck", "measured", "verdict", "paid (+ by the crash)")
    return table(headers, rows, width=width)


def _short(figure: str) -> str:
    return {"status": "", "model calls": "model", "tool calls": "tool"}.get(figure, figure).strip()


def format_journal(entries: Sequence[JournalEntry], *, width: int | None = None) -> str:
    """The journal by index, as a replay reads it."""
    rows = [(str(e.index), e.type, e.name) for e in entries]
    return table(("index", "entry", "name"), rows, width=width)


def format_model_log(record: RunRecord, *, width: int | None = None) -> str:
    rows = []
    for line in record.model_log:
        delivered = {True: "delivered", False: "NEVER DELIVERED", None: "in flight"}[line.delivered]
        rows.append(
            (
                str(line.call),
                f"{line.at:.2f}s",
                str(line.turn),
                str(line.ask),
                line.answer,
                delivered,
                f"{tokens(line.usage.prompt_tokens)}/{tokens(line.usage.completion_tokens)}",
                usd(line.cost_usd) + (" extra" if line.extra else ""),
            )
        )
    headers = ("call", "at", "turn", "ask", "answer", "delivered", "tokens in/out", "paid")
    return table(headers, rows, width=width)


def format_bill(record: RunRecord) -> str:
    """What the run's model calls cost, and what the crash added, at the record's price model."""
    extra_calls = sum(1 for line in record.model_log if line.extra)
    lines = [
        f"{count(record.model_calls, 'model call')}: {tokens(record.usage.prompt_tokens)} tokens in, "
        f"{tokens(record.usage.completion_tokens)} out, {usd(record.cost_usd)} at {record.price_model} "
        f"(prices as of {record.prices_as_of})",
        f"the crash added {count(extra_calls, 'call')}: "
        f"{tokens(record.extra_usage.prompt_tokens)} tokens in, "
        f"{tokens(record.extra_usage.completion_tokens)} out, {usd(record.extra_cost_usd)}",
    ]
    if record.recovery_s is not None:
        wait = f" ({record.retry_wait_s:.2f} s of it the server's retry timer)" if record.retry_wait_s else ""
        lines.append(
            f"recovery: {record.recovery_s:.2f} s from the agent listening again to completion{wait}"
        )
        part = record.recovery_breakdown
        if part is not None and part.regain_s is not None:
            lines.append(f"regained what the kill lost {part.regain_s:.3f} s into the first replay")
    if record.bookings:
        lines.append(
            f"bookings: {count(record.bookings, 'request')}, {count(record.booking_effects, 'effect')}, "
            f"idempotency key: {record.idempotency_key or 'none'}"
        )
    return "\n".join(lines)


def format_attempt_log(record: RunRecord, *, width: int | None = None) -> str:
    rows = [
        (
            str(line.number),
            f"{line.at:.2f}s" if line.at is not None else "",
            "yes" if line.reached_agent else "no",
            str(line.retry_count) if line.retry_count is not None else "",
            line.outcome,
        )
        for line in record.attempt_log
    ]
    return table(("attempt", "at", "reached agent", "failed before (server)", "outcome"), rows, width=width)


def format_checks(record: RunRecord, *, width: int | None = None) -> str:
    rows = [(c.figure, c.deck, c.measured, "ok" if c.ok else "DIFFERS") for c in record.checks]
    return table(("figure", "deck", "measured", ""), rows, width=width)


def format_mismatch(mismatch: Mismatch) -> str:
    agree = (
        "yes: the message's labels agree with the journal"
        if mismatch.labels_agree
        else "NO: the message's labels are swapped; trust the index, not the labels"
    )
    lines = [
        f"at              {mismatch.where}",
        f"journal holds   {mismatch.recorded}   (read from sys_journal)",
        f"code attempted  {mismatch.attempted}",
        f"labels agree    {agree}",
        "message:",
        *("    " + line for line in mismatch.message.strip().splitlines()),
    ]
    return "\n".join(lines)


def format_run(record: RunRecord, *, width: int | None = None) -> str:
    """Everything `paidtwice run` shows for one run; with `width` (a terminal's columns), fitted to it."""
    parts = [
        f"{record.name}: {record.mode} agent, stub '{record.stub}', fault: {record.fault}",
        f"invocation {record.invocation_id}: {record.status}, {count(record.model_calls, 'model call')}, "
        f"{count(record.tool_calls, 'tool call')}, {count(record.attempts, 'attempt')}"
        + (f", down {record.down_time:.2f}s" if record.down_time is not None else ""),
        *_knobs(record),
        "",
        "Journal:",
        format_journal(record.journal, width=width),
        "",
        "Model calls:",
        format_model_log(record, width=width),
        "",
        "Deck vs measured:",
        format_checks(record, width=width),
        "",
        "Bill:",
        format_bill(record),
    ]
    if record.attempts > 1:
        parts += [
            "",
            f"Attempts: {record.attempts} in all; "
            f"{count(record.attempts_reached_agent, 'retry', 'retries')} reached the agent, "
            f"{record.attempts_while_down} found it down; {record.mismatches} ended in RT0016.",
            format_attempt_log(record, width=width),
        ]
    if record.mismatch is not None:
        parts += ["", "Mismatch:", format_mismatch(record.mismatch)]
    if record.node_kill is not None:
        parts += ["", format_node_kill(record.node_kill)]
    if record.answer is not None:
        parts += ["", f"Answer: {record.answer}"]
    return fit_lines("\n".join(parts), width)


def _knobs(record: RunRecord) -> list[str]:
    """The run's own settings beyond the deck's: explicit recovery, its retry policy, its server's flags."""
    said = []
    if record.explicit_recovery:
        said.append("explicit_recovery (a retry replays nothing; every ctx.run executes again)")
    if record.retry_policy:
        said.append(f"retry policy: {record.retry_policy}")
    if record.server_flags:
        said.append(f"on a server of its own with {', '.join(record.server_flags)}")
    if said and record.protocol_version is not None:
        said.append(f"service protocol v{record.protocol_version}")
    return [f"Knobs: {'; '.join(said)}"] if said else []


def format_node_kill(kill: NodeKillRecord) -> str:
    """Who led the invocation's partition, who took over, and how long the invocation stalled."""

    def seconds(value: float | None) -> str:
        return "never" if value is None else f"{value:.2f}s"

    return (
        f"Node kill: {kill.killed_node} led partition {kill.partition} and was SIGKILLed; {kill.took_over} "
        f"took over (reported after {kill.takeover_after:.2f}s).\n"
        f"Stall from the kill: {seconds(kill.resumed_after)} to the next attempt reaching the agent, "
        f"{seconds(kill.stall_to_next_entry)} to the next journal entry, "
        f"{seconds(kill.stall_to_completion)} to completion ({kill.pause_left_at_kill:.2f}s of the pause "
        f"were still to run); {kill.killed_node} answered again after {seconds(kill.node_back_after)}."
    )


def curve_x(point: CurvePoint) -> str:
    """A curve point's x: its restart delay, or its retry policy's attempts and what follows them."""
    if point.max_attempts is not None:
        return f"{point.max_attempts}, then {point.on_max_attempts}"
    return f"{point.delay:.2f}"


def format_curve(curve: CurveRecord, *, width: int | None = None) -> str:
    rows = []
    deck = list(curve.deck_model_calls) + [None] * len(curve.points)
    policy = curve.varies == "max attempts"
    for point, deck_calls in zip(curve.points, deck, strict=False):
        low, high = point.predicted_range
        exact = point.predicted_model_calls
        predicted = str(exact) if exact is not None else f"{low}-{high}?"
        rows.append(
            (
                curve_x(point),
                f"{point.down_time:.3f}",
                str(point.attempts_while_down),
                str(point.model_calls),
                predicted,
                str(deck_calls) if deck_calls is not None else "",
                "ok" if point.agrees else "DIFFERS",
                tokens(point.usage.total_tokens),
                f"{usd(point.cost_usd)} (+{usd(point.extra_cost_usd)})",
                *((point.outcome,) if policy else ()),
            )
        )
    first = "max attempts" if policy else "delay s"
    headers = (first, "down s", "tries while down", "paid calls", "predicted", "deck", "")
    return table((*headers, "tokens", "paid", *(("ended",) if policy else ())), rows, width=width)


def format_comparison(record: ComparisonRecord, *, width: int | None = None) -> str:
    """Two runs side by side: what each paid, how long each took to recover, what each booked. With
    `width`, fitted to it."""
    rows = []
    for run in record.runs:
        replay = (
            f"{run.recovery_s - run.retry_wait_s:.2f}"
            if run.recovery_s is not None and run.retry_wait_s is not None
            else "-"
        )
        part = run.recovery_breakdown
        regain = f"{part.regain_s:.3f}" if part is not None and part.regain_s is not None else "-"
        rows.append(
            (
                run.name,
                run.status,
                str(run.model_calls),
                tokens(run.usage.total_tokens),
                usd(run.cost_usd),
                usd(run.extra_cost_usd),
                f"{run.recovery_s:.2f}" if run.recovery_s is not None else "-",
                f"{run.retry_wait_s:.2f}" if run.retry_wait_s is not None else "-",
                replay,
                regain,
                f"{run.booking_effects} ({run.idempotency_key})" if run.idempotency_key else "-",
            )
        )
    headers = (
        "run",
        "status",
        "model calls",
        "tokens",
        "paid",
        "crash added",
        "recovery s",
        "retry wait s",
        "replay s",
        "regain s",
        "bookings (key)",
    )
    lines = [f"{record.name}: {record.deck_says}", table(headers, rows, width=width)]
    if record.recovery_difference_s is not None and record.figure == "recovery":
        lines.append(
            f"recovery difference: {record.recovery_difference_s:.3f} s from the agent listening again, "
            f"{record.difference:.3f} s from the first replay (the retry timer's jitter left out)"
        )
        if record.regain_difference_s is not None:
            lines.append(f"regain difference: {record.regain_difference_s:.3f} s (the claim is judged on it)")
        lines.extend(_recovery_line(run) for run in record.runs if run.recovery_breakdown is not None)
    if record.figure == "mismatch behaviour":
        lines.extend(behaviour_lines(run) for run in record.runs)
    checks = [(c.figure, c.deck, c.measured, "ok" if c.ok else "DIFFERS") for c in record.checks]
    lines += ["", table(("figure", "claimed", "measured", ""), checks, width=width)]
    return fit_lines("\n".join(lines), width)


def _recovery_line(run: RunRecord) -> str:
    """Where one run's recovery went after its first replay, in one line."""
    part = run.recovery_breakdown
    if part is None or run.recovery_s is None or run.retry_wait_s is None:
        return f"{run.name}: no recovery measured"
    return (
        f"{run.name}: {run.recovery_s - run.retry_wait_s:.3f} s after the first replay = "
        f"{count(part.model_calls, 'model call')} {part.model_wait_s:.3f} s + "
        f"{count(part.journal_round_trips, 'journal round trip')} {part.journal_wait_s:.3f} s + "
        f"the rest {part.other_s:.3f} s"
    )


def format_walk(record: RecoveryRecord, *, width: int | None = None) -> str:
    """A recovery walk: each step with its admin status and measured cost, then the admin log. With
    `width`, fitted to it."""
    rows = [
        (
            str(i),
            step.action,
            str(step.status),
            step.outcome,
            str(step.model_calls),
            str(step.tool_calls),
            tokens(step.usage.total_tokens),
            usd(step.cost_usd),
        )
        for i, step in enumerate(record.steps, start=1)
    ]
    parts = [
        f"{record.name}: stuck invocation {record.invocation_id} (from {record.stuck_run.name}, "
        f"{record.stuck_run.status} after {count(record.stuck_run.model_calls, 'model call')}); "
        f"fix registered as {record.fix_deployment}",
        "",
        table(
            ("step", "action", "http", "what followed", "model", "tool", "tokens", "paid"), rows, width=width
        ),
        f"the walk paid {usd(record.cost_usd)} at {record.price_model} ({tokens(record.usage.prompt_tokens)} "
        f"tokens in, {tokens(record.usage.completion_tokens)} out), beyond the stuck run's "
        f"{usd(record.stuck_run.cost_usd)}",
        "",
        "Admin API log:",
        *(f"  {c.method} {c.path} -> {c.status} {c.answer[:100]}" for c in record.admin_log),
        "",
        "Deck vs measured:",
        table(
            ("figure", "deck", "measured", ""),
            [(c.figure, c.deck, c.measured, "ok" if c.ok else "DIFFERS") for c in record.checks],
            width=width,
        ),
    ]
    if record.mismatch is not None:
        parts += ["", "Mismatch on the fix:", format_mismatch(record.mismatch)]
    return fit_lines("\n".join(parts), width)


def format_plan(plan: RecoveryPlan) -> str:
    """The ways out of a stuck invocation, with what each keeps and pays again."""
    parts = [
        f"{plan.invocation_id} ({plan.target}) is {plan.status}, pinned to {plan.pinned_deployment}; "
        f"journal of {count(len(plan.journal), 'entry', 'entries')}",
    ]
    if plan.failure is not None:
        parts.append(f"last failure: {plan.failure.code} ({plan.failure.source})")
        if plan.failure.mismatch is not None:
            m = plan.failure.mismatch
            parts.append(f"  mismatch at {m.where}: journal has {m.recorded}, code attempted {m.attempted}")
    for way in plan.ways:
        parts += [
            "",
            f"--apply {way.name}: {way.title}",
            f"    keeps:      {way.keeps}",
            f"    runs again: {', '.join(way.runs_again) or 'nothing recorded'}",
            f"    replay:     {way.replay}",
        ]
    parts += [
        "",
        "paidtwice never force-overwrites a deployment: that swaps the code under every invocation pinned to",
        "it, which is for local development. In production, register the fix as a new deployment and pass",
        "--deployment to resume onto it.",
    ]
    return "\n".join(parts)


def format_sweep(matrix: SweepMatrix, *, width: int | None = None) -> str:
    """One sweep matrix: a row per crash point in time order, then what survived and what was paid again.
    With `width` (a terminal's columns), every line fits it: the table's cells wrap, the prose wraps."""
    clean = matrix.clean
    steps = ", ".join(f"{name} x{n}" for name, n in clean.step_runs) or "none"
    head = (
        f"{agent_name(matrix.mode)}, script {matrix.script}: "
        f"clean run {count(clean.model_calls, 'model call')} "
        f"({tokens(clean.usage.total_tokens)} tokens, {usd(clean.cost_usd)}), "
        f"steps {steps}, {count(len(clean.journal), 'journal entry', 'journal entries')}"
    )
    rows = []
    for point in matrix.points:
        if point.status != "completed":
            answer = "-"
        else:
            answer = "same" if point.answer_matches else "DIFFERENT"
        steps_run = ", ".join(f"{name} x{n}" for name, n in point.step_runs) or "none run"
        rows.append(
            [
                str(point.order),
                point.crash_point,
                point.status,
                answer,
                signed(point.extra_model_calls),
                f"{signed(point.extra_step_runs)} ({steps_run})",
                str(point.attempts),
                str(point.mismatches),
                landed(point),
                tokens(point.usage.total_tokens),
                f"{'+' if point.extra_cost_usd >= 0 else '-'}{usd(abs(point.extra_cost_usd))}",
                f"{point.covers:.1%}",
            ]
        )
    headers = [
        "#",
        "crash point",
        "status",
        "answer",
        "model calls",
        "step runs",
        "attempts",
        "RT0016",
        "landed",
        "tokens",
        "extra $",
        "of run time",
    ]
    shorter = [
        f"  #{point.order} took a shorter path than the clean run: {path}"
        for point in matrix.points
        if (path := point.shorter_path(clean)) is not None
    ] + [
        f"  #{point.order} {path}" for point in matrix.points if (path := point.other_path(clean)) is not None
    ]
    unplaced = undecided_lines(matrix.points)
    unanswered = [f"  #{point.order}: {reason}" for point in matrix.points for reason in point.unanswered]
    if unanswered:
        unanswered.insert(0, "calls no turn of the script answers (the stub answered each with an error):")
    price = matrix.points[0].price_model if matrix.points else ""
    cost = (
        f"expected extra cost of one crash at a random moment: {usd(matrix.expected_crash_cost_usd)} "
        f"at {price} (each point's extra $ weighted by its share of the clean run's time)"
    )
    in_force = dict.fromkeys(p.retry_policy for p in matrix.points if p.retry_policy)
    policies = [f"retry policy in force: {policy}" for policy in in_force]
    lines = [head, table(headers, rows, width=width), *shorter, *unplaced, *unanswered]
    summary = [*matrix.summary(), cost, *policies]
    return fit_lines("\n".join([*lines, *(f"  {line}" for line in summary)]), width)


def format_crash_cost(
    matrices: Sequence[SweepMatrix], crash_rate: float | None = None, *, width: int | None = None
) -> str:
    """Per script, each mode's expected extra dollars of one crash at a uniformly random moment, side by
    side; with `crash_rate` (crashes per 1,000 invocations), also per 1,000 invocations."""
    modes = list(dict.fromkeys(m.mode for m in matrices))
    scripts = list(dict.fromkeys(m.script for m in matrices))
    by = {(m.mode, m.script): m for m in matrices}
    headers = ["script", *(f"{mode}: one crash" for mode in modes)]
    if crash_rate is not None:
        headers += [f"{mode}: per 1,000 at {crash_rate:g} crashes" for mode in modes]
    rows = []
    for script in scripts:
        row = [script]
        found = [by.get((mode, script)) for mode in modes]
        row += [usd(m.expected_crash_cost_usd) if m else "-" for m in found]
        if crash_rate is not None:
            row += [usd(m.cost_per_thousand(crash_rate)) if m else "-" for m in found]
        rows.append(row)
    head = fit_lines("Expected extra cost of a crash at a uniformly random moment of a clean run:", width)
    return head + "\n" + table(headers, rows, width=width)


def format_handler_summary(points: Sequence[PointResult]) -> str:
    """A line per swept handler (per mode, for the deck's agent): its points, how many pay twice for
    completed work and how many kills missed (points paidtwice cannot decide)."""
    lines, covered = [], reached(points)
    for name in dict.fromkeys(p.swept for p in points):
        mine = [p for p in points if p.swept == name]
        twice = [p for p in mine if p.pays_twice]
        missed = [p for p in mine if not p.confirmed]
        scripts = ", ".join(dict.fromkeys(p.script for p in mine))
        verdict = f"{len(twice)} pay twice" if twice else "none pays twice"
        line = f"{name}: {count(len(mine), 'crash point')} ({scripts}), {verdict}"
        if twice:
            worst = max(p.calls_paid_again for p in mine)
            line += f"; at most {count(worst, 'model call')} paid again outside flight"
            by = sorted({h for p in twice for h, n in p.paid_again_by if n})
            if set(by) - {name}:  # in its invocation tree: said by whom
                line += f" (asked again by {', '.join(by)})"
        if missed:
            line += f"; {count(len(missed), 'kill')} missed (undecided)"
        if unplaced := [p for p in mine if p.undecided]:
            line += f"; {count(len(unplaced), 'point')} undecided (a model call the wire could not place)"
        if mine[0].input is not None:
            line += f"; input {json.dumps(mine[0].input)}"
        lines += [line, *(f"  {c}" for c in coverage_lines(covered[name]))]
    return "\n".join(lines)
