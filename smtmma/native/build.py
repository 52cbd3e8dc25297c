"""Compiling generated C with the system compiler, caching the shared objects on disk, loading them with ctypes.

Cache: ``$SMTMMA_CACHE`` or ``$XDG_CACHE_HOME/smtmma/kernels`` (default
``~/.cache/smtmma/kernels``), one ``<key>.so`` per kernel.  The key is the
first 32 hex digits of the kernel's *identity*: the SHA-256 of the
generated text, the compiler, its flags, the machine and the CPU.  The
cache is never trusted blindly:

* the identity is compiled into the object (``const char smtmma_identity[]``)
  and written again in a trailer after the ELF bytes (the loader ignores
  bytes past the sections): magic, identity, SHA-256 and length of the
  object bytes (:func:`check_entry`).  A file is read and checked before it
  is mapped, so a truncated or damaged object (whose ``dlopen`` could end
  the process with SIGBUS) or the object of another kernel is never loaded;
  what is loaded is a private copy of the bytes checked, and its
  ``smtmma_identity`` is compared once more after loading.  A file that
  fails is deleted and the kernel built again, once; a second failure is a
  :class:`BuildError`.
* a build compiles in a private folder inside the cache, appends the
  trailer, fsyncs and renames the file into place: every name in the cache
  is always a complete file, and processes building the same kernel at once
  each end with a valid one (the last rename wins; both are the same).
* an unusable cache folder (a file, not writable, full) is replaced, after
  one :class:`CacheFallbackWarning` naming it, by a private temporary
  folder deleted when the process exits.

What a kernel computes is checked where the model is known
(:func:`smtmma.native.kernels.kernel`: a few fixed vectors against NumPy).
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Optional

from ..errors import user_stacklevel

__all__ = ["BuildError", "CacheFallbackWarning", "compiler", "cache_dir", "load", "cached_path", "check_entry",
           "identity", "CFLAGS", "flags", "vector_bits", "TRAILER_MAGIC", "TRAILER_BYTES"]

#: Flags of every build: shared, and signed overflow defined (the generated code never overflows; this keeps it so).
CFLAGS = ("-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing", "-std=gnu11", "-Wno-psabi")

#: Optimization level unless ``$SMTMMA_CC_OPT`` says otherwise: -O3 for units with vector loops (5-15% faster
#: than -O1, e.g. sm90 e4m3f32 K=32 16.0 vs 14.0 M/s, for 1.3-1.5x the build time: 1-12 s per kernel, once),
#: -O1 for scalar ones (the multi-limb kernels ran up to 15% slower at -O3); the differential tests use -O0.
#: Build times per setting: benchmarks/build_times.py.
DEFAULT_OPT = {"vector": "-O3", "scalar": "-O1"}

#: Target of the vector code unless ``$SMTMMA_CC_MARCH`` says otherwise ("none": the compiler's default, SSE2 on
#: x86-64).  The lane-parallel loops run ~6x faster with AVX2/AVX-512 than with SSE2 (benchmarks/simulate.py).
DEFAULT_MARCH = "native"

#: First bytes of the trailer after a cached object's ELF bytes.
TRAILER_MAGIC = b"\n#smtmma-kernel-v1 "
#: Trailer: magic, identity (64 hex digits), SHA-256 of the object bytes (64), their length (16 hex digits), newline.
TRAILER_BYTES = len(TRAILER_MAGIC) + 64 + 1 + 64 + 1 + 16 + 1


def flags(text: str = "") -> tuple[str, ...]:
    """Compiler flags of a build of ``text`` now: the optimization level (``$SMTMMA_CC_OPT``, default by
    :data:`DEFAULT_OPT`), the target (``-march=$SMTMMA_CC_MARCH``, default native), then CFLAGS."""
    opt = os.environ.get("SMTMMA_CC_OPT") or DEFAULT_OPT["vector" if "SMTMMA_VLANES" in text else "scalar"]
    if opt not in ("-O0", "-O1", "-O2", "-O3", "-Os"):
        raise BuildError(f"SMTMMA_CC_OPT must be one of -O0 -O1 -O2 -O3 -Os, got {opt!r}")
    return (opt, *_target(), *CFLAGS)


def _target() -> tuple[str, ...]:
    """The -march flag of ``$SMTMMA_CC_MARCH`` (default native; none for "none")."""
    march = os.environ.get("SMTMMA_CC_MARCH") or DEFAULT_MARCH
    if not march.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise BuildError(f"SMTMMA_CC_MARCH must name a target (e.g. native, x86-64-v3, none), got {march!r}")
    return () if march == "none" else (f"-march={march}",)


def vector_bits() -> int:
    """Width (bits) of the integer vector registers of the build target now (``$SMTMMA_CC_MARCH``): 512 with
    AVX-512, 256 with AVX2, else 128 (SSE2, NEON, a compiler that cannot say).  The vector loops take as many
    lanes as fill one register: wider generic vectors are split by the compiler, which multiplied build times
    (sm90 f16f32 K=16, 16 lanes at -O3: 2.5 s with AVX-512, 24 s with AVX2, over 8 minutes with SSE2) and ran
    slower than the scalar loops (AVX2: 5.5 M/s, 8 lanes 26 M/s, scalar 11 M/s)."""
    cc = compiler()
    if cc is None:
        return 128
    return _vector_bits(cc, _target())


@functools.lru_cache(maxsize=None)
def _vector_bits(cc: str, target: tuple[str, ...]) -> int:
    try:
        proc = subprocess.run([cc, *target, "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 128
    if proc.returncode != 0:  # no such -march: the build drops it (see _compile), so the baseline it is
        return 128 if target == () else _vector_bits(cc, ())
    macros = set(ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("#define "))
    return 512 if "__AVX512F__" in macros else 256 if "__AVX2__" in macros else 128


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
    """No compiled kernel here: no C compiler, the compiler rejected the generated source, no usable cache, or
    the kernel failed its checks twice (message: one line saying which)."""


class CacheFallbackWarning(RuntimeWarning):
    """The kernel cache folder is unusable; kernels go to a private temporary folder for this process."""


_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.RLock()
_private: list[Path] = []  # this process's temporary cache, once made
_fallback: dict[str, Path] = {}  # unusable cache folder -> the private one used instead


def compiler() -> Optional[str]:
    """Path of the C compiler used (``$CC``, else cc/gcc/clang on PATH), or None when there is none."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name:
            found = shutil.which(name)
            if found:
                return found
    return None


def _configured() -> tuple[Path, str]:
    """(the cache folder asked for, how to name it in a message)."""
    root = os.environ.get("SMTMMA_CACHE")
    if root:
        return Path(root), f"SMTMMA_CACHE={root}"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "smtmma" / "kernels"
    return path, f"the kernel cache {path} (set SMTMMA_CACHE to a writable folder)"


def _problem(path: Path) -> Optional[str]:
    """Why ``path`` cannot hold the cache (None: it can; it is created if missing)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return e.strerror or str(e)
    if not path.is_dir():
        return "not a folder"
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable"
    return None


def _private_dir() -> Path:
    """This process's temporary cache folder (made on first use, deleted at exit)."""
    if not _private:
        path = Path(tempfile.mkdtemp(prefix="smtmma-kernels-"))
        atexit.register(shutil.rmtree, path, True)
        _private.append(path)
    return _private[0]


def _fall_back(path: Path, named: str, why: str) -> Path:
    """The private folder used instead of ``path``, after one warning (BuildError when none can be made)."""
    try:
        private = _private_dir()
    except OSError as e:
        raise BuildError(f"no usable kernel cache: {named} is unusable ({why}) and no temporary folder can be made "
                         f"({e.strerror or e})") from None
    if str(path) not in _fallback:
        _fallback[str(path)] = private
        warnings.warn(f"smtmma: {named} is unusable ({why}); compiled kernels go to a private temporary cache for "
                      f"this process ({private})", CacheFallbackWarning, stacklevel=user_stacklevel())
    return private


def cache_dir() -> Path:
    """Folder of the compiled kernels (created on first use); a private temporary one, after one
    CacheFallbackWarning, when the configured one is unusable."""
    path, named = _configured()
    if str(path) in _fallback:
        return _fallback[str(path)]
    why = _problem(path)
    return path if why is None else _fall_back(path, named, why)


def identity(text: str, cc: str) -> str:
    """SHA-256 (64 hex digits) of a build of ``text`` with compiler ``cc`` now: the text, the flags, the machine
    and the CPU.  Its first 32 digits name the cache file; the whole is compiled into it."""
    tag = f"{cc}\n{' '.join(flags(text))}\n{platform.machine()}\n{_cpu()}\n{text}"
    return hashlib.sha256(tag.encode()).hexdigest()


def cached_path(text: str) -> Optional[Path]:
    """Where the shared object of ``text`` is cached, if a file is there (None otherwise, or without a compiler).

    Existence only (no folder is created, nothing is read): :func:`load` checks the file before using it.
    """
    cc = compiler()
    if cc is None:
        return None
    path, _ = _configured()
    folder = _fallback.get(str(path), path)
    found = folder / f"{identity(text, cc)[:32]}.so"
    return found if found.is_file() else None


def _trailer(ident: str, body: bytes) -> bytes:
    return TRAILER_MAGIC + f"{ident} {hashlib.sha256(body).hexdigest()} {len(body):016x}\n".encode()


def check_entry(data: bytes, ident: Optional[str] = None) -> Optional[str]:
    """Why the bytes of a cache file are not a complete object of kernel ``ident`` (None: they are).

    ``ident``: the expected :func:`identity` (None: any).  Checks the
    trailer's magic, the length and SHA-256 of the object bytes, the identity.
    """
    if len(data) < TRAILER_BYTES:
        return f"{len(data)} bytes: shorter than a trailer"
    body, tail = data[:-TRAILER_BYTES], data[-TRAILER_BYTES:]
    if not tail.startswith(TRAILER_MAGIC):
        return "no smtmma trailer (truncated, damaged or not written by smtmma)"
    fields = tail[len(TRAILER_MAGIC):].decode("ascii", "replace").split()
    if len(fields) != 3:
        return "malformed trailer"
    stored, digest, length = fields
    if length != f"{len(body):016x}":
        return f"object is {len(body)} bytes, its trailer says {length}"
    if digest != hashlib.sha256(body).hexdigest():
        return "object bytes do not match their SHA-256 (damaged)"
    if ident is not None and stored != ident:
        return f"the object of another kernel (identity {stored[:12]}..., expected {ident[:12]}...)"
    return None


def _dlopen(path: Path, ident: str) -> tuple[Optional[ctypes.CDLL], Optional[str]]:
    """(the library at ``path``, None) or (None, why it is not the kernel ``ident``).

    ``path`` must be a name no library of this process had before: the
    loader answers a name it has seen with the library it loaded then.
    """
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        return None, f"cannot be loaded ({str(e).splitlines()[0]})"
    try:
        inside = (ctypes.c_char * 64).in_dll(lib, "smtmma_identity").raw.decode("ascii", "replace")
    except ValueError:
        return None, "has no smtmma_identity"
    if inside != ident:
        return None, f"holds smtmma_identity {inside[:12]}..., expected {ident[:12]}..."
    return lib, None


def _write_new(path: Path, data: bytes) -> None:
    """Write a new file ``path`` (not there before) and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _load_cached(path: Path, folder: Path, ident: str) -> Optional[ctypes.CDLL]:
    """The library of a sound cache file (None when there is none, or after deleting an unsound one).

    The file is read once and its bytes checked (:func:`check_entry`), then
    loaded from a private copy of those bytes: never a file that changed
    after the check, never a name the loader has seen (OSError: the copy
    cannot be written).
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
            seen = os.fstat(f.fileno())
    except FileNotFoundError:
        return None
    why = check_entry(data, ident)
    lib = None
    if why is None:
        work = Path(tempfile.mkdtemp(dir=folder, prefix=".load-"))
        try:
            copy = work / path.name
            _write_new(copy, data)
            lib, why = _dlopen(copy, ident)
        finally:
            shutil.rmtree(work, ignore_errors=True)  # the mapping outlives the name
    if why is not None:  # delete it, unless another process has put a new file there meanwhile
        try:
            now = os.stat(path)
            if (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev):
                path.unlink()
        except OSError:
            pass
    return lib


def _compile(text: str, cc: str, work: Path) -> bytes:
    """The shared object of ``text`` (its bytes), compiled in the folder ``work``."""
    src = work / "kernel.c"
    src.write_text(text)
    obj = work / "kernel.so"
    args = flags(text)
    proc = subprocess.run([cc, *args, "-o", str(obj), str(src)], capture_output=True, text=True)
    if proc.returncode != 0 and not os.environ.get("SMTMMA_CC_MARCH"):  # a compiler that has no -march=native
        args = tuple(f for f in args if not f.startswith("-march="))
        proc = subprocess.run([cc, *args, "-o", str(obj), str(src)], capture_output=True, text=True)
    if proc.returncode != 0:
        if "No space left" in proc.stderr or "Disk quota" in proc.stderr:
            raise OSError(errno.ENOSPC, "No space left on device")
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
        raise BuildError(f"{os.path.basename(cc)} failed on a generated kernel: {first}")
    return obj.read_bytes()


#: Work folders (``.build-*``, ``.load-*``) older than this are left over from a killed process: deleted (seconds).
STALE_S = 3600


def _sweep(folder: Path) -> None:
    """Delete work folders that a killed process left in the cache."""
    try:
        for entry in os.scandir(folder):
            if entry.name.startswith((".build-", ".load-")) and time.time() - entry.stat().st_mtime > STALE_S:
                shutil.rmtree(entry.path, ignore_errors=True)
    except OSError:
        pass


def _build_into(folder: Path, text: str, cc: str, ident: str) -> ctypes.CDLL:
    """Compile ``text`` in ``folder``, load it and rename it into place: a complete, checked file or none
    (OSError: the folder failed; BuildError: the compiler did, or the new object is not the kernel)."""
    unit = (f"{text}\n/* identity of this build (smtmma.native.build) */\n"
            f"__attribute__((used, visibility(\"default\"))) const char smtmma_identity[] = \"{ident}\";\n")
    _sweep(folder)
    work = Path(tempfile.mkdtemp(dir=folder, prefix=".build-"))
    try:
        body = _compile(unit, cc, work)
        data = body + _trailer(ident, body)
        part = work / f"{ident[:32]}.so"  # a new name: the loader has not seen it
        _write_new(part, data)
        lib, why = _dlopen(part, ident)
        if lib is None:
            raise BuildError(f"the kernel just built {why}")
        os.replace(part, folder / part.name)
        return lib
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _load_in(folder: Path, text: str, cc: str, ident: str, rebuild: bool) -> ctypes.CDLL:
    """The kernel from ``folder``'s cache, else built there (OSError: the folder failed)."""
    if not rebuild:
        lib = _load_cached(folder / f"{ident[:32]}.so", folder, ident)
        if lib is not None:
            return lib
    return _build_into(folder, text, cc, ident)


def load(text: str, *, rebuild: bool = False) -> ctypes.CDLL:
    """The loaded library of ``text``: from the cache after checking the file, else compiled now (BuildError when
    it cannot be).  ``rebuild``: compile it again even if a cached object is sound (a kernel that failed a check
    of what it computes); the new library replaces the one this process had loaded."""
    digest = hashlib.sha256(f"{flags(text)}\n{text}".encode()).hexdigest()
    with _lock:
        lib = _loaded.get(digest)
        if lib is not None and not rebuild:
            return lib
        cc = compiler()
        if cc is None:
            raise BuildError("no C compiler on PATH (set CC, or install gcc or clang)")
        ident = identity(text, cc)
        folder = cache_dir()
        try:
            lib = _load_in(folder, text, cc, ident, rebuild)
        except OSError as e:  # the folder is full or became unwritable: the private one, once
            path, named = _configured()
            if folder == _fallback.get(str(path)):
                raise BuildError(f"cannot write a compiled kernel into {folder}: {e.strerror or e}") from None
            private = _fall_back(path, named, e.strerror or str(e))
            try:
                lib = _load_in(private, text, cc, ident, rebuild)
            except OSError as e2:
                raise BuildError(f"cannot write a compiled kernel into {private}: {e2.strerror or e2}") from None
        _loaded[digest] = lib
        return lib
