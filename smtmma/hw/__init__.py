"""Devices that run test vectors: the simulator, NVIDIA Tensor Cores (CUDA), AMD Matrix Cores (HIP).

One interface, :class:`~smtmma.hw.device.Device` (``run(vectors) -> D bits``),
opened by name with :func:`~smtmma.hw.device.open_device` (``sim:ARCH``,
``sim:ARCH/OP``, ``sim:MODEL-SPEC``, ``cuda[:N]``, ``hip[:N]``); recording
(:mod:`smtmma.hw.record`), randomized validation with shrinking
(:mod:`smtmma.hw.validate`) and the kernel sources (:mod:`smtmma.hw.kernels`)
sit on it.  The core package never imports this subpackage; CuPy and hipcc
are looked for only when a GPU device is opened.
"""

from .device import Device, DeviceError, SimDevice, open_device

__all__ = ["Device", "DeviceError", "SimDevice", "open_device"]
