"""Devices that run test vectors: the simulator, NVIDIA Tensor Cores (CUDA), AMD Matrix Cores (HIP).

One interface, :class:`~smtmma.hw.device.Device` (``run(vectors) -> D bits``),
opened by name with :func:`~smtmma.hw.device.open_device` (``sim:ARCH``,
``sim:ARCH/OP``, ``sim:MODEL-SPEC``, ``cuda[:N]``, ``hip[:N]``, ``python:MODULE:FUNCTION``:
any GEMM callable, :class:`~smtmma.hw.python_device.CallableDevice`); recording
(:mod:`smtmma.hw.record`), randomized validation with shrinking
(:mod:`smtmma.hw.validate`) and the kernel sources (:mod:`smtmma.hw.kernels`)
sit on it.  The core package never imports this subpackage; CuPy and hipcc
are looked for only when a GPU device is opened.
"""

from .device import Device, DeviceError, SimDevice, open_device
from .python_device import CallableDevice

__all__ = ["Device", "DeviceError", "SimDevice", "CallableDevice", "open_device"]
