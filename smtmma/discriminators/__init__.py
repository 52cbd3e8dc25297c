"""Test generation: candidate spaces, minimal suites, closed-loop identification, instruction-shaped placement.

* :mod:`.candidates` -- the models a suite tells apart (catalogue, lists, grids);
* :mod:`.classes`, :mod:`.selection`, :mod:`.suite` -- classes of candidates no
  input separates (on a pool of inputs, :mod:`smtmma.queries.pool`), and few
  vectors that separate the rest;
* :mod:`.identify` -- one vector at a time on a device until one class is left;
* :mod:`.placement` -- a dot product in instruction-shaped A, B, C tiles;
* :mod:`.questions` -- the open semantic questions and the vectors that decide them.
"""

from .candidates import Candidate, Space, catalogue_space, explicit_space, grid_space, parse_grid
from .identify import Identification, identify
from .placement import Tile, place
from .suite import Suite, build_suite

__all__ = [
    "Candidate",
    "Space",
    "catalogue_space",
    "explicit_space",
    "grid_space",
    "parse_grid",
    "Suite",
    "build_suite",
    "Identification",
    "identify",
    "Tile",
    "place",
]
