"""Session-wide test settings."""

from __future__ import annotations

import os

# Kernels that tests compile on the way (simulate_dot's auto backend on large batches) build at -O0: the same bits
# as the default -O3/-O1 (tests/test_native_lanes.py builds one at the defaults), in a fraction of the time.
os.environ.setdefault("SMTMMA_CC_OPT", "-O0")
