"""MkDocs hooks for the docs site (mkdocs.yml's `hooks:`): how the command reference shows click's help.

mkdocs-click writes each command's help as Markdown lines, and drops click's `\\b` markers. Two things
click's own `--help` does differently: a block after a `\\b` line is printed as it is written (the examples
in every command's help, the group's list of commands), and an option without a default shows nothing. On
the command reference only, this preprocessor (run after mkdocs-click's) does the same: a paragraph laid out
in columns or indented lines becomes a text block, and click 8.3's "no default" sentinel becomes "none".
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

CLI_PAGE = "reference/cli.md"
NO_DEFAULT = "`Sentinel.UNSET`"
"""How mkdocs-click 0.9 shows click 8.3's "no default given" (it predates the sentinel)."""
_LAID_OUT = re.compile(r"^ {4}|\S {2,}\S")


def _paragraphs(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _verbatim(block: list[str]) -> list[str]:
    """A paragraph of help as click prints it: a heading line ("Examples:") then the block as text."""
    if block[0].startswith(("|", "#", "```", "<")) or not any(_LAID_OUT.search(line) for line in block[1:]):
        return block
    head = [block[0]] if block[0].endswith(":") and not block[0].startswith(" ") else []
    body = textwrap.dedent("\n".join(block[len(head) :])).splitlines()
    return [*head, "", "```text", *body, "```"]


class _ClickHelp(Preprocessor):
    active = False

    def run(self, lines: list[str]) -> list[str]:
        if not _ClickHelp.active:
            return lines
        out: list[str] = []
        in_fence = False
        block: list[str] = []
        for line in [*lines, ""]:
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence or line.startswith("```") or not line.strip():
                if block:
                    out += [*_verbatim(block), ""]
                    block = []
                out.append(line)
                continue
            block.append(line.replace(NO_DEFAULT, "none"))
        return out


class ClickHelp(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 - Python-Markdown's name
        # After mkdocs-click (141), before fenced code blocks are read (pymdownx.superfences: 31).
        md.preprocessors.register(_ClickHelp(md), "paidtwice_click_help", 100)


def on_config(config: Any) -> Any:
    config["markdown_extensions"].append(ClickHelp())
    return config


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    _ClickHelp.active = page.file.src_uri == CLI_PAGE
    return markdown
