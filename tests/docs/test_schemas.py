"""The JSON Schemas of the record formats (docs/reference/schemas/) are current and hold for real records.

The schemas are made from the record types by scripts/record_schemas.py; a record type that gained, lost or
changed a field makes the committed schema stale, and the first test says to make it again. The records
validated are real: the captured deck and sweep (tests/fixtures/results/), the captured journals
(tests/fixtures/journals/), replay-check's --json output on them (conftest's replay_check_results) and a
small soak on the session's server.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from paidtwice.lab import Lab
from paidtwice.results import record_json
from paidtwice.soak import SoakOptions, soak

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "reference" / "schemas"
FIXTURES = ROOT / "tests" / "fixtures"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_schemas", ROOT / "scripts" / "record_schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, data: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:300]}" for e in validator(name).iter_errors(data)]


def test_the_schemas_are_what_the_record_types_make_today() -> None:
    stale = [
        path.name
        for path, text in generator().rendered().items()
        if not path.exists() or path.read_text() != text
    ]
    assert stale == [], f"out of date: {stale}; run .venv/bin/python scripts/record_schemas.py"


def test_every_schema_is_linked_from_the_reference() -> None:
    page = (ROOT / "docs" / "reference" / "records.md").read_text()
    assert [p.name for p in SCHEMAS.glob("*.json") if f"schemas/{p.name}" not in page] == []


@pytest.mark.parametrize("name", ["deck.json", "sweep.json"])
def test_captured_results_hold_to_the_results_schema(name: str) -> None:
    assert errors("results", json.loads((FIXTURES / "results" / name).read_text())) == []


@pytest.mark.parametrize("name", ["clean.json", "naive-changed-for-good.json"])
def test_captured_journals_hold_to_the_journal_schema(name: str) -> None:
    assert errors("journal", json.loads((FIXTURES / "journals" / name).read_text())) == []


def test_replay_check_records_hold_to_their_schema(replay_check_results: tuple[Path, ...]) -> None:
    verdicts = set()
    for path in replay_check_results:
        records = json.loads(path.read_text())
        assert errors("replay-check", records) == []
        verdicts |= {r["verdict"] for r in records}
    assert {"diverges", "continues"} <= verdicts


def test_a_soak_record_holds_to_the_soak_schema(lab: Lab) -> None:
    record = soak(lab, SoakOptions(invocations=20, kills=1))
    assert errors("soak", record_json(record)) == []


def test_a_record_that_breaks_its_schema_is_refused() -> None:
    """The validation can fail: a field of the wrong type, an unknown field, a missing one."""
    deck = json.loads((FIXTURES / "results" / "deck.json").read_text())
    deck[0]["model_calls"] = "three"
    deck[1]["surprise"] = 1
    del deck[2]["journal"]
    found = errors("results", deck)
    assert any(e.startswith("[0]") for e in found)
    assert any(e.startswith("[1]") for e in found)
    assert any(e.startswith("[2]") for e in found)
    journal = json.loads((FIXTURES / "journals" / "clean.json").read_text())
    journal["random_seed"] = 12345
    assert errors("journal", journal) != []
