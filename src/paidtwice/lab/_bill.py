"""The bill: model calls priced in dollars with genai-prices' database, and which calls a crash added.

Each call is priced on its own, at the tokens the stub's ledger billed for it (a call cut off in flight:
its prompt and the completion generated until the caller left, see `paidtwice.stub._usage`), at the price
the database gives for the time the call was made. The calls a crash added are every call but the first
delivered answer of each conversation turn: a run without the crash asks each turn once and gets its
answer, and pays for nothing else.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache

from paidtwice._exceptions import UsageError
from paidtwice._pins import GENAI_PRICES_RELEASED, GENAI_PRICES_VERSION
from paidtwice.stub import NO_TOKENS, ModelCall, TokenUsage

__all__ = [
    "DEFAULT_PRICE_MODEL",
    "PRICES_AS_OF",
    "Bill",
    "bill",
    "check_price_model",
    "extra_calls",
    "price_call",
    "price_usage",
]

DEFAULT_PRICE_MODEL = "gpt-4o-mini"
"""The model the deck's agent asks for, and a common choice for agents: the default price."""

PRICES_AS_OF = f"{GENAI_PRICES_RELEASED} (genai-prices {GENAI_PRICES_VERSION})"
"""The price data's date, as every record states it."""


@dataclass(frozen=True)
class Bill:
    """Tokens and dollars of a set of model calls."""

    usage: TokenUsage
    """Tokens billed, summed over the calls."""
    cost_usd: float
    """Their price in US dollars."""


@cache
def _model_names() -> tuple[str, ...]:
    from genai_prices import data_snapshot

    names = {model.id for provider in data_snapshot.get_snapshot().providers for model in provider.models}
    return tuple(sorted(names))


@cache
def check_price_model(name: str) -> str:
    """The model's name as the price database knows it; a UsageError naming close names if it has none."""
    from genai_prices import data_snapshot

    try:
        _, model = data_snapshot.get_snapshot().find_provider_model(name, None, None, None)
    except LookupError:
        close = difflib.get_close_matches(name.lower(), _model_names(), n=5, cutoff=0.6)
        hint = f" (close: {', '.join(close)})" if close else " (see genai-prices for the names it knows)"
        known = f"genai-prices {GENAI_PRICES_VERSION}"
        raise UsageError(f"no price for model {name!r} in {known}{hint}") from None
    return model.id


def _price(usage: TokenUsage, model: str, at: float) -> Decimal:
    from genai_prices import Usage, calc_price

    if usage == NO_TOKENS:
        return Decimal(0)
    price = calc_price(
        Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens),
        check_price_model(model),
        genai_request_timestamp=datetime.fromtimestamp(at, UTC),
    )
    return price.total_price


def price_usage(usage: TokenUsage, model: str, at: float) -> float:
    """The price in dollars of `usage` tokens of `model`, at the prices of the time `at`."""
    return float(_price(usage, model, at))


def price_call(call: ModelCall, model: str) -> float:
    """One call's price in dollars (0 while it is still in flight)."""
    return float(_price(call.billed or NO_TOKENS, model, call.started))


def bill(calls: Sequence[ModelCall], model: str) -> Bill:
    """The tokens and the dollars of `calls`, each priced on its own."""
    usage = NO_TOKENS
    total = Decimal(0)
    for call in calls:
        billed = call.billed or NO_TOKENS
        usage = usage + billed
        total += _price(billed, model, call.started)
    return Bill(usage, float(total))


def extra_calls(calls: Sequence[ModelCall], clean_turns: Sequence[int] | None = None) -> list[ModelCall]:
    """The calls a crash added: all but the first delivered answer of each call (per invocation: each turn,
    and each call a matched turn answers, as `ModelCall.asked` tells them apart).

    `clean_turns`, the turns a clean run asked (one per call): no turn keeps more first answers than the
    clean run asked of it, so a call asked again with another prompt (the time in it) is extra too."""
    kept: set[tuple[str, int, str]] = set()
    allowed = Counter(clean_turns) if clean_turns is not None else None
    per_turn: Counter[tuple[str, int]] = Counter()
    extra = []
    for call in calls:
        turn = (call.invocation_id, call.turn, call.asked)
        room = allowed is None or per_turn[(call.invocation_id, call.turn)] < allowed[call.turn]
        # A positional turn tells no calls apart (`asked` is empty): against a clean run, each of its answers
        # is a first one while there is room (the clean run asked it once per one-message conversation).
        first = turn not in kept or (not call.asked and allowed is not None)
        if call.delivered and first and room:
            kept.add(turn)
            per_turn[(call.invocation_id, call.turn)] += 1
        else:
            extra.append(call)
    return extra
