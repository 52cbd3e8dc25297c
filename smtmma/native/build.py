"""Compiling generated C with the system compiler, caching the shared objects on disk, loading them with ctypes.

Cache: ``$SMTMMA_CACHE`` or ``$XDG_CACHE_HOME/smtmma`` (default
``~/.cache/smtmma``), one ``<digest>.so`` per kernel, the digest covering
the generated text, the generator version, the compiler and its flags.  A
build writes to a temporary name and renames it, so concurrent processes
never load half a file.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Optional

__all__ = ["BuildError", "compiler", "cache_dir", "load", "cached_path", "CFLAGS", "flags"]

#: Flags of every build: shared, and signed overflow defined (the generated code never overflows; this keeps it so).
CFLAGS = ("-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing", "-std=gnu11", "-Wno-psabi")

#: Optimization level unless ``$SMTMMA_CC_OPT`` says otherwise: -O3 for units with vector loops (5-15% faster
#: than -O1, e.g. sm90 e4m3f32 K=32 16.0 vs 14.0 M/s, for 1.3-1.5x the build time: 1-12 s per kernel, once),
#: -O1 for scalar ones (the multi-limb kernels ran up to 15% slower at -O3); the differential tests use -O0.
DEFAULT_OPT = {"vector": "-O3", "scalar": "-O1"}

#: Target of the vector code unless ``$SMTMMA_CC_MARCH`` says otherwise ("none": the compiler's default, SSE2 on
#: x86-64).  The lane-parallel loops run ~6x faster with AVX2/AVX-512 than with SSE2 (benchmarks/simulate.py).
DEFAULT_MARCH = "native"


def flags(text: str = "") -> tuple[str, ...]:
    """Compiler flags of a build of ``text`` now: the optimization level (``$SMTMMA_CC_OPT``, default by
    :data:`DEFAULT_OPT`), the target (``-march=$SMTMMA_CC_MARCH``, default native), then CFLAGS."""
    opt = os.environ.get("SMTMMA_CC_OPT") or DEFAULT_OPT["vector" if "SMTMMA_VLANES" in text else "scalar"]
    if opt not in ("-O0", "-O1", "-O2", "-O3", "-Os"):
        raise BuildError(f"SMTMMA_CC_OPT must be one of -O0 -O1 -O2 -O3 -Os, got {opt!r}")
    march = os.environ.get("SMTMMA_CC_MARCH") or DEFAULT_MARCH
    if not march.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise BuildError(f"SMTMMA_CC_MARCH must name a target (e.g. native, x86-64-v3, none), got {march!r}")
    target = () if march == "none" else (f"-march={march}",)
    return (opt, *target, *CFLAGS)


@functools.lru_cache(maxsize=None)
def _cpu() -> str:
    """What -march=native compiles for: the CPU's model and feature flags (Linux), else the platform's processor."""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read().split("\n\n", 1)[0]
        return "\n".join(ln for ln in info.splitlines() if ln.split(":")[0].strip() in ("model name", "flags", "Features", "CPU part"))
    except OSError:
        return platform.processor()


class BuildError(RuntimeError):
    """No C compiler, or the compiler rejected the generated source (message: its first line of complaint)."""


_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()


def compiler() -> Optional[str]:
    """Path of the C compiler used (``$CC``, else cc/gcc/clang on PATH), or None when there is none."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name:
            found = shutil.which(name)
            if found:
                return found
    return None


def cache_dir() -> Path:
    """Directory of the compiled kernels (created on first use)."""
    root = os.environ.get("SMTMMA_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "smtmma" / "kernels"


def _key(text: str, cc: str) -> str:
    tag = f"{cc}\n{' '.join(flags(text))}\n{platform.machine()}\n{_cpu()}\n{text}"
    return hashlib.sha256(tag.encode()).hexdigest()[:32]


def cached_path(text: str) -> Optional[Path]:
    """Where the shared object of ``text`` is cached, if it already is (None otherwise, or without a compiler)."""
    cc = compiler()
    if cc is None:
        return None
    path = cache_dir() / f"{_key(text, cc)}.so"
    return path if path.exists() else None


def _compile(text: str, cc: str, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="smtmma-cc-") as tmp:
        src = Path(tmp) / "kernel.c"
        src.write_text(text)
        obj = Path(tmp) / "kernel.so"
        args = flags(text)
        proc = subprocess.run([cc, *args, "-o", str(obj), str(src)], capture_output=True, text=True)
        if proc.returncode != 0 and not os.environ.get("SMTMMA_CC_MARCH"):  # a compiler that has no -march=native
            args = tuple(f for f in args if not f.startswith("-march="))
            proc = subprocess.run([cc, *args, "-o", str(obj), str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
            raise BuildError(f"{os.path.basename(cc)} failed on a generated kernel: {first}")
        fd, part = tempfile.mkstemp(dir=out.parent, prefix=out.name, suffix=".part")
        os.close(fd)
        shutil.copyfile(obj, part)
        os.replace(part, out)


def load(text: str) -> ctypes.CDLL:
    """The loaded library of ``text``, compiled now if it is not cached (BuildError when it cannot be)."""
    digest = hashlib.sha256(f"{flags(text)}\n{text}".encode()).hexdigest()
    with _lock:
        lib = _loaded.get(digest)
        if lib is not None:
            return lib
        cc = compiler()
        if cc is None:
            raise BuildError("no C compiler on PATH (set CC, or install gcc or clang)")
        path = cache_dir() / f"{_key(text, cc)}.so"
        if not path.exists():
            _compile(text, cc, path)
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:  # a corrupt cache entry: build it again once
            path.unlink(missing_ok=True)
            _compile(text, cc, path)
            try:
                lib = ctypes.CDLL(str(path))
            except OSError:
                raise BuildError(f"cannot load the compiled kernel {path}: {e}") from None
        _loaded[digest] = lib
        return lib
