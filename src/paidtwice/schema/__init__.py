"""Values made from JSON schemas: a handler's input, a tool call's arguments, a structured answer.

Its own package, importing nothing of paidtwice but the errors, so the stub and the lab both use it."""

from paidtwice._exceptions import UnsatisfiableSchema
from paidtwice.schema._values import value_for

__all__ = ["UnsatisfiableSchema", "value_for"]
