"""Devices that run test vectors: the simulator, CUDA Tensor Cores, HIP Matrix Cores (later issue).

The core package never imports this subpackage.
"""
