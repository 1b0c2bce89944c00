"""The deck's agent (`paidtwice.agent.deck`) and the host that runs any Restate app for the lab."""

from paidtwice.agent._process import AgentAttempt, AgentHost

__all__ = ["AgentAttempt", "AgentHost"]
