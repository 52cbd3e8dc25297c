"""Kernel sources of the hardware devices, and the manifest ``smtmma hw kernels`` writes.

Each device module (:mod:`smtmma.hw.cuda_kernels`, :mod:`smtmma.hw.hip_kernels`)
generates one :class:`KernelSource` per instruction it can run; this module
collects them and writes them to a folder with ``manifest.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from ..errors import InputError
from ..isa import InstrShape

__all__ = ["KernelSource", "all_kernels", "write_kernels"]


@dataclass(frozen=True)
class KernelSource:
    """One kernel: its file name, the catalogue row it runs, the instruction shape and its source text.

    ``toolchain_arch`` is what the compiler targets: ``sm_80``, ``sm_90a``,
    ``sm_100a`` (nvcc ``-arch``) or ``gfx942`` (hipcc ``--offload-arch``).
    ``vendor`` is "nvidia" or "amd".
    """

    file: str
    vendor: str
    arch: str
    instr: str
    op: str
    shape: InstrShape
    toolchain_arch: str
    source: str

    def manifest_entry(self) -> dict[str, Any]:
        """The kernel's row of ``manifest.json``."""
        rec: dict[str, Any] = {
            "file": self.file,
            "arch": self.arch,
            "instr": self.instr,
            "op": self.op,
            "shape": {"name": self.shape.name, "m": self.shape.m, "n": self.shape.n, "k": self.shape.k},
        }
        if self.vendor == "nvidia":
            rec["nvcc_arch"] = self.toolchain_arch
        else:
            rec["offload_arch"] = self.toolchain_arch
        return rec


def all_kernels(vendor: Optional[str] = None) -> list[KernelSource]:
    """Every kernel the hardware devices can run (``vendor``: "nvidia", "amd" or both)."""
    out: list[KernelSource] = []
    if vendor in (None, "nvidia"):
        from .cuda_kernels import cuda_kernels

        out += cuda_kernels()
    if vendor in (None, "amd"):
        from .hip_kernels import hip_kernels

        out += hip_kernels()
    return out


def write_kernels(out_dir: Union[str, Path], kernels: list[KernelSource]) -> Path:
    """Write each kernel's source and ``manifest.json`` into ``out_dir`` (created); returns the manifest's path."""
    d = Path(out_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        for k in kernels:
            (d / k.file).write_text(k.source, encoding="utf-8")
        manifest = d / "manifest.json"
        manifest.write_text(json.dumps([k.manifest_entry() for k in kernels], indent=1) + "\n", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{out_dir}: cannot write kernels ({e.strerror or e})") from None
    return manifest
