"""The --device option: what it accepts, and opening the device with its errors as one line."""

from __future__ import annotations

import argparse
from typing import Optional

from ..catalogue import resolve_arch
from ..hw.device import Device, DeviceError, open_device

DEVICE_HELP = """\
devices (--device):
  sim:ARCH, sim:ARCH/OP     the simulator with a catalogue model (sim:sm90, sim:sm90/wgmma)
  sim:MODEL-SPEC            the simulator with any model (sim:t-fdpa:L=16,F=26,rho=rz-fp32)
  cuda, cuda:N              NVIDIA GPU N: Tensor Core kernels (inline PTX mma.sync, wgmma,
                            tcgen05.mma) compiled at run time with CuPy (pip install 'smtmma[cuda]')
  hip, hip:N                AMD GPU N: MFMA kernels built with hipcc (ROCm)
  python:MODULE:FUNCTION    your GEMM: FUNCTION(A, B, C) -> D from MODULE (the current folder is
                            searched), e.g. torch.matmul on your GPU or a library call; the
                            vectors go on the diagonal of GEMMs; @MxNxK picks the shape"""


def add_device_option(p: argparse.ArgumentParser) -> None:
    """``--device NAME`` (required)."""
    p.add_argument("--device", required=True, metavar="DEVICE", help="sim:ARCH, sim:ARCH/OP, sim:MODEL-SPEC, cuda[:N], hip[:N] or "
                                                             "python:MODULE:FUNCTION[@MxNxK]")


def open_for(name: str, arch: Optional[str] = None) -> Device:
    """The device ``name``; a GPU whose architecture is not ``arch`` (when given) is refused."""
    device = open_device(name)
    if arch is not None and device.hardware and device.arch is not None:
        want = resolve_arch(arch)
        if device.arch != want:
            device.close()
            raise DeviceError(f"device {name} is {device.description}, an {device.arch}, but --arch is {want}; "
                              f"give --arch {device.arch} (or use sim:{want} to run the {want} model)")
    return device
