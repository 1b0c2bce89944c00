"""The app, built from services defined in other modules (as Restate's examples build theirs)."""

import restate
from journaled_agent import journaled
from naive_agent import naive

app = restate.app(services=[naive, journaled])
