"""Devices that run test vectors, behind one interface: ``run(vectors) -> D bits``.

A device is named on the command line as

* ``sim:ARCH``, ``sim:ARCH/OP``: the catalogue's model of that architecture
  (and op family or instruction name) for each vector's instruction;
* ``sim:MODEL-SPEC`` (e.g. ``sim:t-fdpa:L=8,F=24,rho=rz-fp32``): that model,
  with the operand formats of each vector's instruction;
* ``cuda`` / ``cuda:N``: NVIDIA Tensor Cores of GPU N (:mod:`smtmma.hw.cuda`);
* ``hip`` / ``hip:N``: AMD Matrix Cores (:mod:`smtmma.hw.hip`);
* ``python:MODULE:FUNCTION[@MxNxK]``: any GEMM ``fn(A, B, C)``
  (:mod:`smtmma.hw.python_device`).

Every device returns, for each vector, the D pattern (int) of its dot
product in the D format of the vector's instruction (E8M13 results in their
FP32 container).  The core package never imports this subpackage.
"""

from __future__ import annotations

import abc
from typing import Optional, Sequence

import numpy as np

from ..catalogue import ARCHS, entries, lookup, model_of, is_arch_name, split_arch_op
from ..errors import InputError, SmtmmaError, UnknownNameError, did_you_mean, unknown_name
from ..models import Model, parse_model_spec
from ..check import simulate_with
from ..simulate import simulate_dot
from ..vectors import TestVector

__all__ = ["Device", "DeviceError", "SimDevice", "open_device", "DEVICE_KINDS"]

#: What a device name may start with, for error messages.
DEVICE_KINDS = ("sim:ARCH", "sim:ARCH/OP", "sim:MODEL-SPEC", "cuda", "cuda:N", "hip", "hip:N", "python:MODULE:FUNCTION")


class DeviceError(SmtmmaError, RuntimeError):
    """A device that cannot run: its toolkit is missing, it lacks the instruction, or a launch failed."""


class Device(abc.ABC):
    """Runs dot-product test vectors; ``name`` as given, ``description`` for reports, ``arch`` when known.

    ``hardware`` is True for real GPUs: their ``arch`` is read from the
    device, and a command asking for another architecture is refused.
    """

    name: str
    description: str
    arch: Optional[str] = None
    op: Optional[str] = None  # the op family or instruction it runs, when fixed (sim:ARCH/OP)
    hardware: bool = False

    @abc.abstractmethod
    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        """D pattern of each vector (in order), as the device computes it."""

    def run_arrays(self, arch: str, instr: str, op: Optional[str], a: np.ndarray, b: np.ndarray, c: np.ndarray,
                   scale_a: Optional[np.ndarray] = None, scale_b: Optional[np.ndarray] = None) -> np.ndarray:
        """D patterns (uint64) of a batch of dot products of one instruction: a, b (n, K), c (n,), scales (n, blocks).

        The default builds a :class:`TestVector` per row and calls :meth:`run`.
        """
        e = lookup(arch, instr, op)
        vs = [TestVector(i + 1, e.arch, e.instr, e.op, tuple(int(x) for x in a[i]), tuple(int(x) for x in b[i]), int(c[i]),
                         scale_a=None if scale_a is None else tuple(int(x) for x in scale_a[i]),
                         scale_b=None if scale_b is None else tuple(int(x) for x in scale_b[i]),
                         raw={"op": op} if op else {})
              for i in range(len(c))]
        return np.array(self.run(vs), dtype=np.uint64)

    def close(self) -> None:
        """Release what the device holds (nothing by default)."""


class SimDevice(Device):
    """The simulator as a device: a catalogue architecture (and op) or a model spec."""

    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self._spec: Optional[str] = None
        if is_arch_name(target):
            self.arch, self.op = split_arch_op(target)
            self.description = f"simulator: {self.arch}" + (f" ({self.op})" if self.op else "")
        else:
            self._spec = target
            self.description = f"simulator: {target}"
        self._models: dict[tuple[str, str, str], Model] = {}

    def model_for(self, v: TestVector) -> Model:
        """The model this device runs for vector ``v``'s instruction.

        ``sim:ARCH`` runs its default row (``sim:ARCH/OP``: that row), on the
        vector's instruction shape when the vector's ``op`` names one of this
        architecture's shapes (the row of that shape, whose L follows k).
        """
        raw = v.raw.get("op")
        key = (v.arch, v.instr, v.op, raw if isinstance(raw, str) else None)
        if key not in self._models:
            if self._spec is not None:
                try:
                    self._models[key] = parse_model_spec(self._spec, like=lookup(v.arch, v.instr, v.op).model)
                except SmtmmaError as e:
                    raise type(e)(f"device {self.name}: {e}") from None
            else:
                assert self.arch is not None
                try:
                    self._models[key] = model_of(self.arch, v.instr, self.op or self._vector_op(v))
                except SmtmmaError as e:
                    raise DeviceError(f"device {self.name}: {e}") from None
        return self._models[key]

    def _vector_op(self, v: TestVector) -> Optional[str]:
        """The instruction shape ``v`` names when this architecture has it, else None (the default row)."""
        assert self.arch is not None
        raw = v.raw.get("op")
        if isinstance(raw, str) and any(raw.strip().lower() == s.name.lower()
                                        for e in entries(self.arch, v.instr) for s in e.shapes):
            return raw.strip()
        return None

    def run_arrays(self, arch: str, instr: str, op: Optional[str], a: np.ndarray, b: np.ndarray, c: np.ndarray,
                   scale_a: Optional[np.ndarray] = None, scale_b: Optional[np.ndarray] = None) -> np.ndarray:
        """D patterns (uint64) of a batch, straight through the simulator (see :meth:`Device.run_arrays`)."""
        e = lookup(arch, instr, op)
        v = TestVector(0, e.arch, e.instr, e.op, (0,), (0,), 0)
        return simulate_dot(self.model_for(v), None, a, b, c, scale_a=scale_a, scale_b=scale_b).astype(np.uint64)

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        """D of each vector through the simulator, in batches of one model and one K."""
        out = [0] * len(vectors)
        groups: dict[tuple[Model, int], list[int]] = {}
        for i, v in enumerate(vectors):
            groups.setdefault((self.model_for(v), v.K), []).append(i)
        for (model, _), idx in groups.items():
            try:
                d = simulate_with(model, [vectors[i] for i in idx])
            except InputError as e:
                raise InputError(f"device {self.name}: {e}") from None
            for i, x in zip(idx, d.tolist()):
                out[i] = int(x)
        return out


def open_device(name: str) -> Device:
    """The device called ``name`` (see the module docstring); UnknownNameError / DeviceError otherwise."""
    text = name.strip()
    kind, colon, rest = text.partition(":")
    kind = kind.lower()
    if kind == "sim":
        if not rest.strip():
            raise UnknownNameError(f"device {name!r}: sim needs a target: sim:ARCH, sim:ARCH/OP or sim:MODEL-SPEC "
                                   f"(architectures: {', '.join(ARCHS)})")
        target = rest.strip()
        if not is_arch_name(target):
            # a model spec: check its kind now, so a typo fails before any vector runs
            from ..models import KINDS, canonical_kind

            if canonical_kind(target) is None:
                hint = did_you_mean(target.partition('/')[0], [*ARCHS, *(a for x in ARCHS.values() for a in x.aliases), *KINDS])
                raise UnknownNameError(f"device {name!r}: {target.partition('/')[0]!r} is neither an architecture "
                                       f"({', '.join(ARCHS)}) nor a model kind ({', '.join(KINDS)})" + (f"; {hint}" if hint else ""))
        return SimDevice(text, target)
    if kind == "cuda":
        from .cuda import CudaDevice

        return CudaDevice(text, _index(rest, name))
    if kind == "hip":
        from .hip import HipDevice

        return HipDevice(text, _index(rest, name))
    if kind == "python":
        from .python_device import open_python_device

        return open_python_device(text, rest)
    raise UnknownNameError(unknown_name("device", name, DEVICE_KINDS, aliases=("sim", "cuda", "hip", "python")))


def _index(text: str, name: str) -> int:
    t = text.strip()
    if not t:
        return 0
    if not t.isdigit():
        raise UnknownNameError(f"device {name!r}: the GPU index must be a number (e.g. cuda:0)")
    return int(t)
