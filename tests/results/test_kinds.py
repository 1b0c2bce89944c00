"""The kinds of record in one table: each kind written and read back by the one writer and the one reader."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paidtwice.report import PAGES, results_sections
from paidtwice.results import (
    ComparisonRecord,
    CurveRecord,
    PointResult,
    Results,
    RunRecord,
    groups,
    kind_of,
    kinds,
    load_results,
    record_json,
    write_record,
    write_results,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "results"
SOAK = Path(__file__).resolve().parent.parent / "watch" / "fixtures" / "soak-checkout.json"
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "reference" / "schemas"
RESULTS = Path(__file__).resolve().parents[2] / "src" / "paidtwice" / "results"


def test_each_kind_has_one_tag_one_class_and_a_place_in_results() -> None:
    table = kinds()
    assert len({k.name for k in table}) == len(table)
    assert len({k.cls for k in table}) == len(table)
    fields = set(load_results([FIXTURES / "deck.json"]).__dataclass_fields__)
    assert {k.group for k in table} <= fields
    assert {k.name for k in table if k.whole_file} == {"soak", "watch"}


def test_a_deck_and_a_sweep_read_back_as_they_were_written(tmp_path: Path) -> None:
    loaded = load_results([FIXTURES / "deck.json", FIXTURES / "sweep.json"])
    assert loaded.records and loaded.points
    write_results(tmp_path / "all.json", [*loaded.records, *loaded.points])
    again = load_results([tmp_path / "all.json"])
    assert again.records == loaded.records and again.points == loaded.points
    written = json.loads((tmp_path / "all.json").read_text())
    assert [r["record"] for r in written] == [kind_of(r).name for r in [*loaded.records, *loaded.points]]
    assert not (tmp_path / "all.json.tmp").exists()


def test_nested_runs_are_tagged_and_a_point_says_whether_it_pays_twice() -> None:
    loaded = load_results([FIXTURES / "deck.json", FIXTURES / "sweep.json"])
    curve = next(r for r in loaded.records if isinstance(r, CurveRecord | ComparisonRecord))
    assert all(run["record"] == "run" for run in record_json(curve)["runs"])
    run = next(r for r in loaded.records if isinstance(r, RunRecord))
    assert None not in record_json(run)["expected"].values()
    point = loaded.points[0]
    assert isinstance(point, PointResult)
    assert record_json(point)["pays_twice"] is point.pays_twice


def test_a_soak_is_a_file_of_its_own(tmp_path: Path) -> None:
    (soak,) = load_results([SOAK]).soaks
    write_record(tmp_path / "soak.json", soak)
    assert json.loads((tmp_path / "soak.json").read_text())["record"] == "soak"
    assert load_results([tmp_path / "soak.json"]).soaks == (soak,)


def test_an_object_of_no_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="not a kind of paidtwice record"):
        record_json(object())


def test_a_kind_is_registered_whole() -> None:
    # The recipe in paidtwice.results: a kind's row names its group, and the group is a field of `Results`,
    # a page of the report and a schema file in which the kind is described. A kind registered half way
    # (a row whose group has no field, no page or no schema) fails here, not in a user's report.
    by_name = {group.name: group for group in groups()}
    fields = {f.name for f in dataclasses.fields(Results)} - {"sources"}
    assert set(by_name) == fields, "every group is a field of Results, and every field a group"
    assert set(PAGES) == fields, "every group has its page in paidtwice.report.PAGES"
    for kind in kinds():
        assert kind.group in by_name, f"{kind.name}: its group {kind.group!r} is not in groups()"
        schema = json.loads((SCHEMAS / f"{by_name[kind.group].schema}.schema.json").read_text())
        assert kind.name in set(_described(schema)), (
            f"{kind.name}: not in its schema; run scripts/record_schemas.py"
        )
    # A module of records (step 1) whose class has no row (step 2) is a kind registered half way too.
    records = {path.stem for path in RESULTS.glob("_*.py")} - {"__init__", "_kinds", "_read", "_write"}
    with_a_row = {kind.cls.__module__.rsplit(".", 1)[1] for kind in kinds()}
    assert records <= with_a_row, f"no row in kinds() for a record of {sorted(records - with_a_row)}"


def _described(schema: Any) -> Iterator[str]:
    """The kinds a schema describes: every record's "record" constant, however deep."""
    if isinstance(schema, dict):
        tag = schema.get("properties", {}).get("record", {})
        if isinstance(tag, dict) and "const" in tag:
            yield tag["const"]
        for value in schema.values():
            yield from _described(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _described(value)


def test_the_report_finds_each_group_s_page_by_its_name(tmp_path: Path) -> None:
    loaded = load_results([FIXTURES / "deck.json", FIXTURES / "sweep.json", SOAK])
    sections, words = results_sections(loaded)
    assert words == ["deck", "sweep", "soak"]
    assert len(sections) == len(PAGES["records"](loaded.records)) + len(PAGES["points"](loaded.points)) + 1
