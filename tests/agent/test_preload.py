"""Which framework a fork server preloads for an app is read from the app module's imports and from its own
modules' (files beside it) that it imports, never from anything it does not import."""

from __future__ import annotations

from pathlib import Path

from paidtwice.agent import framework_preload


def test_a_framework_imported_by_the_apps_own_module_is_preloaded(tmp_path: Path) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "models.py").write_text("from agents import Agent\nimport json\n")
    (tmp_path / "app.py").write_text("import restate\nfrom utils.models import Agent\n")
    (tmp_path / "plain.py").write_text("import restate\nimport json\n")
    assert framework_preload("app:app", tmp_path) == ("agents", "openai.lib._response_resources")
    assert framework_preload("plain:app", tmp_path) == ()


def test_modules_that_import_each_other_are_read_once(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import b\nimport anthropic\n")
    (tmp_path / "b.py").write_text("import a\nimport openai\n")
    assert framework_preload("a", tmp_path) == ("openai", "anthropic")
