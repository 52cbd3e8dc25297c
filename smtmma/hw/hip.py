"""The ``hip`` device: AMD Matrix Cores (MFMA) through HIP, compiled at run time with hipcc.

``HipDevice("hip:N", N)`` finds ``hipcc`` (on PATH, else in ``$ROCM_PATH/bin``,
``$ROCM_PATH`` defaulting to ``/opt/rocm``), asks the HIP runtime for GPU N's
gfx architecture (``hipDeviceProp_t.gcnArchName`` through a small compiled
helper, else ``rocminfo``) and maps it to the catalogue (:data:`GFX_TO_ARCH`):
gfx908 (CDNA1), gfx90a (CDNA2), gfx942 (CDNA3; gfx940 and gfx941, the other
MI300 steppings, run the gfx942 models), gfx950 (CDNA4), gfx1100-gfx1103,
gfx1150, gfx1151 (RDNA3: the ``gfx11`` rows) and gfx1200, gfx1201 (RDNA4:
``gfx12``); gfx950, gfx11 and gfx12 are provisional rows.  Any other GPU is
a :class:`DeviceError`.

:meth:`HipDevice.run` runs each vector on the device's own architecture:

1. the catalogue row ``(device arch, vector instr, op)``, where op is the
   vector's raw ``op`` (an op family or an MFMA mnemonic) or its op family;
   a family the architecture lacks falls back to the default row; an
   instruction type it lacks is an error listing the valid ones;
2. the MFMA/WMMA (:func:`choose_shape`): the one the vector's raw op names
   (or one of the same m, n, k and block count under another
   architecture's spelling), else the single-block form with the largest k
   per block;
3. :func:`~smtmma.discriminators.placement.place` with ``replicate=True``:
   the tile every block of one wave runs (so a wrong block layout shows
   as blocks that disagree), chained over ceil(K / k) issues, with the
   vector's E8M0 scales for the block-scaled (``v_mfma_scale``) rows;
4. one kernel per instruction (:mod:`smtmma.hw.hip_kernels`), compiled with
   ``hipcc --offload-arch=<gfx> -O2 -shared -fPIC -fno-gpu-flush-denormals-to-zero`` into
   ``~/.cache/smtmma/hip`` (``$XDG_CACHE_HOME`` respected), keyed by a hash
   of source, target and compiler, and loaded with ctypes;
5. launches in batches; every tile's D must agree with itself where cells
   compute the same dot product (:func:`~smtmma.discriminators.placement.disagreeing_cells`)
   and across blocks, else :class:`DeviceError`; the answer is D[0, 0].

This module has not been run on an AMD GPU by this project: the machines
it was written on have neither ROCm nor an AMD GPU.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Optional

import numpy as np

from ..catalogue import CATALOGUE, INSTRS, Entry, Instr, lookup
from ..discriminators.placement import Tile, disagreeing_cells, padding_zero, place
from ..errors import SmtmmaError, UnknownNameError, choices
from ..formats import get_format
from ..isa import InstrShape
from ..vectors import TestVector
from .amd_layouts import LAYOUTS, MfmaLayout, layout
from .device import Device, DeviceError
from .hip_kernels import (
    ENTRY_POINT,
    INFO_ENTRY_POINT,
    NAME_SYMBOL,
    container_bits,
    device_info_source,
    kernel_for,
)
from .kernels import KernelSource

__all__ = ["HipDevice", "find_hipcc", "catalogue_arch", "choose_shape", "cache_dir", "pack_tiles", "pack_scales",
           "check_tiles", "parse_rocminfo", "GFX_TO_ARCH", "HIPCC_FLAGS", "Launcher", "Scales"]

#: gfx id the HIP runtime reports -> catalogue architecture.
GFX_TO_ARCH = {
    "gfx908": "gfx908", "gfx90a": "gfx90a", "gfx940": "gfx942", "gfx941": "gfx942", "gfx942": "gfx942",
    "gfx950": "gfx950",
    **{f"gfx{n}": "gfx11" for n in (1100, 1101, 1102, 1103, 1150, 1151)},
    "gfx1200": "gfx12", "gfx1201": "gfx12",
}

_NO_TOOLCHAIN = ("hip: no HIP toolchain (hipcc not found on PATH or in $ROCM_PATH/bin); "
                 "install ROCm to run on AMD Matrix Cores")

#: hipcc flags of every library (plus ``--offload-arch``): subnormals kept (clang's default for HIP, made
#: explicit so that a site-wide flush setting cannot change what the MFMAs see).
HIPCC_FLAGS = ("-O2", "-shared", "-fPIC", "-fno-gpu-flush-denormals-to-zero")

#: Bytes of A, B, C and D one launch may move (the batch size follows from it).
LAUNCH_BYTES = 64 << 20

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def find_hipcc() -> str:
    """Path of ``hipcc``: on PATH, else ``$ROCM_PATH/bin/hipcc`` (``$ROCM_PATH`` defaults to /opt/rocm); DeviceError if none."""
    found = shutil.which("hipcc")
    if found:
        return found
    root = os.environ.get("ROCM_PATH") or "/opt/rocm"
    cand = Path(root) / "bin" / "hipcc"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    raise DeviceError(_NO_TOOLCHAIN)


def catalogue_arch(gfx: str) -> str:
    """Catalogue architecture of a gfx id as the runtime reports it (``gfx90a:sramecc+:xnack-`` -> ``gfx90a``)."""
    base = gfx.split(":")[0].strip().lower()
    try:
        return GFX_TO_ARCH[base]
    except KeyError:
        raise DeviceError(f"hip: {base or repr(gfx)} is not a modelled AMD architecture; smtmma models "
                          f"gfx908 (CDNA1), gfx90a (CDNA2), gfx940-gfx942 (CDNA3), gfx950 (CDNA4), "
                          f"gfx1100-gfx1103, gfx1150, gfx1151 (RDNA3), gfx1200, gfx1201 (RDNA4)") from None


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$XDG_CACHE_HOME/smtmma/hip`` or ``~/.cache/smtmma/hip``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "smtmma" / "hip"


def choose_shape(entry: Entry, raw_op: Optional[str]) -> InstrShape:
    """The MFMA/WMMA a vector runs on ``entry``'s architecture.

    The one ``raw_op`` names (case-insensitive), or the one with the same m,
    n, k and block count when ``raw_op`` is another architecture's spelling;
    else the single-block form with the largest k per block.
    """
    if not entry.shapes:
        raise DeviceError(f"hip: {entry.arch} {entry.instr} ({entry.op}) lists no MFMA instruction")
    key = (raw_op or "").strip().lower()
    if key:
        for s in entry.shapes:
            if s.name == key:
                return s
        want = next((lay for (_, name), lay in LAYOUTS.items() if name == key), None)
        if want is not None:
            for s in entry.shapes:
                lay = layout(s.name, entry.arch)
                if (lay.m, lay.n, lay.k, lay.blocks) == (want.m, want.n, want.k, want.blocks):
                    return s
    return max(entry.shapes, key=lambda s: (layout(s.name, entry.arch).blocks == 1, s.k, s.name))


def _entry_for(arch: str, v: TestVector, device: str) -> Entry:
    """The catalogue row a vector runs on ``arch`` (see the module docstring, step 1)."""
    rows = [e for e in CATALOGUE if e.arch == arch and e.instr == v.instr]
    if not rows:
        have = sorted({e.instr for e in CATALOGUE if e.arch == arch})
        raise DeviceError(f"device {device} ({arch}) has no instruction {v.instr} (line {v.line}); "
                          f"valid for {arch}: {choices(have)}")
    raw = v.raw.get("op") if isinstance(v.raw.get("op"), str) else None
    for op in (raw, v.op):
        if op:
            try:
                return lookup(arch, v.instr, op)
            except UnknownNameError:
                pass
    return lookup(arch, v.instr, None)


#: Scales of one launch, SA (tiles, m, Kp / 32) and SB (tiles, Kp / 32, n) uint8, or None (see :func:`pack_scales`).
Scales = Optional[tuple[np.ndarray, np.ndarray]]
#: One launch: (kernel, layout, A, B, C, waves, issues, scales) -> D (waves * blocks, m, n); see :func:`pack_tiles`.
Launcher = Callable[[KernelSource, MfmaLayout, np.ndarray, np.ndarray, np.ndarray, int, int, Scales], np.ndarray]


def pack_tiles(lay: MfmaLayout, tiles: Sequence[Tile], in_shift: int, *,
               repeat_blocks: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The A, B, C arrays of one launch (tile ``t = wave * blocks + block``).

    With ``repeat_blocks`` (what :meth:`HipDevice.run` does) each tile is
    repeated over the ``blocks`` of its wavefront; without, ``tiles`` are
    taken as they come (their number a multiple of ``blocks``).  Returns A
    ``(tiles, m, Kp)`` and B ``(tiles, Kp, n)`` in the A/B container
    (uint8/16/32/64, patterns shifted left by ``in_shift``: 13 for TF32 in
    its FP32 container) and C ``(tiles, m, n)`` in the C/D container.
    """
    cin, cout = container_bits(lay)
    din, dout = _UINT[cin], _UINT[cout]
    rep = lay.blocks if repeat_blocks else 1
    if len(tiles) * rep % lay.blocks:
        raise AssertionError(f"{len(tiles)} tiles do not fill whole wavefronts of {lay.blocks} blocks")
    A = np.repeat(np.stack([t.A for t in tiles]), rep, axis=0)
    B = np.repeat(np.stack([t.B for t in tiles]), rep, axis=0)
    C = np.repeat(np.stack([t.C for t in tiles]), rep, axis=0)
    if in_shift:
        A, B = A << np.uint64(in_shift), B << np.uint64(in_shift)
    return A.astype(din), B.astype(din), C.astype(dout)


def pack_scales(lay: MfmaLayout, tiles: Sequence[Tile], *, repeat_blocks: bool = True) -> Scales:
    """SA ``(tiles, m, Kp / 32)`` and SB ``(tiles, Kp / 32, n)`` (uint8 E8M0) of a scaled launch; None when unscaled."""
    if not lay.scale_block:
        return None
    if any(t.scale_a is None or t.scale_b is None for t in tiles):
        raise AssertionError(f"{lay.name}: a tile without scales")
    rep = lay.blocks if repeat_blocks else 1
    SA = np.repeat(np.stack([t.scale_a for t in tiles]), rep, axis=0).astype(np.uint8)  # type: ignore[misc]
    SB = np.repeat(np.stack([t.scale_b for t in tiles]), rep, axis=0).astype(np.uint8)  # type: ignore[misc]
    return SA, SB


def check_tiles(device: str, lay: MfmaLayout, tiles: Sequence[Tile], D: np.ndarray,
                vectors: Sequence[TestVector]) -> list[int]:
    """D[0, 0] of each tile; DeviceError if cells with equal inputs, or the blocks of one wavefront, disagree."""
    out = []
    Dw = D.reshape(len(tiles), lay.blocks, lay.m, lay.n)
    for t, (tile, v) in enumerate(zip(tiles, vectors)):
        for b in range(lay.blocks):
            if b and not np.array_equal(Dw[t, b], Dw[t, 0]):
                raise DeviceError(f"device {device}: {lay.name}: line {v.line}: block {b} of D differs from block 0 "
                                  f"on the same inputs (a block layout or independence problem)")
            bad = disagreeing_cells(tile, Dw[t, b])
            if bad:
                raise DeviceError(f"device {device}: {lay.name}: line {v.line}: {len(bad)} cell(s) of D disagree with "
                                  f"cells computing the same dot product, first {bad[0]} (a register-layout or "
                                  f"independence problem)")
        out.append(int(Dw[t, 0, 0, 0]))
    return out


class HipDevice(Device):
    """AMD Matrix Cores of GPU ``index`` through HIP (see the module docstring)."""

    hardware = True

    def __init__(self, name: str, index: int) -> None:
        self.name = name
        self.index = index
        self._hipcc = find_hipcc()
        self._libs: dict[str, ctypes.CDLL] = {}
        gfx, product = self._query_device()
        self.gfx = gfx.split(":")[0].strip().lower()
        self.arch = catalogue_arch(gfx)
        self.description = f"hip:{index}: {product or 'AMD GPU'} ({gfx}; models of {self.arch})"
        self._launch: Launcher = self._launch_library

    # ------------------------------------------------------------ device discovery

    def _runtime_info(self) -> tuple[int, int, str, str]:
        """(status, GPU count, gfx arch or error message, product name) from the HIP runtime, via the compiled helper."""
        lib = self._load(self._compile("device_info", device_info_source(), None))
        fn = getattr(lib, INFO_ENTRY_POINT)
        fn.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        fn.restype = ctypes.c_int
        count = ctypes.c_int(0)
        arch, prod = ctypes.create_string_buffer(256), ctypes.create_string_buffer(256)
        rc = fn(self.index, ctypes.byref(count), arch, prod, 256)
        return rc, count.value, arch.value.decode(errors="replace"), prod.value.decode(errors="replace")

    def _query_device(self) -> tuple[str, str]:
        """(gfx arch as reported, product name) of GPU ``index``: the HIP runtime, else rocminfo."""
        try:
            rc, count, arch, product = self._runtime_info()
        except DeviceError as e:
            rc, count, arch, product = -2, 0, str(e), ""
        if rc == 0:
            return arch, product
        if rc == -1:
            raise DeviceError(f"device {self.name}: GPU {self.index} does not exist; the HIP runtime sees {count} AMD GPU(s)")
        why = arch
        gpus = _rocminfo_gpus()
        if gpus is None:
            raise DeviceError(f"device {self.name}: cannot query the AMD GPU ({why or 'HIP runtime unavailable'}; "
                              f"rocminfo not found either)")
        if self.index >= len(gpus):
            raise DeviceError(f"device {self.name}: GPU {self.index} does not exist; rocminfo lists {len(gpus)} AMD GPU(s)")
        return gpus[self.index]

    # ------------------------------------------------------------ compile and load

    def _compile(self, stem: str, source: str, offload_arch: Optional[str]) -> Path:
        """Path of the shared library built from ``source`` (cached by a hash of source, target and compiler)."""
        flags = [*HIPCC_FLAGS] + ([f"--offload-arch={offload_arch}"] if offload_arch else [])
        key = hashlib.sha256("\0".join([source, self._hipcc, *flags]).encode()).hexdigest()[:24]
        d = cache_dir()
        so = d / f"{stem}-{offload_arch or 'host'}-{key}.so"
        if so.exists():
            return so
        try:
            d.mkdir(parents=True, exist_ok=True)
            src = d / f"{stem}-{key}.hip"
            src.write_text(source, encoding="utf-8")
        except OSError as e:
            raise DeviceError(f"hip: cannot write to the kernel cache {d} ({e.strerror or e})") from None
        tmp = so.with_name(f"{so.name}.{os.getpid()}.tmp")
        try:
            proc = subprocess.run([self._hipcc, *flags, "-o", str(tmp), str(src)], capture_output=True, text=True,
                                  timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise DeviceError(f"hip: hipcc could not run on {src.name} ({e})") from None
        if proc.returncode != 0 or not tmp.exists():
            lines = (proc.stderr or proc.stdout or "").splitlines()
            first = next((x for x in lines if "error" in x), lines[-1] if lines else f"exit status {proc.returncode}")
            raise DeviceError(f"hip: hipcc failed on {src.name}: {first.strip()}")
        os.replace(tmp, so)
        return so

    def _load(self, path: Path) -> ctypes.CDLL:
        try:
            return ctypes.CDLL(str(path))
        except OSError as e:
            raise DeviceError(f"hip: cannot load {path.name} ({e})") from None

    def _library(self, ks: KernelSource) -> ctypes.CDLL:
        """The loaded kernel library of ``ks`` for this device's gfx target."""
        if ks.file not in self._libs:
            lib = self._load(self._compile(ks.file.removesuffix(".hip"), ks.source, self.gfx))
            name_fn = getattr(lib, NAME_SYMBOL)
            name_fn.restype = ctypes.c_char_p
            if name_fn().decode() != ks.shape.name:
                raise DeviceError(f"hip: {ks.file}: the loaded library runs {name_fn().decode()}, not {ks.shape.name}")
            run = getattr(lib, ENTRY_POINT)
            run.argtypes = [ctypes.c_int, *[ctypes.c_void_p] * 6, ctypes.c_long, ctypes.c_int, ctypes.c_char_p,
                            ctypes.c_int]
            run.restype = ctypes.c_int
            self._libs[ks.file] = lib
        return self._libs[ks.file]

    def _launch_library(self, ks: KernelSource, lay: MfmaLayout, A: np.ndarray, B: np.ndarray, C: np.ndarray,
                        waves: int, issues: int, scales: Scales = None) -> np.ndarray:
        """D (waves * blocks, m, n) of one launch of the compiled kernel of ``ks``."""
        lib = self._library(ks)
        A, B, C = np.ascontiguousarray(A), np.ascontiguousarray(B), np.ascontiguousarray(C)
        SA, SB = (np.ascontiguousarray(x) for x in scales) if scales is not None else (None, None)
        D = np.empty_like(C)
        err = ctypes.create_string_buffer(512)
        rc = getattr(lib, ENTRY_POINT)(self.index, A.ctypes.data, B.ctypes.data, C.ctypes.data, D.ctypes.data,
                                       None if SA is None else SA.ctypes.data, None if SB is None else SB.ctypes.data,
                                       waves, issues, err, 512)
        if rc != 0:
            raise DeviceError(f"device {self.name}: {lay.name}: launch failed: {err.value.decode(errors='replace')}")
        return D

    # ------------------------------------------------------------ run

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        """D pattern of each vector (in order), D[0, 0] of its tile as the device's MFMA computes it."""
        arch = self.arch
        assert arch is not None  # set by __init__
        out = [0] * len(vectors)
        groups: dict[tuple[str, str, str, int], list[int]] = {}
        for i, v in enumerate(vectors):
            entry = _entry_for(arch, v, self.name)
            shape = choose_shape(entry, v.raw.get("op") if isinstance(v.raw.get("op"), str) else None)
            groups.setdefault((entry.instr, entry.op, shape.name, -(-v.K // shape.k)), []).append(i)
        for (instr, op, sname, issues), idx in groups.items():
            ks = kernel_for(arch, instr, op, sname)
            lay = layout(sname, arch, instr)
            inst = INSTRS[instr]
            fmt = get_format(inst.a_fmt)
            shift = fmt.container_shift if fmt.container else 0
            cin, cout = container_bits(lay)
            kp = issues * lay.k
            scale_bytes = (lay.m + lay.n) * kp // lay.scale_block if lay.scale_block else 0
            per_wave = lay.blocks * ((lay.m + lay.n) * kp * cin // 8 + 2 * lay.m * lay.n * cout // 8 + scale_bytes)
            step = max(1, LAUNCH_BYTES // per_wave)
            for s in range(0, len(idx), step):
                chunk = [vectors[i] for i in idx[s : s + step]]
                try:
                    tiles = [self._place(ks.shape, inst, v) for v in chunk]
                except SmtmmaError as e:
                    raise DeviceError(f"device {self.name}: {e}") from None
                A, B, C = pack_tiles(lay, tiles, shift)
                D = self._launch(ks, lay, A, B, C, len(tiles), issues, pack_scales(lay, tiles))
                for i, d in zip(idx[s : s + step], check_tiles(self.name, lay, tiles, D, chunk)):
                    out[i] = d
        return out

    @staticmethod
    def _place(shape: InstrShape, inst: Instr, v: TestVector) -> Tile:
        """The replicated tile of one vector (with its scales for a block-scaled instruction)."""
        pad = padding_zero(get_format(inst.b_fmt))
        if inst.scale_fmt is not None:
            return place(shape, v.a, v.b, v.c, scale_a=v.scale_a, scale_b=v.scale_b, block=inst.block,
                         replicate=True, b_pad=pad)
        return place(shape, v.a, v.b, v.c, replicate=True, b_pad=pad)

    def close(self) -> None:
        """Forget the loaded kernel libraries."""
        self._libs.clear()


def _rocminfo_gpus() -> Optional[list[tuple[str, str]]]:
    """(gfx name, marketing name) of each GPU agent rocminfo lists, in order; None if rocminfo is missing or fails."""
    exe = shutil.which("rocminfo")
    if exe is None:
        cand = Path(os.environ.get("ROCM_PATH") or "/opt/rocm") / "bin" / "rocminfo"
        exe = str(cand) if cand.is_file() else None
    if exe is None:
        return None
    try:
        text = subprocess.run([exe], check=False, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_rocminfo(text)


def parse_rocminfo(text: str) -> list[tuple[str, str]]:
    """(gfx name, marketing name) of each GPU agent in ``rocminfo`` output, in order."""
    gpus = []
    for agent in re.split(r"^[ \t]*Agent \d+[ \t]*$", text, flags=re.M)[1:]:
        name = re.search(r"^\s*Name:\s*(\S+)", agent, re.M)
        kind = re.search(r"^\s*Device Type:\s*(\S+)", agent, re.M)
        market = re.search(r"^\s*Marketing Name:\s*(.+?)\s*$", agent, re.M)
        if name and kind and kind.group(1) == "GPU" and name.group(1).startswith("gfx"):
            gpus.append((name.group(1), market.group(1) if market else ""))
    return gpus
