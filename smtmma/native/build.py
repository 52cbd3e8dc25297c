"""Compiling generated C with the system compiler, caching the shared objects on disk, loading them with ctypes.

Cache: ``$SMTMMA_CACHE`` or ``$XDG_CACHE_HOME/smtmma`` (default
``~/.cache/smtmma``), one ``<digest>.so`` per kernel, the digest covering
the generated text, the generator version, the compiler and its flags.  A
build writes to a temporary name and renames it, so concurrent processes
never load half a file.
"""

from __future__ import annotations

import ctypes
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
CFLAGS = ("-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing", "-std=gnu11")

#: Optimization level unless ``$SMTMMA_CC_OPT`` says otherwise (-O1 runs within ~10% of -O2/-O3 on these
#: straight-line kernels and compiles 4x faster; the differential tests use -O0, which builds 4x faster again).
DEFAULT_OPT = "-O1"


def flags() -> tuple[str, ...]:
    """Compiler flags of a build now: the optimization level (``$SMTMMA_CC_OPT``, default -O1), then CFLAGS."""
    opt = os.environ.get("SMTMMA_CC_OPT") or DEFAULT_OPT
    if opt not in ("-O0", "-O1", "-O2", "-O3", "-Os"):
        raise BuildError(f"SMTMMA_CC_OPT must be one of -O0 -O1 -O2 -O3 -Os, got {opt!r}")
    return (opt, *CFLAGS)


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
    tag = f"{cc}\n{' '.join(flags())}\n{platform.machine()}\n{text}"
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
        proc = subprocess.run([cc, *flags(), "-o", str(obj), str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
            raise BuildError(f"{os.path.basename(cc)} failed on a generated kernel: {first}")
        fd, part = tempfile.mkstemp(dir=out.parent, prefix=out.name, suffix=".part")
        os.close(fd)
        shutil.copyfile(obj, part)
        os.replace(part, out)


def load(text: str) -> ctypes.CDLL:
    """The loaded library of ``text``, compiled now if it is not cached (BuildError when it cannot be)."""
    digest = hashlib.sha256(f"{flags()}\n{text}".encode()).hexdigest()
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
