"""What lint reports: one code per kind of call whose result can differ between replay attempts.

Each rule matches fully qualified names (after import aliases are resolved), so `import httpx as h;
h.post(...)` and `from time import time; time()` are the same finding as their plain spellings.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ADK_AGENT_CLASSES",
    "ADK_APP",
    "ADK_APP_CLASSES",
    "ADK_APP_JOURNALED",
    "ADK_FUNCTION_TOOLS",
    "ADK_MODELS",
    "ADK_RESTATE_PLUGINS",
    "ADK_RUNNER",
    "ADK_RUNNER_CLASSES",
    "ADK_RUNNER_JOURNALED",
    "ADK_RUNS",
    "ADK_UNDECIDED",
    "AGENT_CLASSES",
    "AGENT_WITH_MODEL",
    "CHAT_MODEL",
    "CODES",
    "DEFAULT_CODES",
    "DURABLE_RUNNER_RUN",
    "EXPLICIT_RECOVERY",
    "IDEMPOTENCY_HEADER",
    "LANGCHAIN_AGENT",
    "LANGCHAIN_AGENT_MAKERS",
    "LANGCHAIN_CHAIN",
    "OFF_BY_DEFAULT",
    "PARSE_ERROR",
    "RESTATE_MIDDLEWARE",
    "RUN_CONFIG_CLASSES",
    "RUN_CONFIG_WITH_MODEL",
    "Rule",
    "adk_undecided",
    "adk_undecided_why",
    "context_getter",
    "derived_model",
    "match_call",
    "match_method",
    "model_class",
    "mutating_call",
    "mutating_method",
]


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
            'record it: `result = await ctx.run_typed("model", call_model, ...)` (TypeScript: '
            '`await ctx.run("model", () => callModel())`, or a model wrapped with `durableCalls(ctx)`); a '
            "replay then returns the recorded answer instead of paying for a new one",
        ),
        Rule(
            "PT002",
            "clock read outside the journal",
            "use `await ctx.time()` (TypeScript: `await ctx.date.now()`), journaled, or read the clock "
            "inside a ctx.run_typed (ctx.run) action",
        ),
        Rule(
            "PT003",
            "randomness or a fresh id outside the journal",
            "use `ctx.random()` or `ctx.uuid()` (TypeScript: `ctx.rand.random()`, `ctx.rand.uuidv4()`), "
            "seeded per invocation, stable across replays",
        ),
        Rule(
            "PT004",
            "environment variable read inside a handler",
            "read it once at start-up (module level), or inside a ctx.run_typed (ctx.run) action",
        ),
        Rule(
            "PT005",
            "file read inside a handler",
            "read it inside a ctx.run_typed (ctx.run) action, or once at start-up",
        ),
        Rule(
            "PT006",
            "mutating HTTP call without an idempotency key inside a ctx.run action",
            "send an `Idempotency-Key` header that is the same on every attempt (ctx.request().id and the "
            "step's name, or `ctx.uuid()` drawn outside the action): an action cut off in flight runs "
            "again, and only the key lets the other side do it once",
        ),
        Rule(
            "PT007",
            "network or model call inside ctx.run in an explicit_recovery handler",
            "under restate-sdk's preview `explicit_recovery` a retry replays nothing: every `ctx.run` action "
            "executes again, so the journaled model call is paid again after every kill or failure. Drop "
            "explicit_recovery for this handler (the journal then returns the recorded answer), or accept "
            "the cost and key every write with `ctx.request().id`",
        ),
    )
}

OFF_BY_DEFAULT = frozenset({"PT006"})
"""Codes reported only when selected (`--select PT006`): a write inside a journaled step is often meant to
be repeated safely by other means, so it is a review aid rather than a bug."""

DEFAULT_CODES = frozenset(CODES) - OFF_BY_DEFAULT
"""Codes reported when none are selected."""

EXPLICIT_RECOVERY = "restate._preview.explicit_recovery"
"""The SDK's preview mode (1.3.0) in which a retry runs the handler from the start, executing every ctx.run
action again: a handler it applies to pays for its journaled calls again (PT007)."""

IDEMPOTENCY_HEADER = "idempotency-key"
"""The header (compared in lower case) that makes a write safe to repeat, as payment APIs take it."""

_MUTATING = {"post", "put", "patch", "delete"}

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
    # Agent frameworks: each run calls the model (and the tools) as often as the agent loops.
    **{f"agents.Runner.{run}": "PT001" for run in ("run", "run_sync", "run_streamed")},
    **{f"agents.run.Runner.{run}": "PT001" for run in ("run", "run_sync", "run_streamed")},
    **{
        f"litellm.{call}": "PT001"
        for call in ("completion", "acompletion", "responses", "aresponses", "text_completion")
    },
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
    # Google's Gemini (and Google's ADK, which calls it): client.models.generate_content, client.aio....
    "google.genai.Client",
    "google.genai.client.Client",
}
# Agents and chat models of the frameworks: their run / invoke methods call the model.
_PYDANTIC_AGENTS = {"pydantic_ai.Agent", "pydantic_ai.agent.Agent"}
PYDANTIC_AGENTS = frozenset(_PYDANTIC_AGENTS)
_PYDANTIC_RUNS = {"run", "run_sync", "run_stream", "run_stream_events", "iter"}
CHAT_MODEL = "langchain.chat_model"
"""What lint calls any LangChain chat model: ChatOpenAI(...), init_chat_model(...), model.bind_tools(...)."""
LANGCHAIN_AGENT = "langchain.agents.create_agent"
"""An agent from LangChain's create_agent without Restate's middleware (or LangGraph's prebuilt
create_react_agent, which takes none): its model calls are not journaled."""
LANGCHAIN_AGENT_MAKERS = {
    LANGCHAIN_AGENT,
    "langchain.agents.factory.create_agent",
    "langgraph.prebuilt.create_react_agent",
    "langgraph.prebuilt.chat_agent_executor.create_react_agent",
}
"""The functions that make such an agent."""
LANGCHAIN_CHAIN = "langchain.chain"
"""What lint calls a LangChain runnable sequence with a chat model or an agent in it (`prompt | model`): its
invoke calls the model."""
_LANGCHAIN_MODEL_MODULES = (
    "langchain_openai.",
    "langchain_anthropic.",
    "langchain_google_genai.",
    "langchain_google_vertexai.",
    "langchain_mistralai.",
    "langchain_groq.",
    "langchain_ollama.",
    "langchain_aws.",
    "langchain_community.chat_models.",
    "langchain_fireworks.",
    "langchain_together.",
    "langchain_xai.",
    "langchain_deepseek.",
)
_LANGCHAIN_MODEL_FACTORIES = {
    "langchain.chat_models.init_chat_model",
    "langchain.chat_models.base.init_chat_model",
}
_LANGCHAIN_CALLS = {"invoke", "ainvoke", "stream", "astream", "batch", "abatch", "generate", "agenerate"}
_LANGCHAIN_DERIVED = {"bind_tools", "bind", "with_structured_output", "with_retry", "with_config"}
"""Methods of a chat model that return another chat model."""
RESTATE_MIDDLEWARE = "restate.ext.langchain.RestateMiddleware"

DURABLE_RUNNER_RUN = "restate.ext.openai.DurableRunner.run"

# Google's ADK: a Runner runs an app's agents, calling the model as often as they loop. Restate's integration
# is a plugin on the app (or the runner): RestatePlugin's before_model_callback makes each model call in a
# ctx.run_typed step ("call LLM"), whatever the agent's model (a name or a BaseLlm instance).
ADK_RUNNER_CLASSES = {
    "google.adk.Runner",
    "google.adk.runners.Runner",
    "google.adk.runners.InMemoryRunner",
}
ADK_APP_CLASSES = {"google.adk.apps.App", "google.adk.apps.app.App"}
ADK_AGENT_CLASSES = {
    "google.adk.Agent",
    "google.adk.agents.Agent",
    "google.adk.agents.LlmAgent",
    "google.adk.agents.llm_agent.Agent",
    "google.adk.agents.llm_agent.LlmAgent",
}
"""Agents whose `tools=[...]` functions run whenever the agent calls them, on every replay too."""
ADK_FUNCTION_TOOLS = {"google.adk.tools.FunctionTool", "google.adk.tools.function_tool.FunctionTool"}
ADK_RESTATE_PLUGINS = {"restate.ext.adk.RestatePlugin", "restate.ext.adk.plugin.RestatePlugin"}
ADK_RUNS = {"run", "run_async", "run_live", "run_debug"}
"""The Runner's methods that run the agents."""
ADK_RUNNER = "google.adk.Runner(no RestatePlugin)"
"""What lint calls an ADK runner none of whose plugins (or its app's) is Restate's: its model calls are made
outside the journal."""
ADK_RUNNER_JOURNALED = "google.adk.Runner(RestatePlugin)"
"""A runner whose app (or itself) has restate.ext.adk.RestatePlugin: its model calls are journaled."""
ADK_APP = "google.adk.apps.App(no RestatePlugin)"
ADK_APP_JOURNALED = "google.adk.apps.App(RestatePlugin)"
ADK_UNDECIDED = "google.adk.?"
"""The start of what lint calls a runner or an app whose plugins it cannot read (a list built elsewhere, a
plugin it does not know, which may journal): `google.adk.?Runner: why` or `google.adk.?App: why`."""


def adk_undecided(kind: str, why: str) -> str:
    """The name of an ADK runner or app (`kind`) whose plugins lint cannot judge, and why."""
    return f"{ADK_UNDECIDED}{kind}: {why}"


def adk_undecided_why(made: str | None) -> str | None:
    """Why lint cannot judge an ADK runner or app, when `made` is one it cannot; else None."""
    if made is None or not made.startswith(ADK_UNDECIDED):
        return None
    return made.split(": ", 1)[1]


ADK_MODELS = {
    "google.adk.models.Gemini",
    "google.adk.models.google_llm.Gemini",
    "google.adk.models.lite_llm.LiteLlm",
    "google.adk.models.anthropic_llm.Claude",
}
"""ADK's model classes: `generate_content_async` on one calls the provider."""
RESTATE_CONTEXT = "restate.Context"
"""What lint calls the context a tool gets from `restate_context()` (the integrations' getter)."""
_CONTEXT_GETTERS = {"restate_context", "restate_object_context", "current_context"}


def context_getter(qualified: str) -> bool:
    """`restate.ext.openai.restate_context` and its kind: they return the handler's context."""
    return qualified.startswith("restate.") and qualified.rsplit(".", 1)[-1] in _CONTEXT_GETTERS


TOOL_DECORATORS = {
    "agents.function_tool",
    "agents.tool.function_tool",
    "restate.ext.openai.durable_function_tool",
    "restate.ext.openai.functions.durable_function_tool",
    "langchain.tools.tool",
    "langchain_core.tools.tool",
}
"""Decorators that make a function an agent's tool. A tool runs whenever the agent's run reaches it, on every
replay too: Restate's integrations journal the model's answers, not the tools (`durable_function_tool`
included), so a tool's side effect must be in a ctx.run action of its own."""
PYDANTIC_TOOL_DECORATORS = {"tool", "tool_plain"}
"""`@agent.tool` and `@agent.tool_plain` on a pydantic-ai agent (unless `RestateAgent(agent,
auto_wrap_tools=True)` runs each in a step)."""
AGENT_CLASSES = {"agents.Agent", "agents.agent.Agent"}
RUN_CONFIG_CLASSES = {"agents.RunConfig", "agents.run.RunConfig", "agents.run_config.RunConfig"}
AGENT_WITH_MODEL = "agents.Agent(model=<instance>)"
"""An Agents SDK agent given a model instance (`OpenAIChatCompletionsModel(...)`): DurableRunner journals only
models its provider resolves by name, so the agent calls this one plainly."""
RUN_CONFIG_WITH_MODEL = "agents.RunConfig(model=<instance>)"
"""A run config given a model instance: the same, for every agent of the run."""

_MODEL_MODULES = ("openai.", "anthropic.")
_MODEL_ENDINGS = {"create", "parse", "stream", "generate", "complete", "count_tokens"}
_FILE_METHODS = {"read_text", "read_bytes", "open"}
_PATH_CLASSES = {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"}

CLIENT_CLASSES = (
    _HTTP_CLIENTS
    | _MODEL_CLIENTS
    | _PATH_CLASSES
    | _PYDANTIC_AGENTS
    | ADK_MODELS
    | {"random.Random", CHAT_MODEL, LANGCHAIN_AGENT, LANGCHAIN_CHAIN, ADK_RUNNER}
)
"""Classes whose instances lint tracks through variables."""


def model_class(qualified: str) -> str | None:
    """What a call of `qualified` makes, when it is a framework's chat model (ChatOpenAI, init_chat_model)."""
    if qualified in _LANGCHAIN_MODEL_FACTORIES:
        return CHAT_MODEL
    name = qualified.rsplit(".", 1)[-1]
    if qualified.startswith(_LANGCHAIN_MODEL_MODULES) and name.startswith(("Chat", "AzureChat")):
        return CHAT_MODEL
    return None


def derived_model(instance_of: str, chain: list[str]) -> bool:
    """`model.bind_tools(...)` and its kind return a chat model too."""
    return instance_of == CHAT_MODEL and len(chain) == 1 and chain[0] in _LANGCHAIN_DERIVED


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


def _mutating_verb(verb: str, first_argument: str | None) -> bool:
    if verb == "request":
        return first_argument is not None and first_argument.lower() in _MUTATING
    return verb in _MUTATING


def mutating_call(qualified: str, first_argument: str | None) -> bool:
    """Whether calling the function `qualified` (`httpx.post`, `requests.request("PUT", ...)`) is an HTTP
    write; `first_argument` is the call's first argument when it is a string literal."""
    module, _, verb = qualified.rpartition(".")
    return module in ("httpx", "requests") and _mutating_verb(verb, first_argument)


def mutating_method(instance_of: str, chain: list[str], first_argument: str | None) -> bool:
    """Whether `instance.<chain>()` on an HTTP client is a write: `client.post`, `s.request("PATCH")`."""
    return instance_of in _HTTP_CLIENTS and len(chain) == 1 and _mutating_verb(chain[0], first_argument)


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
    if instance_of in _PYDANTIC_AGENTS and chain[-1] in _PYDANTIC_RUNS:
        return "PT001"
    if instance_of in (CHAT_MODEL, LANGCHAIN_AGENT, LANGCHAIN_CHAIN) and chain[-1] in _LANGCHAIN_CALLS:
        return "PT001"
    if instance_of == ADK_RUNNER and chain[-1] in ADK_RUNS:
        return "PT001"
    if instance_of in ADK_MODELS and chain[-1] == "generate_content_async":
        return "PT001"
    return None
