"""The stub model: an OpenAI-compatible chat-completions server with scripts, tool endpoints and ledgers."""

from paidtwice.stub._ledger import INVOCATION_HEADER, Booking, Ledger, ModelCall, ToolRun
from paidtwice.stub._resolve import resolve_script
from paidtwice.stub._scripts import SCRIPTS, Answer, Hold, Script, ToolCall, script_by_name
from paidtwice.stub._server import Lane, StubModel
from paidtwice.stub._usage import TokenUsage

__all__ = [
    "INVOCATION_HEADER",
    "SCRIPTS",
    "Answer",
    "Booking",
    "Hold",
    "Lane",
    "Ledger",
    "ModelCall",
    "Script",
    "StubModel",
    "TokenUsage",
    "ToolCall",
    "ToolRun",
    "resolve_script",
    "script_by_name",
]
