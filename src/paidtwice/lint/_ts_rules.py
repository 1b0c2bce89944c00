"""The TypeScript spellings of lint's codes: which calls of a Restate TypeScript handler a replay makes again.

The codes and their meaning are `_rules.CODES`, shared with Python; only the names differ. A name is
qualified as `_ts_index` writes it: the module it is imported from, then the path (`ai.generateText`,
`openai.default` for `import OpenAI from "openai"`), or the global it is (`Date.now`, `fetch`).
"""

from __future__ import annotations

__all__ = [
    "AI_MODEL_CALLS",
    "CLIENT",
    "DURABLE_CALLS",
    "DURABLE_MODEL",
    "MODEL_CLIENTS",
    "NEW_CODES",
    "PLAIN_MODEL",
    "PROVIDER",
    "PROVIDER_FACTORIES",
    "RESTATE_SDK",
    "SERVICE_MAKERS",
    "TS_SUFFIXES",
    "WRAP_MODEL",
    "match_ts_call",
    "model_method",
    "provider_model",
]

TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
"""The files lint reads as TypeScript (declaration files, `.d.ts`, are skipped: they hold no code)."""

RESTATE_SDK = "@restatedev/restate-sdk"
SERVICE_MAKERS = {f"{RESTATE_SDK}.{kind}" for kind in ("service", "object", "workflow")}
"""`restate.service({name, handlers, options})` and its kinds: each handler is a root lint walks."""

AI_MODEL_CALLS = {
    f"ai.{name}"
    for name in (
        "generateText",
        "streamText",
        "generateObject",
        "streamObject",
        "embed",
        "embedMany",
        "generateImage",
        "experimental_generateImage",
    )
}
"""The Vercel AI SDK's calls that call their `model` (once, or once per step of the tool loop)."""
WRAP_MODEL = "ai.wrapLanguageModel"
DURABLE_CALLS = "@restatedev/vercel-ai-middleware.durableCalls"
"""Restate's middleware: a model wrapped with `durableCalls(ctx)` journals every call in a `ctx.run`."""
PROVIDER_FACTORIES = ("@ai-sdk/",)
"""Modules whose exports make models (`openai("gpt-4o")`) or providers (`createOpenAI({...})`)."""

# What lint calls a value it tracks (module-level or local constants, arguments passed to helpers).
CLIENT = "client"
"""An openai or anthropic client: any method chain ending in `create` (and its kind) calls the API."""
PLAIN_MODEL = "model"
"""A language model that calls its provider each time it is used (no durableCalls)."""
DURABLE_MODEL = "durable-model"
"""A language model wrapped with Restate's durableCalls middleware."""
PROVIDER = "provider"
"""An AI SDK provider (`createOpenAI(...)`): calling it, or its `.chat(...)`, makes a plain model."""

MODEL_CLIENTS = {
    "openai.default",
    "openai.OpenAI",
    "openai.AzureOpenAI",
    "@anthropic-ai/sdk.default",
    "@anthropic-ai/sdk.Anthropic",
    "@google/genai.GoogleGenAI",
}
"""Classes whose instances are model clients (`new OpenAI()`)."""
_CLIENT_ENDINGS = {"create", "parse", "stream", "generateContent", "generateContentStream", "countTokens"}

_HTTP_CALLS = {"fetch", "undici.fetch", "undici.request", "node-fetch.default", "axios.default"}
_HTTP_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "request"}

_CALLS: dict[str, str] = {
    **{name: "PT001" for name in _HTTP_CALLS},
    **{f"axios.default.{verb}": "PT001" for verb in _HTTP_METHODS},
    **{f"http.{verb}": "PT001" for verb in ("request", "get")},
    **{f"https.{verb}": "PT001" for verb in ("request", "get")},
    "Date.now": "PT002",
    "performance.now": "PT002",
    "process.hrtime": "PT002",
    "process.hrtime.bigint": "PT002",
    "Math.random": "PT003",
    "crypto.randomUUID": "PT003",
    "crypto.randomBytes": "PT003",
    "crypto.randomInt": "PT003",
    "crypto.getRandomValues": "PT003",
    "crypto.webcrypto.getRandomValues": "PT003",
    **{f"uuid.{v}": "PT003" for v in ("v1", "v4", "v6", "v7")},
    "nanoid.nanoid": "PT003",
    **{
        f"fs.{read}": "PT005"
        for read in ("readFileSync", "readFile", "createReadStream", "promises.readFile")
    },
    "fs/promises.readFile": "PT005",
}
"""Functions by qualified name (`node:` prefixes dropped): the code a call of one is reported as."""

NEW_CODES = {"Date": "PT002"}
"""`new Date()` with no argument reads the clock."""


def match_ts_call(qualified: str) -> str | None:
    """The code for a call of `qualified`, if it is one lint reports."""
    return _CALLS.get(qualified)


def model_method(chain: list[str]) -> bool:
    """`client.chat.completions.create(...)`: the method chain, after the client, calls the model API."""
    return bool(chain) and chain[-1] in _CLIENT_ENDINGS


def provider_model(qualified: str) -> str | None:
    """What a call of `qualified` makes, when it is an AI SDK provider's export: `createOpenAI` makes a
    provider, `openai("gpt-4o")` (or `openai.chat(...)`) a model."""
    if not qualified.startswith(PROVIDER_FACTORIES):
        return None
    name = qualified.rsplit(".", 1)[-1]
    return PROVIDER if name.startswith("create") else PLAIN_MODEL
