"""The errors paidtwice raises, all under one root so a caller can catch them together.

    PaidtwiceError
     ├── ProvisionError      restate-server could not be installed from npm
     ├── ServerStartError    restate-server (or an agent, or the stub) did not come up
     ├── ServerUnreachable   nothing answers at the admin or ingress URL given
     ├── AdminError          the admin API refused a request (carries the HTTP status)
     ├── NotFound            no invocation, deployment, experiment or stub script by that name
     ├── ExperimentError     an experiment could not be carried out as its row says
     ├── LabCancelled        the lab was interrupted (Ctrl-C, SIGTERM) while a run was in progress
     └── UsageError          the caller asked for something that cannot be done in this state
      ├── ScriptFileError  a script file that cannot be read or does not say what each turn answers
      └── UnsatisfiableSchema  no value can be made for a JSON schema (carries the path)

Every message says what went wrong and, where there is one, what to do about it. The CLI prints it as one
line and exits 2.
"""

from __future__ import annotations

__all__ = [
    "AdminError",
    "ExperimentError",
    "LabCancelled",
    "NotFound",
    "PaidtwiceError",
    "ProvisionError",
    "ScriptFileError",
    "ServerStartError",
    "ServerUnreachable",
    "UnsatisfiableSchema",
    "UsageError",
]


class PaidtwiceError(Exception):
    """Root of every error paidtwice raises on purpose."""


class ProvisionError(PaidtwiceError):
    """restate-server could not be installed (npm missing, registry unreachable, unknown version)."""


class ServerStartError(PaidtwiceError):
    """A process the lab started did not become healthy in time, or exited early."""


class ServerUnreachable(PaidtwiceError):
    """No Restate server answers at the URL given."""


class AdminError(PaidtwiceError):
    """The admin API answered a request with an error status."""

    def __init__(self, message: str, *, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        """HTTP status the admin API answered with."""
        self.body = body
        """The answer's body, as text."""


class NotFound(PaidtwiceError):
    """No invocation, deployment, experiment or stub script by that name."""


class ExperimentError(PaidtwiceError):
    """An experiment could not be carried out as its row describes."""


class LabCancelled(PaidtwiceError):
    """The lab was interrupted (Ctrl-C or SIGTERM) while a run was in progress."""


class UsageError(PaidtwiceError):
    """The request does not fit the state it was made in."""


class ScriptFileError(UsageError):
    """A script file that cannot be read or does not say what each turn answers."""


class UnsatisfiableSchema(UsageError):
    """No value can be made for a JSON schema (or none paidtwice knows how to make); names where."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot make a value for {path}: {reason}")
        self.path = path
        """Where in the value: "$" for the whole, "$.address.zip", "$.items[0]"."""
        self.reason = reason
        """Why, in words."""
