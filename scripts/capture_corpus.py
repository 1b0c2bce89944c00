"""Capture the corpus on which replay-check's offline verdict is compared with the live outcome.

    .venv/bin/python scripts/capture_corpus.py [DIR]        (default: tests/fixtures/corpus)

One sweep of the deck's agent (both modes; steady, drifting and changed; every crash point). For each point,
the journal as it stood when the kill landed (a prefix, by the server's append times) is written as
`MODE-SCRIPT-NN.prefix.json`. Then each prefix is replayed live on each of two code versions, naive and
journaled: `restart-as-new` from the prefix's last index onto a deployment of that code (an agent of its own,
its stub lane answering by the point's script with every ask one later, as the offline replay's stub does).
Each live outcome (completes, RT0016 at a command index, or refused) goes to `live.jsonl`. The test
tests/replay/test_replay_corpus.py replays every prefix offline and compares.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from paidtwice._exceptions import AdminError
from paidtwice.lab import Lab
from paidtwice.replay._journal import JournalFile, capture_journal, save_journal
from paidtwice.replay._replayer import replay_script
from paidtwice.stub._scripts import script_by_name
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import PointResult, sweep
from paidtwice.targets import DeckTarget, TargetSpec

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "corpus"
CODES = ("naive", "journaled")
LIVE_TIMEOUT = 90.0


def live_outcome(lab: Lab, prefix: JournalFile, original: str, code: str, script: str) -> dict[str, Any]:
    """Replay `prefix` live on `code`: restart-as-new from its last index onto that code's deployment."""
    lane = lab.stub.open_lane(replay_script(script_by_name(script)))
    live = DeckTarget(code, pause="0.5")  # a Sleep command matches whatever its length
    workdir = lab.workdir / prefix.service / f"live-{code}"
    agent, _trace = lab.launch(live, lane, prefix.service, workdir=workdir)
    with agent:
        agent.start()
        deployment = lab.admin.register_deployment(agent.uri).id
        last = prefix.entries[-1].index
        try:
            new = lab.admin.restart_as_new(original, from_entry=last, deployment=deployment)
        except AdminError as err:
            return {"outcome": f"refused ({err.status})", "detail": str(err)[:300]}
        deadline = time.monotonic() + LIVE_TIMEOUT
        while time.monotonic() < deadline:
            row = lab.sql.invocation(new)
            if row is not None and row.status == "completed":
                result = "completes" if row.completion_result == "success" else "fails"
                return {"outcome": result, "invocation_id": new, "detail": row.completion_failure or ""}
            if row is not None and row.last_failure_error_code == "RT0016":
                lab.admin.kill(new)
                index = row.last_failure_command_index
                return {"outcome": f"RT0016 at {index}", "invocation_id": new, "detail": row.last_failure}
            if row is not None and row.status == "paused":
                failures = [f for f in lab.sql.failures(new) if f.doc_code == "RT0016"]
                lab.admin.kill(new)
                if failures:
                    index, message = failures[-1].related_command_index, failures[-1].message
                    return {"outcome": f"RT0016 at {index}", "invocation_id": new, "detail": message}
                return {"outcome": "paused", "invocation_id": new, "detail": ""}
            time.sleep(0.05)
        lab.admin.kill(new)
        return {"outcome": "timeout", "invocation_id": new, "detail": ""}


def main() -> None:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    directory.mkdir(parents=True, exist_ok=True)
    with Lab() as lab:
        prefixes: list[tuple[PointResult, JournalFile, Path]] = []

        def keep(point: PointResult) -> None:
            final = capture_journal(lab.sql, point.invocation_id)
            prefix = final.prefix(point.journal_at_kill - 1)
            name = f"{point.mode}-{point.script}-{point.order:02d}.prefix.json"
            path = save_journal(directory / name, prefix)
            prefixes.append((point, prefix, path))
            print(f"{path.name}: {len(prefix.entries)} of {len(final.entries)} entries, final {point.status}")

        sweep(
            TargetSpec(modes=CODES),
            answers=Answers(variations=("steady", "drifting", "changed")),
            lab=lab,
            on_point=keep,
        )
        # The originals must be finished for restart-as-new: a paused one is killed (its journal stays).
        for point, _, _ in prefixes:
            row = lab.sql.invocation(point.invocation_id)
            if row is not None and row.status != "completed":
                lab.admin.kill(point.invocation_id)

        def live(job: tuple[PointResult, JournalFile, Path, str]) -> dict[str, Any]:
            point, prefix, path, code = job
            outcome = live_outcome(lab, prefix, point.invocation_id, code, point.script)
            print(f"{path.name} on {code}: {outcome['outcome']}")
            return {"prefix": path.name, "script": point.script, "code": code, **outcome}

        jobs = [(p, j, path, code) for p, j, path in prefixes for code in CODES]
        with ThreadPoolExecutor(max_workers=8) as pool:
            records = list(pool.map(live, jobs))
    records.sort(key=lambda r: (r["prefix"], r["code"]))
    # JSON lines, not *.json: `replay-check DIR` reads every *.json file as a journal.
    (directory / "live.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    print(f"{len(prefixes)} prefixes, {len(records)} live outcomes in {directory}")


if __name__ == "__main__":
    main()
