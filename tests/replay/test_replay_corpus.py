"""The offline verdict equals the live outcome, on a corpus (tests/fixtures/corpus/, captured by
scripts/capture_corpus.py): each crash point's journal as it stood at the kill, replayed offline on the naive
and the journaled code, against the server replaying that prefix on that code (restart-as-new from its last
index onto that code's deployment)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import paidtwice.agent.weather
from paidtwice.replay import Replayer, ReplayResult, load_journal
from paidtwice.stub import StubModel

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"
DECIDED = ("completes", "RT0016 at")


def deck_app(mode: str) -> Any:
    """The deck's agent in `mode`, as a module of its own (the mode is read at import), serving "Agent"."""
    spec = importlib.util.spec_from_file_location(f"deck_{mode}", paidtwice.agent.weather.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = {k: os.environ.get(k) for k in ("PAIDTWICE_AGENT_MODE", "PAIDTWICE_SERVICE")}
    os.environ.update({"PAIDTWICE_AGENT_MODE": mode, "PAIDTWICE_SERVICE": "Agent"})
    try:
        spec.loader.exec_module(module)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return module.app


def offline_outcome(result: ReplayResult) -> str:
    if result.verdict in ("replays", "continues"):
        return "completes"
    if result.verdict == "diverges":
        # The live outcome is the server's message, which names the SDK's command index.
        return f"RT0016 at {result.command_index}"
    return result.verdict


@pytest.fixture(scope="module")
def stub() -> Iterator[StubModel]:
    with StubModel() as running:
        yield running


def test_offline_verdict_equals_live_outcome(stub: StubModel) -> None:
    live = [json.loads(line) for line in (CORPUS / "live.jsonl").read_text().splitlines()]
    decided = [r for r in live if r["outcome"].startswith(DECIDED)]
    assert len({r["prefix"] for r in live}) >= 60, "the corpus must cover one whole sweep"
    assert len(decided) >= 100
    apps = {code: deck_app(code) for code in ("naive", "journaled")}
    replayers: dict[tuple[str, str], Replayer] = {}
    disagree = []
    try:
        for record in decided:
            key = (record["code"], record["script"])
            if key not in replayers:
                replayers[key] = Replayer(apps[record["code"]], script=record["script"], stub=stub).start()
            # Every point had a service of its own; the prefix is replayed on the app's one.
            prefix = dataclasses.replace(load_journal(CORPUS / record["prefix"]), service="Agent")
            result = replayers[key].replay_journal(prefix, raise_on_divergence=False)
            if offline_outcome(result) != record["outcome"]:
                disagree.append(
                    f"{record['prefix']} on {record['code']}: offline {result.describe()}, live "
                    f"{record['outcome']}"
                )
    finally:
        for replayer in replayers.values():
            replayer.close()
    assert not disagree, f"{len(disagree)} of {len(decided)} disagree:\n" + "\n".join(disagree)


def test_a_batch_gives_every_journal_the_result_it_gets_alone(stub: StubModel) -> None:
    # The batch (one loop, one app, one stub, journals side by side) must not change a verdict, a call
    # outside the journal or its answer: each journal replayed alone is the reference.
    live = [json.loads(line) for line in (CORPUS / "live.jsonl").read_text().splitlines()]
    groups: dict[tuple[str, str], list[str]] = {}
    for record in live:
        groups.setdefault((record["code"], record["script"]), []).append(record["prefix"])
    verdicts = set()
    for (code, script), names in sorted(groups.items()):
        files = [CORPUS / name for name in sorted(set(names))]
        if code == "naive":
            files.append(CORPUS.parent / "journals" / "clean.json")  # a complete run of the naive agent
        prefixes = [dataclasses.replace(load_journal(path), service="Agent") for path in files]
        with Replayer(deck_app(code), script=script, stub=stub, concurrency=1) as alone:
            reference = [alone.replay_journal(p, raise_on_divergence=False) for p in prefixes]
        with Replayer(deck_app(code), script=script, stub=stub) as batch:
            assert batch.concurrency > 1
            results = batch.replay_journals(prefixes)
        assert results == reference, f"{code} code, {script} script"
        verdicts |= {r.verdict for r in results}
    assert {"replays", "continues", "diverges"} <= verdicts
