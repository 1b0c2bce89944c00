"""One self-contained HTML report of a deck, a run, a sweep, a soak or a replay-check.

The page needs nothing but itself: CSS and SVG are inline, there is no script and no request, so it opens
from disk, attaches to a CI run or a pull request, and prints to PDF. Colours are Okabe and Ito's palette
(distinguishable with the common colour-vision deficiencies) and every colour's meaning is also in words:
a legend, a letter or label on the mark, a tooltip, and the tables beside each plot.

A page is a list of `Section`s; each kind of result has one function that makes its sections:
`deck_sections` (`_html_deck`), `sweep_sections` (`_html_sweep`), `replay_check_section` (`_html_replay`) and
`soak_section` (here). The timeline they share is in `_html_timeline`, the palette and the small pieces in
`_html_parts`; this module puts the page around the sections.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from paidtwice.report._html_deck import deck_sections
from paidtwice.report._html_parts import (
    Section,
    esc,
    html_table,
)
from paidtwice.report._html_replay import REPLAY_SECTION, replay_check_section
from paidtwice.report._html_sweep import sweep_sections
from paidtwice.report._text import tokens, usd
from paidtwice.results import SoakRecord

__all__ = [
    "Section",
    "deck_sections",
    "html_page",
    "replay_check_section",
    "soak_section",
    "sweep_sections",
    "write_html",
]


def soak_section(record: SoakRecord) -> Section:
    """A soak's figures, with its verdict (and what is wrong, when something is), its bill and each kill."""
    wrong = "; ".join(record.problems()) or "not every invocation completed"
    verdict = (
        '<span class="ok">✓ nothing lost, extra calls within the bound</span>'
        if record.ok
        else f'<span class="bad">✗ NOT OK: {esc(wrong)}</span>'
    )
    body = [f"<p>{verdict}</p>", html_table(("figure", "measured"), _soak_figures(record))]
    body += _agent_kills(record) + _node_kills(record)
    return Section("soak", "Soak", "".join(body))


def _soak_figures(record: SoakRecord) -> list[tuple[str, str]]:
    """The soak's table of figures, one (figure, measured) row each."""
    memory = record.peak_memory
    rows = [("app soaked", esc(record.app))] if record.app else []
    rows += [
        ("invocations sent", str(record.sent)),
        ("completed", str(record.completed)),
        ("paused", str(record.paused)),
        ("lost (must be 0)", f'<span class="{"ok" if record.lost == 0 else "bad"}">{record.lost}</span>'),
        (
            "unfinished at the deadline (must be 0)",
            f'<span class="{"ok" if record.unfinished == 0 else "bad"}">{record.unfinished}</span>',
        ),
        ("kills", str(record.kills)),
        ("model calls", str(record.model_calls)),
        ("model calls beyond the clean count", str(record.extra_model_calls)),
        ("clean count per invocation (measured)", f"{record.clean_model_calls} model calls"),
        ("bound: answers the journal lacked at the kills", str(record.bound)),
        (
            "tool runs beyond one per invocation",
            "not counted for your app (model calls only)" if record.app else str(record.extra_tool_runs),
        ),
        (
            "paid",
            f"{tokens(record.usage.total_tokens)} tokens, {usd(record.cost_usd)} at "
            f"{esc(record.price_model)} (prices as of {esc(record.prices_as_of)})",
        ),
        ("what the kills added", usd(record.extra_cost_usd)),
        ("throughput (completed per second)", f"{record.throughput}"),
        ("wall time (s)", f"{record.wall_time:.1f}"),
        (
            "completion time p50 / p99 (s)",
            f"{record.p50_completion or 0:.2f} / {record.p99_completion or 0:.2f}",
        ),
        (
            "peak memory (MiB)",
            f"server {memory.server:.0f}, agent {memory.agent:.0f}, paidtwice {memory.paidtwice:.0f}",
        ),
    ]
    if record.gave_up:
        rows.append(("gave up waiting", esc(record.gave_up)))
    return rows


def _agent_kills(record: SoakRecord) -> list[str]:
    """The table of the agent's kills, each with the bound it measured; nothing without kills."""
    kills = [
        (
            str(number),
            _clock(kill.at),
            f"{kill.down:.2f}",
            str(kill.open_calls),
            str(kill.unjournaled_answers),
            str(kill.invocations_lacking),
            str(kill.bound),
        )
        for number, kill in enumerate(record.kill_snapshots, start=1)
    ]
    if not kills:
        return []
    header = (
        "kill",
        "at (UTC)",
        "down (s)",
        "model calls open",
        "answers back, not journaled",
        "invocations to replay",
        "bound (model calls)",
    )
    return ["<h3>Each agent kill</h3>", html_table(header, kills, cls="kills")]


def _node_kills(record: SoakRecord) -> list[str]:
    """The table of the cluster's node kills; nothing without them."""
    if not record.node_kills:
        return []
    rows = [
        (
            esc(node.node),
            ", ".join(map(str, node.partitions)) or "none",
            str(node.running),
            str(node.cut_off),
            f"{node.down:.1f}",
        )
        for node in record.node_kills
    ]
    header = ("node", "led partitions", "invocations running on them", "model calls cut off", "down (s)")
    return ["<h3>Each node kill</h3>", html_table(header, rows)]


def _clock(epoch: float) -> str:
    """A wall-clock time of day, to the hundredth of a second: the soak's kills are stamped by the clock."""
    stamp = datetime.fromtimestamp(epoch, tz=UTC)
    return f"{stamp:%H:%M:%S}.{stamp.microsecond // 10_000:02d}"


# -- the page --------------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;margin:0 auto;
max-width:1180px;padding:0 18px 40px}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:2px solid #333;padding-top:14px}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:14px 0 4px}
table{border-collapse:collapse;margin:4px 0 10px;font-size:12.5px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
code,pre{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;white-space:pre-wrap}
.ok{color:#006b4f}.bad{color:#b34700;font-weight:600}.verdict{white-space:nowrap}
.key{display:inline-block;min-width:14px;padding:0 3px;border:1px solid #333;color:#000;font-size:11px;
text-align:center;margin-left:6px}
.hatched{background:repeating-linear-gradient(45deg,#eee 0 3px,#888 3px 5px)}
svg text{font-size:11px;font-family:inherit}svg .tiny{font-size:9.5px}
svg .letter{font-size:10px;font-weight:600}
svg .lane{font-size:11.5px;fill:#333}svg .mark{fill:#b34700;font-size:10.5px}
.timeline{border:1px solid #ddd;margin:6px 0;background:#fff}
svg.heatmap{max-width:100%;height:auto}
.legend{font-size:12px;color:#333}
.cols{display:flex;gap:24px;flex-wrap:wrap}
.mismatch,.divergence{border-left:4px solid #D55E00;padding-left:10px}
.badge{display:inline-block;border:2px solid #999;padding:0 6px 0 10px;border-radius:3px;white-space:nowrap;
background:#fff;color:#000}
.sequences tr.parts td{background:#fbe3d3;font-weight:600}
nav ol{columns:2}
.point{border-top:1px solid #ddd}
@media print{nav{display:none}a{color:inherit;text-decoration:none}section{break-inside:auto}
body{font-size:11px}table{font-size:10px}
.timeline,.heatmap,.plot,table{break-inside:avoid}body{max-width:none}}
"""


_SHARED_DEFS = (
    '<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
    '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    '<rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#888" '
    'stroke-width="2"/></pattern></defs></svg>'
)
"""The timelines' hatching, defined once for the page."""


def _how_measured(sections: Sequence[Section]) -> str:
    lab = (
        "Every figure was measured on a real restate-server with real agent processes; only the model is a "
        "stub."
    )
    offline = (
        "Each journal was captured from a real restate-server and replayed offline, without a server, "
        "against the code's real restate-sdk endpoint; model calls outside the journal were answered by the "
        "stub model."
    )
    replayed = [s.id == REPLAY_SECTION for s in sections]
    if all(replayed) and sections:
        return offline
    return f"{lab} {offline}" if any(replayed) else lab


def html_page(title: str, sections: Sequence[Section], *, sources: Sequence[str] = ()) -> str:
    """The whole page: a heading, the contents, every section."""
    made = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    origin = f" from {', '.join(esc(s) for s in sources)}" if sources else ""
    contents = "".join(f'<li><a href="#{s.id}">{esc(s.title)}</a></li>' for s in sections)
    body = "".join(f'<section id="{s.id}"><h2>{esc(s.title)}</h2>{s.body}</section>' for s in sections)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><p>Made by paidtwice at {esc(made)}{origin}. {_how_measured(sections)}</p>"
        f"{_SHARED_DEFS}<nav><ol>{contents}</ol></nav>{body}</body></html>\n"
    )


def write_html(path: Path, title: str, sections: Sequence[Section], *, sources: Sequence[str] = ()) -> Path:
    """Write the page atomically (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html_page(title, sections, sources=sources))
    tmp.replace(path)
    return path
