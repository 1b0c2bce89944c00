"""The claim checks, as Restate's claim examples write them: quick bodies without an await, each run as a
journaled step. Started together (`restate.gather`), they run at once; each ends before the next begins."""

from __future__ import annotations

import restate

INSTRUCTIONS = "You analyze insurance claims: use the calculate_metrics tool, then decide whether to approve."
"""The framework agents' instructions (agents_app.py, pydantic_app.py, langchain_app.py)."""


async def check_eligibility(claim: str) -> str:
    """Check claim eligibility."""
    return "eligible"


async def compare_to_standard_rates(claim: str) -> str:
    """Compare the claim to standard rates."""
    return "reasonable"


async def check_fraud(claim: str) -> str:
    """Check for fraud indicators."""
    return "low risk"


async def calculate_metrics(ctx: restate.Context, claim: str) -> list[str]:
    """The three checks as journaled steps started together, then their results."""
    done = await restate.gather(
        ctx.run_typed("eligibility", check_eligibility, claim=claim),
        ctx.run_typed("cost", compare_to_standard_rates, claim=claim),
        ctx.run_typed("fraud", check_fraud, claim=claim),
    )
    return [await result for result in done]
