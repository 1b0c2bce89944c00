"""What lint reports: one code per kind of call whose result can differ between replay attempts.

Each rule matches fully qualified names (after import aliases are resolved), so `import httpx as h;
h.post(...)` and `from time import time; time()` are the same finding as their plain spellings.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODES", "PARSE_ERROR", "Rule", "match_call", "match_method"]


@dataclass(frozen=True)
class Rule:
    """One kind of finding."""

    code: str
    """Stable code, e.g. "PT001"."""
    kind: str
    """What it finds, in a few words."""
    fix: str
    """How to make it replay-safe."""


PARSE_ERROR = "PT000"

CODES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(PARSE_ERROR, "file does not parse", "fix the syntax error; the file was not checked"),
        Rule(
            "PT001",
            "network or model call outside ctx.run",
            'record it: `result = await ctx.run_typed("model", call_model, ...)`; a replay then returns '
            "the recorded answer instead of paying for a new one",
        ),
        Rule(
            "PT002",
            "clock read outside the journal",
            "use `await ctx.time()` (journaled), or read the clock inside a ctx.run_typed action",
        ),
        Rule(
            "PT003",
            "randomness or a fresh id outside the journal",
            "use `ctx.random()` or `ctx.uuid()` (seeded per invocation, stable across replays)",
        ),
        Rule(
            "PT004",
            "environment variable read inside a handler",
            "read it once at start-up (module level), or inside a ctx.run_typed action",
        ),
        Rule(
            "PT005",
            "file read inside a handler",
            "read it inside a ctx.run_typed action, or once at start-up",
        ),
    )
}

_HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream", "send"}

# Module-level functions, by qualified name.
_FUNCTIONS: dict[str, str] = {
    **{f"httpx.{verb}": "PT001" for verb in _HTTP_VERBS},
    **{f"httpx2.{verb}": "PT001" for verb in _HTTP_VERBS},
    **{f"requests.{verb}": "PT001" for verb in _HTTP_VERBS},
    "requests.api.request": "PT001",
    "aiohttp.request": "PT001",
    "urllib.request.urlopen": "PT001",
    "urllib3.request": "PT001",
    "http.client.HTTPConnection.request": "PT001",
    "socket.create_connection": "PT001",
    "time.time": "PT002",
    "time.time_ns": "PT002",
    "time.monotonic": "PT002",
    "time.monotonic_ns": "PT002",
    "time.perf_counter": "PT002",
    "time.perf_counter_ns": "PT002",
    "time.localtime": "PT002",
    "time.gmtime": "PT002",
    "datetime.datetime.now": "PT002",
    "datetime.datetime.utcnow": "PT002",
    "datetime.datetime.today": "PT002",
    "datetime.date.today": "PT002",
    "uuid.uuid1": "PT003",
    "uuid.uuid4": "PT003",
    "os.urandom": "PT003",
    "os.getenv": "PT004",
    "os.environ.get": "PT004",
    "os.environ.copy": "PT004",
    "os.environ.items": "PT004",
    "os.getenvb": "PT004",
    "open": "PT005",
    "builtins.open": "PT005",
    "io.open": "PT005",
}

# Prefixes: every function of these modules.
_MODULES: dict[str, str] = {"random.": "PT003", "secrets.": "PT003"}

# Client classes: calls of their methods are network calls.
_HTTP_CLIENTS = {
    "httpx.Client",
    "httpx.AsyncClient",
    "httpx2.Client",
    "httpx2.AsyncClient",
    "requests.Session",
    "requests.session",
    "aiohttp.ClientSession",
}
# Model SDK clients: any method reached through them (client.chat.completions.create) calls the API.
_MODEL_CLIENTS = {
    "openai.OpenAI",
    "openai.AsyncOpenAI",
    "openai.AzureOpenAI",
    "openai.AsyncAzureOpenAI",
    "anthropic.Anthropic",
    "anthropic.AsyncAnthropic",
    "anthropic.AnthropicBedrock",
    "anthropic.AsyncAnthropicBedrock",
}
_MODEL_MODULES = ("openai.", "anthropic.")
_MODEL_ENDINGS = {"create", "parse", "stream", "generate", "complete", "count_tokens"}
_FILE_METHODS = {"read_text", "read_bytes", "open"}
_PATH_CLASSES = {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"}

CLIENT_CLASSES = _HTTP_CLIENTS | _MODEL_CLIENTS | _PATH_CLASSES | {"random.Random"}
"""Classes whose instances lint tracks through variables."""


def match_call(qualified: str) -> str | None:
    """The code for a call of the function `qualified`, if it is one lint reports."""
    if qualified in _FUNCTIONS:
        return _FUNCTIONS[qualified]
    for prefix, code in _MODULES.items():
        if qualified.startswith(prefix) and qualified != "random.Random":
            return code
    if qualified.startswith(_MODEL_MODULES) and qualified.rsplit(".", 1)[-1] in _MODEL_ENDINGS:
        return "PT001"  # module-level API: openai.chat.completions.create(...)
    return None


def match_method(instance_of: str, chain: list[str]) -> str | None:
    """The code for calling `instance.<chain...>()` on an instance of `instance_of`."""
    if not chain:
        return None
    if instance_of in _HTTP_CLIENTS and chain[-1] in _HTTP_VERBS:
        return "PT001"
    if instance_of in _MODEL_CLIENTS and len(chain) >= 2:
        return "PT001"
    if instance_of in _PATH_CLASSES and chain[-1] in _FILE_METHODS:
        return "PT005"
    if instance_of == "random.Random":
        return "PT003"
    return None
