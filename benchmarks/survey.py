"""Cost of ``smtmma hw survey`` on the simulator: instructions, lines and seconds per architecture.

Run: python benchmarks/survey.py [--arch sm90 ...] [--random 2000] [--json]

For each architecture, the whole survey (shipped or pool-chosen suite, open
questions, ``--random`` vectors per instruction; recording, checking and the
catalogue candidates of every instruction) runs once on ``sim:ARCH``, nothing
written to disk.  Columns: instructions, lines, seconds, and the share of
the time the device took (the rest is drawing vectors, checking them and
naming the candidates: what a GPU survey also spends on its host).  The
issue's target: sm90 at 2000 random vectors in <= 60 s on the project's
2-core machine, and <= 5 minutes on an H100 (hw-samples/H200-survey.md:
52 instructions, 104,066 lines, 89.6 s on an H200 with its 16 host cores).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Sequence

from smtmma.catalogue import ARCHS
from smtmma.hw.device import open_device
from smtmma.hw.survey import DEFAULT_RANDOM, survey


class _Timed:
    """A device wrapper that adds up the seconds its ``run`` takes."""

    def __init__(self, device: Any) -> None:
        self.device, self.seconds = device, 0.0
        self.name, self.description, self.arch, self.op = device.name, device.description, device.arch, device.op

    def run(self, vectors: Sequence[Any]) -> list[int]:
        t0 = time.perf_counter()
        try:
            return self.device.run(vectors)
        finally:
            self.seconds += time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", help="architectures (default: sm80, sm90, gfx942)")
    ap.add_argument("--random", type=int, default=DEFAULT_RANDOM, help=f"random vectors per instruction (default {DEFAULT_RANDOM})")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    archs = args.arch or ["sm80", "sm90", "gfx942"]
    rows = []
    for arch in archs:
        if arch not in ARCHS:
            ap.error(f"unknown architecture {arch!r} (choices: {', '.join(ARCHS)})")
        dev = _Timed(open_device(f"sim:{arch}"))
        t0 = time.perf_counter()
        result = survey(dev, None, n_random=args.random)  # type: ignore[arg-type]
        total = time.perf_counter() - t0
        lines = sum(s.lines for s in result.instructions)
        ok = all(s.own_identified and s.matched == s.lines for s in result.instructions)
        rows.append({"arch": arch, "instructions": len(result.instructions), "lines": lines, "seconds": round(total, 2),
                     "device_share": round(dev.seconds / total, 2), "lines_per_s": round(lines / total), "all_identified": ok})
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'arch':8} {'instructions':>12} {'lines':>8} {'seconds':>8} {'device share':>12} {'lines/s':>8}  identified")
    for r in rows:
        print(f"{r['arch']:8} {r['instructions']:>12} {r['lines']:>8} {r['seconds']:>8} {r['device_share']:>12} "
              f"{r['lines_per_s']:>8}  {'all' if r['all_identified'] else 'NOT ALL'}")


if __name__ == "__main__":
    main()
