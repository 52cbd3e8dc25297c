"""Recording a device's outputs: every line of a test-vector file gets the ``d`` the device computed.

The output keeps each input line's fields (``expect``, ``note``, ...) and
sets ``d`` (hex, the D format) and ``gpu`` (the device's description); when
the device has an architecture (a GPU, ``sim:ARCH[/OP]``) ``arch`` (and
``op``) become the device's own (an ``op`` family it lacks is dropped), so ``smtmma check`` compares the recording with
the right catalogue model and with every ``expect``.  Lines are written as
each batch finishes: a run that fails half-way keeps the lines done so far.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, TextIO, Union

from ..catalogue import lookup
from ..errors import InputError, SmtmmaError
from ..formats import format_hex
from ..vectors import TestVector, read_vectors, vector_formats
from .device import Device

__all__ = ["RecordReport", "record_file", "record_vectors", "recorded_line"]


@dataclass
class RecordReport:
    """How many lines were read and written, and how long the device took (seconds)."""

    lines: int
    written: int
    seconds: float
    error: Optional[str] = None


def recorded_line(v: TestVector, d: int, device: Device) -> str:
    """Line ``v`` with the device's ``d`` and ``gpu`` (and its own ``arch`` on hardware), as JSON."""
    rec: dict[str, Any] = dict(v.raw)
    arch, op = v.arch, rec.get("op")
    if device.arch and (device.arch != v.arch or device.op):
        arch, op = device.arch, device.op or op
        try:
            lookup(arch, v.instr, op)
        except SmtmmaError:
            op = None
        rec["arch"] = arch
        if op:
            rec["op"] = op
        else:
            rec.pop("op", None)
    fm = vector_formats(lookup(arch, v.instr, op))
    rec["d"] = format_hex(fm.d, d)
    rec["gpu"] = device.description
    return json.dumps(rec, separators=(", ", ": "))


def record_file(
    device: Device,
    in_path: Union[str, Path],
    out_path: Union[str, Path, TextIO],
    *,
    batch: int = 1024,
    progress: Optional[Callable[[int, int], None]] = None,
) -> RecordReport:
    """Run every line of ``in_path`` on ``device`` and write the lines with ``d`` to ``out_path`` (a file name or a text stream).

    The whole input is parsed first (a bad line raises InputError before
    anything runs); ``progress(done, total)`` is called after each batch.
    A device error half-way is returned in :attr:`RecordReport.error` with
    the lines done so far written (and flushed).
    """
    vectors = read_vectors(in_path)
    if not vectors:
        raise InputError(f"{in_path}: no test vectors")
    if hasattr(out_path, "write"):
        return record_vectors(device, vectors, out_path, batch, progress)  # type: ignore[arg-type]
    try:
        fh = open(out_path, "w", encoding="utf-8")  # type: ignore[arg-type]
    except OSError as e:
        raise InputError(f"{out_path}: cannot write ({e.strerror or e})") from None
    with fh:
        return record_vectors(device, vectors, fh, batch, progress)


def record_vectors(device: Device, vectors: list[TestVector], fh: TextIO, batch: int = 1024,
                   progress: Optional[Callable[[int, int], None]] = None) -> RecordReport:
    """Run ``vectors`` batch by batch, each batch's lines written and flushed before the next runs."""
    t0 = time.perf_counter()
    written = 0
    for start in range(0, len(vectors), batch):
        part = vectors[start:start + batch]
        try:
            ds = device.run(part)
        except SmtmmaError as e:
            return RecordReport(len(vectors), written, time.perf_counter() - t0, f"line {part[0].line}..{part[-1].line}: {e}")
        for v, d in zip(part, ds):
            fh.write(recorded_line(v, d, device) + "\n")
        fh.flush()
        written += len(part)
        if progress is not None:
            progress(written, len(vectors))
    return RecordReport(len(vectors), written, time.perf_counter() - t0)
