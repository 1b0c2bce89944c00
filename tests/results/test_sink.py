"""The one record sink: each record on disk as soon as it is added, the file replaced whole, never half."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice.results import RecordSink, load_results, results_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "results"


def test_each_record_is_on_disk_when_add_returns(tmp_path: Path) -> None:
    points = load_results([FIXTURES / "sweep.json"]).points[:3]
    path = tmp_path / "sweep.json"
    with RecordSink(path) as sink:
        for n, point in enumerate(points, start=1):
            sink.add(point)
            assert load_results([path]).points == points[:n]
    # The bytes `results_text` gives the whole list, and no side file left.
    assert path.read_text() == results_text(points)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.json"]


def test_without_publish_the_file_is_written_once_complete(tmp_path: Path) -> None:
    points = load_results([FIXTURES / "sweep.json"]).points[:2]
    path = tmp_path / "replay.json"
    with RecordSink(path, publish=False) as sink:
        sink.add(points[0])
        sink.add(points[1])
        assert not path.exists()
    assert path.read_text() == results_text(points)


def test_stopped_half_way_the_file_keeps_what_was_published(tmp_path: Path) -> None:
    points = load_results([FIXTURES / "sweep.json"]).points[:2]
    published, held = tmp_path / "published.json", tmp_path / "held.json"
    with pytest.raises(KeyboardInterrupt), RecordSink(published) as sink:
        sink.add(points[0])
        raise KeyboardInterrupt
    assert json.loads(published.read_text())[0]["order"] == points[0].order
    with pytest.raises(KeyboardInterrupt), RecordSink(held, publish=False) as sink:
        sink.add(points[0])
        raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["published.json"]


def test_replace_orders_the_records_and_what_follows_is_added_after_them(tmp_path: Path) -> None:
    points = load_results([FIXTURES / "sweep.json"]).points[:3]
    path = tmp_path / "deck.json"
    with RecordSink(path) as sink:
        sink.replace([])
        assert path.read_text() == "[]\n"
        sink.add(points[2])
        sink.replace([points[0], points[1]])
        sink.add(points[2])
    assert path.read_text() == results_text(points)


def test_a_default_file_is_named_in_the_results_folder(tmp_path: Path) -> None:
    sink = RecordSink.at(None, results_dir=tmp_path, stem="sweep")
    assert sink.path.parent == tmp_path and sink.path.name.startswith("sweep-")
    assert RecordSink.at(tmp_path / "mine.json", results_dir=tmp_path, stem="sweep").path.name == "mine.json"
