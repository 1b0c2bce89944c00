"""The stub model: an OpenAI-compatible chat-completions server with scripts, tool endpoints and ledgers."""

from paidtwice.stub._auto import AUTO, DEFAULT_SEED, AutoBook, auto_script, reach_script, script_for
from paidtwice.stub._ledger import INVOCATION_HEADER, Booking, Ledger, ModelCall, ToolRun
from paidtwice.stub._record import RecordingScript, recording_script
from paidtwice.stub._resolve import resolve_script
from paidtwice.stub._scripts import SCRIPTS, Answer, Asked, Hold, Script, ToolCall, script_by_name
from paidtwice.stub._server import Lane, StubModel, answer_marks
from paidtwice.stub._turns import VARIATIONS, load_script_file, state_entries
from paidtwice.stub._usage import NO_TOKENS, TokenUsage

__all__ = [
    "AUTO",
    "DEFAULT_SEED",
    "INVOCATION_HEADER",
    "NO_TOKENS",
    "SCRIPTS",
    "VARIATIONS",
    "Answer",
    "Asked",
    "AutoBook",
    "Booking",
    "Hold",
    "Lane",
    "Ledger",
    "ModelCall",
    "RecordingScript",
    "Script",
    "StubModel",
    "TokenUsage",
    "ToolCall",
    "ToolRun",
    "answer_marks",
    "auto_script",
    "load_script_file",
    "reach_script",
    "recording_script",
    "resolve_script",
    "script_by_name",
    "script_for",
    "state_entries",
]
