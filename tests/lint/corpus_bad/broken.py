"""A file that does not parse: the syntax error is on line 5."""

import time

def oops(:
    return time.time()
