"""The deck's part of the HTML report: the deck-against-measured table, then a section per row (a run, a
restart-delay curve, a comparison, a recovery walk), each run with its timeline, journal, attempts, model
calls and mismatch."""

from __future__ import annotations

from collections.abc import Sequence

from paidtwice._words import count
from paidtwice.engine import AdminCall, JournalEntry
from paidtwice.report._html_parts import (
    OUTCOMES,
    PURPLE,
    Section,
    bill_words,
    esc,
    html_table,
    slug,
    verdict_mark,
)
from paidtwice.report._html_timeline import LEGEND, journal_at, timeline_of, timeline_svg
from paidtwice.report._plot import curve_svg_markup
from paidtwice.report._text import curve_x, tokens, usd
from paidtwice.results import (
    AttemptLine,
    Check,
    ComparisonRecord,
    CurveRecord,
    Mismatch,
    ModelLogLine,
    Record,
    RecoveryRecord,
    RunRecord,
)

__all__ = ["deck_sections", "mismatch_panel", "run_body"]


def _journal_table(journal: Sequence[JournalEntry], started_at: float | None) -> str:
    rows = []
    for entry in journal:
        at = journal_at(started_at, entry)
        rows.append(
            (str(entry.index), esc(entry.type), esc(entry.name), f"{at:.3f}" if at is not None else "")
        )
    return html_table(("index", "entry", "name", "appended (s)"), rows, cls="journal")


def _model_table(log: Sequence[ModelLogLine]) -> str:
    rows = []
    for line in log:
        state = {
            True: "delivered",
            False: '<span class="bad">cut off: never delivered</span>',
            None: "in flight",
        }
        rows.append(
            (
                str(line.call),
                f"{line.at:.3f}",
                f"{line.finished:.3f}" if line.finished is not None else "",
                str(line.turn),
                str(line.ask),
                esc(line.answer),
                state[line.delivered],
                esc(bill_words(line)),
            )
        )
    return html_table(
        ("call", "asked (s)", "answered (s)", "turn", "ask", "answer", "delivered", "bill"), rows
    )


def _attempt_table(log: Sequence[AttemptLine]) -> str:
    rows = []
    for line in log:
        fill, letter, words = OUTCOMES.get(line.outcome, (PURPLE, "E", line.outcome))
        rows.append(
            (
                str(line.number),
                f"{line.at:.3f}" if line.at is not None else "",
                f"{line.ended:.3f}" if line.ended is not None else "",
                "yes" if line.reached_agent else "no",
                f'<span class="key" style="background:{fill}">{letter}</span> {esc(words)}',
            )
        )
    return html_table(("attempt", "started (s)", "ended (s)", "reached agent", "outcome"), rows)


def mismatch_panel(mismatch: Mismatch) -> str:
    """The mismatch read against the journal: index, recorded against attempted, whether the labels agree."""
    agree = (
        '<span class="ok">yes</span>: the message\'s labels agree with the journal'
        if mismatch.labels_agree
        else '<span class="bad">NO</span>: the message\'s labels are swapped; trust the index, not the labels'
    )
    return (
        '<div class="mismatch"><h4>Journal mismatch (RT0016)</h4>'
        + html_table(
            ("journal entry", "the journal holds", "the code attempted", "labels agree"),
            [(esc(mismatch.where), esc(mismatch.recorded), esc(mismatch.attempted), agree)],
        )
        + f"<pre>{esc(mismatch.message.strip())}</pre></div>"
    )


def _admin_table(log: Sequence[AdminCall]) -> str:
    first = log[0].at if log else 0.0
    rows = [
        (
            f"{c.at - first:.3f}",
            esc(c.method),
            f"<code>{esc(c.path)}</code>",
            str(c.status),
            esc(c.answer[:300]),
        )
        for c in log
    ]
    return html_table(("at (s)", "method", "path", "status", "answer"), rows, cls="admin")


def _checks_table(checks: Sequence[Check]) -> str:
    rows = [(esc(c.figure), esc(c.deck), esc(c.measured), verdict_mark(c.ok)) for c in checks]
    return html_table(("figure", "deck", "measured", "verdict"), rows)


def run_body(record: RunRecord, anchor: str, *, judged: bool = True) -> str:
    """Everything about one run: what it was, its timeline, the deck's figures, its logs and mismatch.

    A curve's run is not `judged` against its base row's figures: the curve table judges it.
    """
    down = f", down {record.down_time:.2f} s" if record.down_time is not None else ""
    verdict = verdict_mark(record.matches) if judged else "Judged in the curve's table above."
    parts = [
        f"<p>{esc(record.mode)} agent, stub <b>{esc(record.stub)}</b>, fault: {esc(record.fault)}. "
        f"Invocation "
        f"<code>{esc(record.invocation_id)}</code>: <b>{esc(record.status)}</b>, "
        f"{count(record.model_calls, 'model call')}, {count(record.tool_calls, 'tool call')}, "
        f"{count(record.attempts, 'attempt')}, {count(record.mismatches, 'mismatch', 'mismatches')}"
        f"{down}. {verdict}</p>",
        timeline_svg(timeline_of(record, anchor)),
    ]
    if record.checks and judged:
        parts += ["<h4>Deck against measured</h4>", _checks_table(record.checks)]
    if record.mismatch is not None:
        parts.append(mismatch_panel(record.mismatch))
    parts += [
        '<div class="cols"><div>',
        "<h4>Journal by index</h4>",
        _journal_table(record.journal, record.started_at),
        "</div><div>",
        "<h4>Attempts</h4>",
        _attempt_table(record.attempt_log),
        "</div></div>",
        "<h4>Model calls</h4>",
        _model_table(record.model_log) if record.model_log else "<p>No model call was made.</p>",
    ]
    if record.answer is not None:
        parts.append(f"<p>Answer: <q>{esc(record.answer)}</q></p>")
    return "".join(parts)


def _runs_of(record: Record) -> list[tuple[RunRecord, str]]:
    """Every run a deck row made, with its anchor."""
    if isinstance(record, RunRecord):
        return [(record, slug("run", record.name))]
    if isinstance(record, CurveRecord | ComparisonRecord):
        return [(run, slug("run", record.name, i)) for i, run in enumerate(record.runs, start=1)]
    return [(record.stuck_run, slug("run", record.name, "stuck"))]


def _paid(record: Record) -> str:
    """What the row's runs paid the model (calls, tokens, dollars) and, in parentheses, what the crash
    added: the terminal's deck table's last column."""
    runs = [run for run, _ in _runs_of(record)]
    calls = sum(r.model_calls for r in runs)
    spent = sum(r.usage.total_tokens for r in runs)
    cost = sum(r.cost_usd for r in runs)
    extra = sum(r.extra_cost_usd for r in runs)
    return f"{count(calls, 'call')}, {tokens(spent)} tokens, {usd(cost)} (+{usd(extra)})"


def _deck_row(record: Record) -> tuple[str, ...]:
    return (*_deck_figures(record), _paid(record))


def _deck_figures(record: Record) -> tuple[str, ...]:
    link = f'<a href="#{slug("row", record.name)}">{esc(record.name)}</a>'
    if isinstance(record, CurveRecord):
        deck = " ".join(map(str, record.deck_model_calls)) + " model calls"
        measured = " ".join(str(p.model_calls) for p in record.points) + " model calls"
        return (link, "curve", esc(deck), esc(measured), verdict_mark(record.matches))
    if isinstance(record, RecoveryRecord):
        deck = "; ".join(c.deck for c in record.checks)
        measured = "; ".join(c.measured for c in record.checks)
        return (link, "recovery walk", esc(deck), esc(measured), verdict_mark(record.matches))
    if isinstance(record, ComparisonRecord):
        claim = record.checks[0] if record.checks else None
        measured = claim.measured if claim is not None else ""
        return (
            link,
            f"comparison: {esc(record.figure)}",
            esc(record.deck_says),
            esc(measured),
            verdict_mark(record.matches),
        )
    differing = [c.figure for c in record.checks if not c.ok]
    deck = "; ".join(f"{c.figure}: {c.deck}" for c in record.checks)
    measured = "; ".join(f"{c.figure}: {c.measured}" for c in record.checks)
    if differing:
        measured += f" (differs: {', '.join(differing)})"
    return (
        link,
        f"{esc(record.mode)}/{esc(record.stub)}",
        esc(deck),
        esc(measured),
        verdict_mark(record.matches),
    )


def _comparison_body(comparison: ComparisonRecord) -> str:
    """The claim against what was measured, then each of the two runs with its own timeline."""
    parts = [f"<p>{esc(comparison.deck_says)}</p>", _checks_table(comparison.checks)]
    for i, run in enumerate(comparison.runs, start=1):
        parts += [f"<h4>Run {i}: {esc(run.name)}</h4>", run_body(run, slug("run", comparison.name, i))]
    return "".join(parts)


def _curve_body(curve: CurveRecord) -> str:
    rows = []
    deck = list(curve.deck_model_calls) + [None] * len(curve.points)
    for i, (point, want) in enumerate(zip(curve.points, deck, strict=False), start=1):
        low, high = point.predicted_range
        predicted = (
            str(point.predicted_model_calls) if point.predicted_model_calls is not None else f"{low}-{high}?"
        )
        x = curve_x(point) if point.max_attempts is not None else f"{point.delay:g}"
        rows.append(
            (
                f'<a href="#{slug("run", curve.name, i)}">{esc(x)}</a>',
                f"{point.down_time:.3f}",
                str(point.attempts_while_down),
                str(point.model_calls),
                predicted,
                str(want) if want is not None else "",
                verdict_mark(point.agrees),
                esc(point.outcome or point.status),
            )
        )
    policy = curve.varies == "max attempts"
    first = "max attempts, then" if policy else "delay (s)"
    parts = [
        f'<div class="plot">{curve_svg_markup(curve)}</div>',
        html_table(
            (first, "down (s)", "attempts while down", "paid calls", "predicted", "deck", "", "ended"),
            rows,
        ),
    ]
    for point, (run, anchor) in zip(curve.points, _runs_of(curve), strict=True):
        title = f"max_attempts {esc(curve_x(point))}" if policy else f"Delay {run.restart_delay:g} s"
        parts.append(f"<h4>{title}</h4>{run_body(run, anchor, judged=False)}")
    return "".join(parts)


def _walk_body(walk: RecoveryRecord) -> str:
    steps = [
        (
            str(i),
            esc(s.action),
            str(s.status),
            esc(s.outcome),
            str(s.model_calls),
            str(s.tool_calls),
            f"<code>{esc(s.invocation_id)}</code>",
        )
        for i, s in enumerate(walk.steps, start=1)
    ]
    stuck = walk.stuck_run
    predicted = (
        f"index {walk.predicted_mismatch_at}" if walk.predicted_mismatch_at is not None else "no mismatch"
    )
    parts = [
        f"<p>Stuck invocation <code>{esc(walk.invocation_id)}</code> (from {esc(stuck.name)}: "
        f"{esc(stuck.status)} after {stuck.model_calls} model calls); fix registered as "
        f"<code>{esc(walk.fix_deployment)}</code>. Before the resume, <code>paidtwice recover</code> "
        f"predicted: {esc(predicted)}.</p>",
        "<h4>Steps of the walk</h4>",
        html_table(
            ("step", "action", "HTTP", "what followed", "model calls", "tool calls", "invocation"), steps
        ),
        "<h4>Deck against measured</h4>",
        _checks_table(walk.checks),
    ]
    if walk.mismatch is not None:
        parts.append(mismatch_panel(walk.mismatch))
    parts += ["<h4>Admin API log of the recovery walk</h4>", _admin_table(walk.admin_log)]
    ((run, anchor),) = _runs_of(walk)
    parts.append(f"<h4>The run that left it stuck: {esc(run.name)}</h4>{run_body(run, anchor)}")
    return "".join(parts)


def _differences(record: Record) -> str:
    if isinstance(record, CurveRecord):
        wrong = [p for p in record.points if not p.agrees]
        deck = " ".join(map(str, record.deck_model_calls))
        measured = " ".join(str(p.model_calls) for p in record.points)
        return esc(
            f"paid calls {measured} against the deck's {deck}; "
            f"{count(len(wrong), 'point')} {'differs' if len(wrong) == 1 else 'differ'} from the prediction"
        )
    checks = [c for c in record.checks if not c.ok]
    return "; ".join(
        f"{esc(c.figure)}: deck {esc(c.deck)}, measured <b>{esc(c.measured)}</b>" for c in checks
    )


def deck_sections(records: Sequence[Record]) -> list[Section]:
    """The deck-against-measured table with verdicts, then a section per row."""
    failed = [r for r in records if not r.matches]
    if failed:
        # What a reader of a failed CI run wants first: which rows, and which of their figures.
        items = "".join(
            f'<li><a href="#{slug("row", r.name)}">{esc(r.name)}</a>: {_differences(r)}</li>' for r in failed
        )
        head = f'<p class="bad"><b>{len(failed)} of {len(records)} rows differ from the deck:</b></p>'
        head += f"<ul>{items}</ul>"
    else:
        head = f'<p class="ok"><b>All {len(records)} rows match the deck.</b></p>'
    sections = [
        Section(
            "deck",
            "Deck against measured",
            head
            + html_table(
                (
                    "run",
                    "agent/stub",
                    "the deck reports",
                    "measured",
                    "verdict",
                    "model paid (+ by the crash)",
                ),
                map(_deck_row, records),
            )
            + LEGEND,
        )
    ]
    for record in records:
        anchor = slug("row", record.name)
        if isinstance(record, RunRecord):
            body = run_body(record, slug("run", record.name))
        elif isinstance(record, CurveRecord):
            body = _curve_body(record)
        elif isinstance(record, ComparisonRecord):
            body = _comparison_body(record)
        else:
            body = _walk_body(record)
        sections.append(Section(anchor, record.name, body))
    return sections
