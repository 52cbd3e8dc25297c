"""The compiled interpretation: the op definitions emitted as C (or CUDA C), built once, cached on disk.

:mod:`.source` runs :func:`smtmma.simulate.run_model` on the code-generating
algebra (:mod:`smtmma.encodings.ccode`) and wraps the straight-line body in
batch loops, which :mod:`.lanes` runs several dot products at a time on the
vector algebra (:mod:`smtmma.encodings.cvector`); :mod:`.build` compiles it with the system C compiler and loads
it with ctypes; :mod:`.dot` and :mod:`smtmma.matmul` call it.  :mod:`.cuda` emits
the same dot product as CUDA C and runs it on a GPU through CuPy/NVRTC.
"""
