"""A stub script from what a user names: a built-in script, `auto`, or a script file (in one variation)."""

from __future__ import annotations

from pathlib import Path

from paidtwice._exceptions import UsageError
from paidtwice.stub._auto import AUTO, auto_script
from paidtwice.stub._scripts import SCRIPTS, Script
from paidtwice.stub._turns import VARIATIONS, load_script_file

__all__ = ["resolve_script"]


def resolve_script(script: str | Path | Script, variation: str = "steady") -> Script:
    """A stub script by name (steady, drifting, changed, ...), `auto` (answers from each request) or from a
    script file (in one variation)."""
    if isinstance(script, Script):
        return script
    text = str(script)
    if text in SCRIPTS:
        return SCRIPTS[text]
    if text == AUTO:
        if variation not in VARIATIONS:
            raise UsageError(f"unknown variation {variation!r} (known: {', '.join(VARIATIONS)})")
        return auto_script(variation)
    path = Path(text)
    if path.suffix in (".toml", ".json") or path.exists():
        if variation not in VARIATIONS:
            raise UsageError(f"unknown variation {variation!r} (known: {', '.join(VARIATIONS)})")
        return load_script_file(path, variation)
    raise UsageError(f"--script {text!r} is neither a stub script ({', '.join(SCRIPTS)}) nor a script file")
