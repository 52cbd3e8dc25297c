"""The compiled-kernel cache cannot lie: damaged or foreign objects, wrong bits, races, unusable folders, cold caches.

Cases that could end a process (a truncated object mapped by ``dlopen``
raises SIGBUS) run in a subprocess; each one checks the answer's bits
against the NumPy interpretation and the warnings it gave.  Kernels build
at -O0 (same bits, a fraction of the compile time).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest

from smtmma.catalogue import lookup
from smtmma.native import build
from smtmma.native import kernels
from smtmma.native.kernels import NativeFallbackWarning
from smtmma.sampling import draw
from smtmma.simulate import simulate_dot

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

#: One process: sm90 f16f32 dot products of each length in argv through the compiled kernel, against NumPy.
#: Prints {"same": [...], "warnings": [...], "paths": {K: cache file}, "idents": {K: identity}}.
_RUN = r"""
import json, os, sys, warnings
import numpy as np
if os.environ.get("FAKE_FULL"):  # the cache's disk is full: its writes fail when flushed
    import errno
    real_fsync, full = os.fsync, os.path.realpath(os.environ["FAKE_FULL"])
    def fsync(fd):
        if os.path.realpath(os.readlink(f"/proc/self/fd/{fd}")).startswith(full + os.sep):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)
    os.fsync = fsync
from smtmma.catalogue import lookup
from smtmma.native import build
from smtmma.native.kernels import source_of
from smtmma.sampling import draw
from smtmma.simulate import simulate_dot
model = lookup("sm90", "f16f32").model
out = {"same": [], "warnings": [], "paths": {}, "idents": {}}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for K in map(int, sys.argv[1:]):
        rng = np.random.default_rng(K)
        a, b, c = draw("normal", "fp16", (40, K), rng), draw("normal", "fp16", (40, K), rng), draw("normal", "fp32", (40,), rng)
        got = simulate_dot(model, None, a, b, c, backend="native")
        out["same"].append(bool(np.array_equal(got, simulate_dot(model, None, a, b, c, backend="numpy"))))
        text = source_of(model, K).text
        out["paths"][K] = str(build.cached_path(text))
        out["idents"][K] = build.identity(text, build.compiler())
out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
print(json.dumps(out))
"""


def _env(cache: object, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMTMMA_")}
    env.update(SMTMMA_CACHE=str(cache), SMTMMA_CC_OPT="-O0", **extra)
    return env


def _run(cache: object, *Ks: int, **extra: str) -> dict[str, Any]:
    """_RUN in a fresh process; fails the test (with its stderr) when the process does not end normally."""
    proc = subprocess.run([sys.executable, "-c", _RUN, *map(str, Ks)], env=_env(cache, **extra), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def _start(cache: object, *Ks: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _RUN, *map(str, Ks)], env=_env(cache), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cache holding the sm90 f16f32 kernels of K = 16 and K = 8, and what _RUN said building them."""
    cache = tmp_path_factory.mktemp("built")
    out = _run(cache, 16, 8)
    assert out["same"] == [True, True] and out["warnings"] == []
    return cache, out


def _copy(built: tuple[Path, dict[str, Any]], dest: Path) -> tuple[Path, Path, Path, str]:
    """(cache folder, K=16 file, K=8 file, K=16 identity) of a copy of the built cache at ``dest``."""
    cache, out = built
    shutil.copytree(cache, dest)
    p16, p8 = (dest / Path(out["paths"][k]).name for k in ("16", "8"))
    return dest, p16, p8, out["idents"]["16"]


def _sound(path: Path, ident: Optional[str] = None) -> bool:
    return build.check_entry(path.read_bytes(), ident) is None


# -- damaged and foreign objects -------------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_kernel_is_rebuilt_not_loaded(built: tuple[Path, dict[str, Any]], tmp_path: Path, damage: str) -> None:
    """A truncated object (whose dlopen raised SIGBUS) or garbage under the right name: checked before it is mapped,
    deleted, built again; right bits, no warning, a sound file in its place."""
    cache, p16, _, ident = _copy(built, tmp_path / "cache")
    data = p16.read_bytes()
    p16.write_bytes(data[: len(data) * 2 // 5] if damage == "truncated" else os.urandom(len(data)))
    out = _run(cache, 16)
    assert out["same"] == [True] and out["warnings"] == []
    assert _sound(p16, ident)


def test_kernel_of_another_model_under_the_key_is_rebuilt(built: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A sound object of another kernel (K = 8) copied under K = 16's name loads fine but answers wrong: its
    identity is checked, it is replaced by the right kernel, the bits are right."""
    cache, p16, p8, ident = _copy(built, tmp_path / "cache")
    shutil.copyfile(p8, p16)
    assert build.check_entry(p16.read_bytes(), ident) is not None and _sound(p16)  # sound, but not K = 16's
    out = _run(cache, 16)
    assert out["same"] == [True] and out["warnings"] == []
    assert _sound(p16, ident)


def test_a_sound_cache_is_used_as_is(built: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """No rebuild of a sound entry: the file is the same one after use, and nothing else is left in the folder."""
    cache, p16, _, _ = _copy(built, tmp_path / "cache")
    before = p16.stat().st_ino, p16.read_bytes()
    assert _run(cache, 16)["same"] == [True]
    assert (p16.stat().st_ino, p16.read_bytes()) == before
    assert sorted(p.name for p in cache.iterdir()) == sorted(p.name for p in built[0].iterdir())


# -- what a kernel computes ------------------------------------------------------------------------------------------
class _Corrupting:
    """A loaded library whose ``smtmma_rows`` flips the low bit of every D (a kernel with the right identity and wrong
    bits: a damaged build the file checks cannot see)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        real = lib.smtmma_rows

        class Rows:
            argtypes: object = None
            restype: object = None

            def __call__(self, n: int, *args: object) -> None:
                real.argtypes, real.restype = self.argtypes, self.restype
                real(n, *args)
                d = (ctypes.c_uint32 * n).from_address(int(args[5]))  # type: ignore[call-overload]
                for i in range(n):
                    d[i] ^= 1

        self.smtmma_rows = Rows()

    def __getattr__(self, name: str) -> object:
        return getattr(self._lib, name)


def _patch_load(monkeypatch: pytest.MonkeyPatch, corrupt: Callable[[bool], bool]) -> list[bool]:
    """kernels.load through _Corrupting where ``corrupt(rebuild)``; returns the list of rebuild flags it was called with."""
    calls: list[bool] = []
    real = build.load

    def load(text: str, *, rebuild: bool = False) -> object:
        calls.append(rebuild)
        lib = real(text, rebuild=True) if rebuild else real(text)
        return _Corrupting(lib) if corrupt(rebuild) else lib
    monkeypatch.setattr(kernels, "load", load)
    return calls


def _native_vs_numpy(K: int) -> tuple[np.ndarray, np.ndarray]:
    model = lookup("sm90", "f16f32").model
    rng = np.random.default_rng(3)
    a, b, c = draw("normal", "fp16", (40, K), rng), draw("normal", "fp16", (40, K), rng), draw("normal", "fp32", (40,), rng)
    return simulate_dot(model, None, a, b, c, backend="native"), simulate_dot(model, None, a, b, c, backend="numpy")


def test_self_test_rebuilds_a_kernel_that_gives_wrong_bits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """First load: wrong bits; the self-test sees it, the kernel is built again and gives NumPy's bits."""
    monkeypatch.setenv("SMTMMA_CACHE", str(tmp_path))
    monkeypatch.setenv("SMTMMA_CC_OPT", "-O0")
    calls = _patch_load(monkeypatch, lambda rebuild: not rebuild)
    got, want = _native_vs_numpy(5)  # K = 5: a kernel no other test loads in this process
    assert np.array_equal(got, want)
    assert calls == [False, True]


def test_self_test_refuses_a_kernel_wrong_twice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Wrong after the rebuild too: refused with one warning naming it; NumPy answers (right bits)."""
    monkeypatch.setenv("SMTMMA_CACHE", str(tmp_path))
    monkeypatch.setenv("SMTMMA_CC_OPT", "-O0")
    calls = _patch_load(monkeypatch, lambda rebuild: True)
    with pytest.warns(NativeFallbackWarning, match=r"K = 6, gives other bits .* self-test"):
        got, want = _native_vs_numpy(6)
    assert np.array_equal(got, want)
    assert calls == [False, True]


# -- writers ---------------------------------------------------------------------------------------------------------
def test_concurrent_builders_each_get_a_sound_kernel(tmp_path: Path) -> None:
    """Three processes build the same kernel into an empty cache at once: all right, one sound file, no leftovers."""
    procs = [_start(tmp_path, 12) for _ in range(3)]
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr[-2000:]
        out = json.loads(stdout.splitlines()[-1])
        assert out["same"] == [True] and out["warnings"] == []
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 1 and files[0].endswith(".so"), files
    assert _sound(tmp_path / files[0], out["idents"]["12"])


# -- unusable cache folders ------------------------------------------------------------------------------------------
def _bad_cache(kind: str, tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("not a folder")
    if kind == "a file":
        return tmp_path / "file"
    if kind == "under a file":
        return tmp_path / "file" / "kernels"
    path = tmp_path / "ro"
    path.mkdir()
    path.chmod(0o555)
    return path


@pytest.mark.parametrize("kind", ["a file", "under a file", "read-only"])
def test_unusable_cache_falls_back_to_a_private_one(tmp_path: Path, kind: str) -> None:
    """SMTMMA_CACHE naming a file, a path under a file, or a read-only folder: one warning naming the variable,
    the kernel built in a private temporary cache (deleted at exit), right bits, no traceback."""
    if kind == "read-only" and os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    bad = _bad_cache(kind, tmp_path)
    out = _run(bad, 16)
    assert out["same"] == [True]
    assert len(out["warnings"]) == 1 and out["warnings"][0].startswith("CacheFallbackWarning: smtmma: SMTMMA_CACHE=")
    private = Path(out["paths"]["16"]).parent
    assert private != bad and not private.exists()  # deleted when the process ended


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="simulates a full disk through /proc/self/fd")
def test_full_cache_falls_back_to_a_private_one(tmp_path: Path) -> None:
    """The cache's disk is full (its writes fail with ENOSPC): one warning naming SMTMMA_CACHE and the reason,
    the kernel built in a private cache, right bits, nothing left in the full folder."""
    out = _run(tmp_path, 16, FAKE_FULL=str(tmp_path))
    assert out["same"] == [True]
    assert len(out["warnings"]) == 1 and "SMTMMA_CACHE=" in out["warnings"][0] and "No space left" in out["warnings"][0]
    assert list(tmp_path.iterdir()) == []


# -- documented compiler settings -----------------------------------------------------------------------------------
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 targets")
@pytest.mark.parametrize("march,lanes", [("none", 4), ("x86-64-v3", 8), ("x86-64-v4", 16)])
def test_vector_loops_fit_the_target(monkeypatch: pytest.MonkeyPatch, march: str, lanes: int) -> None:
    """SMTMMA_CC_MARCH=none (SSE2) or an AVX2 target: vectors of one register (16 lanes took over 8 minutes to build
    at -O3 with SSE2, 24 s with AVX2, and ran slower than scalar code there)."""
    monkeypatch.setenv("SMTMMA_CC_MARCH", march)
    assert kernels.source_of(lookup("sm90", "f16f32").model, 16).lanes == lanes


def test_sse2_kernel_gives_numpy_bits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The narrow-target kernel (4 lanes with SSE2, or the baseline of another machine) against NumPy."""
    monkeypatch.setenv("SMTMMA_CACHE", str(tmp_path))
    monkeypatch.setenv("SMTMMA_CC_OPT", "-O0")
    monkeypatch.setenv("SMTMMA_CC_MARCH", "none")
    got, want = _native_vs_numpy(9)  # 40 rows: whole groups of lanes, a tail
    assert np.array_equal(got, want)


# -- a cold cache ----------------------------------------------------------------------------------------------------
def test_cold_cache_small_inputs_compile_nothing(tmp_path: Path) -> None:
    """A one-line `smtmma check`, a one-row simulate_dot and a 2x2 matmul with an empty cache: NumPy answers, no
    kernel is compiled (the cache folder is not even made)."""
    cache = tmp_path / "kernels"
    line = {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"], "c": "00000000", "d": "3f800008"}
    (tmp_path / "one.jsonl").write_text(json.dumps(line) + "\n")
    proc = subprocess.run([sys.executable, "-m", "smtmma", "check", str(tmp_path / "one.jsonl")], env=_env(cache),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1 matched" in proc.stdout
    code = ("import numpy as np, smtmma\n"
            "d = smtmma.simulate_dot('sm90', 'f16f32', [[0x3c00]], [[0x3c00]], [0])\n"
            "m = smtmma.matmul('sm90', 'f16f32', np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))\n"
            "assert int(d[0]) == 0x3f800000 and (m == 2).all()\n")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(cache), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not cache.exists() or list(cache.iterdir()) == []
