"""The report's figures as PNG bytes (matplotlib, Agg backend; imported only when a plot is drawn)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import SmtmmaError
from .experiments import ArchErrors, BiasResult

__all__ = ["Figure", "bias_figure", "errors_figure", "DPI"]

#: Resolution of every figure (dots per inch); sizes below are in inches.
DPI = 100
BIAS_SIZE = (9.0, 3.6)
ROW_HEIGHT = 1.05


@dataclass
class Figure:
    """A rendered figure: PNG bytes, its pixel size, a caption and a file stem."""

    stem: str
    png: bytes
    width: int
    height: int
    caption: str
    alt: str


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SmtmmaError("the report's plots need matplotlib: pip install 'smtmma[report]' (or --no-plots)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _render(fig: Any, plt: Any) -> tuple[bytes, int, int]:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    w, h = (int(round(x * DPI)) for x in fig.get_size_inches())
    plt.close(fig)
    return buf.getvalue(), w, h


def bias_figure(r: BiasResult) -> Figure:
    """Fig. 3 of the MMA-Sim paper: histograms of delta_RD and delta_RZ, same bins, side by side."""
    plt = _pyplot()
    both = np.abs(np.concatenate([r.delta_rd, r.delta_rz]))
    lim = float(np.percentile(both, 99.9)) if both.size else 1.0
    lim = lim if lim > 0 else 1.0
    bins = np.linspace(-lim, lim, 81)
    fig, axes = plt.subplots(1, 2, figsize=BIAS_SIZE, sharex=True, sharey=True, layout="constrained")
    for ax, delta, name, color in ((axes[0], r.delta_rd, "RD", "tab:red"), (axes[1], r.delta_rz, "RZ", "tab:blue")):
        ax.hist(np.clip(delta, -lim, lim), bins=bins, color=color, alpha=0.8)
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.axvline(float(delta.mean()), color="black", linestyle="--", linewidth=1.0,
                   label=f"mean {delta.mean():+.4f}")
        ax.set_title(f"$\\delta_{{\\mathrm{{{name}}}}} = D_{{\\mathrm{{{name}}}}} - D_{{\\mathrm{{real}}}}$")
        ax.set_xlabel("deviation from the exact result (absolute; clipped)")
        ax.legend(loc="upper right", fontsize=8)
    axes[0].set_ylabel("dot products")
    png, w, h = _render(fig, plt)
    frac = float(np.mean(r.delta_rd < 0))
    caption = (f"CDNA3 round-down bias (MMA-Sim paper §6.2.4, Fig. 3): {r.samples} dot products of v_mfma_f32_32x32x8_f16 "
               f"(K = {r.a.shape[1]}; A, B ~ 1000·N(0,1) in FP16, C ~ N(0,1) in FP32, seed {r.seed}). "
               f"Left: gfx942's TR-FDPA ({r.model.describe()}), which rounds down in the sum with C; right: the same "
               f"model truncating (RZ) there instead. Mean δ_RD = {r.delta_rd.mean():+.4g}, mean δ_RZ = "
               f"{r.delta_rz.mean():+.4g}; {100 * frac:.1f}% of δ_RD are negative, against "
               f"{100 * float(np.mean(r.delta_rz < 0)):.1f}% of δ_RZ; δ_RD ≤ δ_RZ on "
               f"{'every row' if bool(np.all(r.delta_rd <= r.delta_rz)) else 'NOT every row'}. The x axis spans the "
               "99.9th percentile of |δ|; the end bins hold the rest.")
    return Figure("cdna3-bias", png, w, h, caption, "Histograms of delta_RD (biased negative) and delta_RZ (symmetric)")


def errors_figure(errs: Sequence[ArchErrors], *, samples: int, k: int, seed: int, span: float = 4.0) -> Figure:
    """One histogram per distinct f16f32 model, errors in FP32 ulps of the exact result, clipped to +-``span``."""
    plt = _pyplot()
    bins = np.linspace(-span, span, int(span * 16) + 1)
    fig, axes = plt.subplots(len(errs), 1, figsize=(8.0, 0.6 + ROW_HEIGHT * len(errs)), sharex=True,
                             layout="constrained", squeeze=False)
    for ax, e in zip(axes[:, 0], errs):
        u = e.ulps
        out = float(np.mean(np.abs(u) > span))
        ax.hist(np.clip(u, -span, span), bins=bins, color="tab:green" if "fdpa" in e.model.kind else "tab:purple")
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.set_yticks([])
        ax.text(0.005, 0.92, f"{' '.join(e.archs)}:  {e.model.describe()}", transform=ax.transAxes, fontsize=8, va="top",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
        ax.text(0.995, 0.92, f"mean {u.mean():+.3f}, median |err| {np.median(np.abs(u)):.3f}, "
                f"{100 * out:.2f}% beyond ±{span:g}", transform=ax.transAxes, fontsize=7, va="top", ha="right",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    axes[-1, 0].set_xlabel(f"error D − exact, in ulps of FP32 at the exact result (clipped to ±{span:g}; end bins hold the rest)")
    png, w, h = _render(fig, plt)
    caption = (f"f16f32 errors of every architecture's model (default op family) on the same {samples} random dot "
               f"products (K = {k}; A, B ~ N(0,1) in FP16, C ~ N(0,1) in FP32, seed {seed}); models with L < {k} "
               "chain FDPAs (Alg. 5). Architectures that run the same model share a row. Error unit: "
               "2^(⌊log2|exact|⌋−23). Large relative errors come from cancellation (exact results near zero).")
    return Figure("f16f32-errors", png, w, h, caption, "Histograms of the f16f32 error of each architecture")
