"""The replay-check's part of the HTML report: a row per journal with its verdict, then each journal that
does not simply replay, a divergence as the recorded and attempted commands side by side."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from paidtwice._words import count
from paidtwice.report._html_parts import (
    GREEN,
    GREY,
    PURPLE,
    SKY,
    VERMILLION,
    YELLOW,
    Section,
    esc,
    html_table,
    slug,
)
from paidtwice.results import ReplayResult

__all__ = ["REPLAY_SECTION", "replay_check_section"]

REPLAY_SECTION = "replay-check"
"""The id of the replay-check section."""

_VERDICTS: dict[str, tuple[str, str, str]] = {
    # verdict -> (badge colour, symbol, what it means for a deploy)
    "replays": (GREEN, "✓", "the code replays the journal"),
    "continues": (SKY, "→", "the code replays the journal, then goes on live"),
    "diverges": (VERMILLION, "✗", "a resume on this code meets a journal mismatch (RT0016)"),
    "fails": (PURPLE, "✗", "the handler or the SDK failed during the replay"),
    "undecided": (YELLOW, "?", "the replay could not tell"),
}


def _verdict_words(result: ReplayResult) -> str:
    if result.verdict == "diverges":
        return f"diverges at {result.where}"
    return result.verdict


def _verdict_badge(result: ReplayResult) -> str:
    colour, symbol, meaning = _VERDICTS.get(result.verdict, (GREY, "?", result.verdict))
    return (
        f'<span class="badge" style="border-color:{colour};box-shadow:inset 5px 0 0 {colour}" '
        f'title="{esc(meaning)}">{symbol} {esc(_verdict_words(result))}</span>'
    )


def _journal_name(result: ReplayResult) -> str:
    return result.path or result.invocation_id


def _replay_anchor(number: int, result: ReplayResult) -> str:
    return slug("replay", number, _journal_name(result))


def _outside_words(result: ReplayResult) -> str:
    during = result.calls_during_replay
    past = len(result.outside_calls) - during
    words = f"{during} paid again on every replay" if during else "0"
    if past:
        words += f"; {past} past the journal's end"
    return words


def _sequences(result: ReplayResult) -> str:
    """The journal's commands against the code's, side by side, each by its journal entry index (the command
    index beside it), up to where they part."""
    rows = []
    # Of equal length unless the journal ends before the index the SDK names: show the gap, drop nothing.
    pairs = itertools.zip_longest(result.recorded_commands, result.attempted_commands, fillvalue="(none)")
    for index, (recorded, attempted) in enumerate(pairs):
        parts = recorded != attempted or index == result.command_index
        mark = '<span class="bad">≠ they part here</span>' if parts else "= same"
        entry = result.command_entries[index] if index < len(result.command_entries) else None
        rows.append(
            f'<tr class="{"parts" if parts else "same"}"><td>{"" if entry is None else entry}</td>'
            f"<td>{index}</td>"
            f'<td class="recorded"><code>{esc(recorded)}</code></td>'
            f'<td class="attempted"><code>{esc(attempted)}</code></td><td>{mark}</td></tr>'
        )
    return (
        '<table class="sequences"><thead><tr><th>entry</th><th>command index</th>'
        "<th>recorded (the journal)</th><th>attempted (the code)</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _replay_details(number: int, result: ReplayResult) -> str:
    parts = [
        f'<div class="journal-check" id="{_replay_anchor(number, result)}">'
        f"<h3>{esc(_journal_name(result))}: {_verdict_badge(result)}</h3>"
        f"<p>{esc(result.service)}/{esc(result.handler)}, invocation "
        f"<code>{esc(result.invocation_id)}</code>, "
        f"{count(result.entries, 'entry', 'entries')}; seed: {esc(result.seed)}.</p>"
    ]
    if result.verdict == "diverges":
        agree = (
            '<span class="ok">they agree</span> with the journal'
            if result.labels_agree
            else '<span class="bad">they DISAGREE</span> with the journal (the SDK swapped them): trust the '
            "index and this table"
        )
        parts.append(
            '<div class="divergence"><h4>Where the code parts from the journal</h4>'
            + _sequences(result)
            + f"<p>The SDK's message labels: {agree}.</p></div>"
        )
    if result.next_command:
        parts.append(f"<p>Next, live: <code>{esc(result.next_command)}</code></p>")
    if result.message and result.verdict != "continues":
        parts.append(f"<pre>{esc(result.message.strip())}</pre>")
    if result.outside_calls:
        rows = [
            (
                str(c.number),
                str(c.turn),
                str(c.ask),
                "during the replay: paid again on every replay"
                if c.during_replay
                else "past the journal's end",
                f"<code>{esc(c.answer)}</code>",
            )
            for c in result.outside_calls
        ]
        parts.append(
            "<h4>Model calls outside the journal (answered by the stub)</h4>"
            + html_table(("call", "turn", "ask", "when", "the stub answered"), rows)
        )
    parts.append(f"<p>Past the journal's end: {esc(result.past_end)}.</p></div>")
    return "".join(parts)


def replay_check_section(results: Sequence[ReplayResult]) -> Section:
    """One row per journal with its verdict and its calls outside the journal; then each journal that does
    not simply replay, a divergence as the recorded and attempted commands side by side."""
    bad = [r for r in results if not r.ok]
    found = [r.verdict for r in results]
    counts = ", ".join(f"{found.count(v)} {v}" for v in dict.fromkeys(found))
    if bad:
        diverging = sum(1 for r in bad if r.verdict == "diverges")
        verb, those = ("diverges", "that invocation") if diverging == 1 else ("diverge", "those invocations")
        why = (
            f" {diverging} {verb}: resuming {those} on it meets a journal mismatch (RT0016)."
            if diverging
            else ""
        )
        if len(bad) > diverging:
            why += f" {len(bad) - diverging} could not be replayed to a verdict (fails or undecided)."
        verb = "does not replay" if len(bad) == 1 else "do not replay"
        head = (
            f'<p class="bad"><b>✗ {len(bad)} of {count(len(results), "journal")} {verb} on this code</b> '
            f"({esc(counts)}).{why}</p>"
        )
    else:
        every = "The journal replays" if len(results) == 1 else f"All {len(results)} journals replay"
        head = f'<p class="ok"><b>✓ {every} on this code</b> ({esc(counts)}).</p>'
    rows = []
    for number, result in enumerate(results, start=1):
        anchor = _replay_anchor(number, result)
        plain = result.verdict == "replays" and not result.outside_calls
        name = (
            esc(_journal_name(result)) if plain else f'<a href="#{anchor}">{esc(_journal_name(result))}</a>'
        )
        if result.verdict == "diverges":
            what = (
                f"<code>{esc(result.recorded)}</code> recorded, "
                f"<code>{esc(result.attempted)}</code> attempted"
            )
        elif result.verdict == "continues":
            what = f"next, live: <code>{esc(result.next_command)}</code>"
        elif result.verdict in ("fails", "undecided"):
            what = esc(result.message.splitlines()[0] if result.message else "")
        else:
            what = ""
        rows.append(
            f'<tr data-verdict="{esc(result.verdict)}"><td>{name}</td><td>{esc(result.service)}/'
            f"{esc(result.handler)}</td><td>{result.entries}</td><td>{_verdict_badge(result)}</td>"
            f"<td>{esc(_outside_words(result))}</td><td>{what}</td></tr>"
        )
    legend = "".join(
        f'<span class="badge" style="border-color:{c};box-shadow:inset 5px 0 0 {c}">{sym} {esc(v)}</span> '
        f"{esc(meaning)}. "
        for v, (c, sym, meaning) in _VERDICTS.items()
    )
    table = (
        '<table class="replay-check"><thead><tr><th>journal</th><th>service/handler</th><th>entries</th>'
        "<th>verdict</th><th>model calls outside the journal</th><th>what</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    details = "".join(
        _replay_details(n, r)
        for n, r in enumerate(results, start=1)
        if not (r.verdict == "replays" and not r.outside_calls)
    )
    return Section(REPLAY_SECTION, "Replay check", head + table + f'<p class="legend">{legend}</p>' + details)
