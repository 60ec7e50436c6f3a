"""KL(P || Q) of the neighbour embeddings SNE, t-SNE and SNEST, as the optimiser's objective.

q_ij = w_ij / sum_{k != l} w_kl over ordered pairs, with the output kernel w of the method
(SNEST paper, eq. 7-10; :mod:`embedlab.kernels.output_kernels`):

    SNE    (symmetric SNE)  R^d          w = exp(-||y_i - y_j||^2)
    t-SNE                   R^d          w = 1 / (1 + ||y_i - y_j||^2)
    SNEST                   R^{ds,dt}    w = exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)

:class:`NeighbourKL` builds the KL and its gradient from the kernel's four sums
(:func:`embedlab.kernels.neighbour.pair_fields`, the exact O(n^2) pair loop, or with
``repulsion="fft"`` :mod:`embedlab.kernels.neighbour_fft`; the conventions, the factor 4 and
the log-sum-exp shift, are those modules'); the estimators that minimise it are
:mod:`embedlab.methods.neighbour`, the optimiser :mod:`embedlab.optimize`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from embedlab.kernels import neighbour as kernel_mod
from embedlab.kernels import neighbour_fft
from embedlab.kernels.fft_repulsion import FFTSettings
from embedlab.kernels.output_kernels import SNE, SNEST, TSNE
from embedlab.optimize import DivergenceError


@dataclass(frozen=True)
class OutputKernel:
    """An output similarity w(a, b) of squared space / time distances a, b."""

    name: str
    kernel_id: int
    formula: str
    has_time: bool


OUTPUT_KERNELS = {
    "sne": OutputKernel("sne", SNE, "exp(-||y_i - y_j||^2)", False),
    "tsne": OutputKernel("tsne", TSNE, "1 / (1 + ||y_i - y_j||^2)", False),
    "snest": OutputKernel("snest", SNEST, "exp(||t_i - t_j||^2) / (1 + ||s_i - s_j||^2)", True),
}

#: float32 evaluation gives way to float64 (for good) once the last REFINE_WINDOW costs, at
#: no exaggeration, spread by at most REFINE_BELOW |KL|: the decrease is then near float32's
#: resolution of the KL (~1e-8 relative on SCHOOL), and the float32 gradient's rounding
#: (~1e-7 relative, not 0 at the minimum) would keep the optimiser from converging
REFINE_WINDOW = 5
REFINE_BELOW = 1e-6


class NeighbourKL:
    """KL(P || Q) for one output kernel, as the optimiser's objective.

    ``objective(Y, exaggeration=1.0) -> (KL(P || Q(Y)), gradient)``, where the gradient is
    that of the exaggerated objective -x sum p log w + log Z (attraction scaled by x); with
    x = 1 it is dKL/dY. ``P`` must already be valid
    (:func:`~embedlab.methods.neighbour_affinities.validate_affinities`).

    ``precision``: working precision of the kernel's dense pair arithmetic,
    "float64" (the reference) or "float32" (sums in float64;
    :func:`embedlab.kernels.neighbour.pair_fields`); Y, the KL and the gradient are float64
    either way. A float32 objective switches itself to float64 for good once the KL stalls
    within float32's reach (``REFINE_BELOW``): the end of a converging optimisation, its
    convergence test and its final KL are then float64's (without the switch, SNE on SCHOOL
    at rate 10 never met the tolerance and, 3000 epochs after its minimum, drifted away from
    it on float32's rounding). ``float64_from``: the calls made before the switch (None while
    in float32, e.g. for a whole fit that never stalls; 0 for a float64 objective).
    ``repulsion``: "exact" (the O(n^2) pair loop, the default) or "fft" (the repulsion by grid
    interpolation + FFT on the grid ``fft``, the attraction still exact:
    :mod:`embedlab.kernels.neighbour_fft`; the same KL formula, with the approximate Z;
    float64 only).
    """

    def __init__(
        self,
        P: sp.csr_matrix,
        kernel: str,
        n_space: int,
        *,
        precision: str = "float64",
        repulsion: str = "exact",
        fft: FFTSettings | None = None,
    ):
        if kernel not in OUTPUT_KERNELS:
            raise ValueError(
                f"unknown output kernel {kernel!r}; expected one of {list(OUTPUT_KERNELS)}"
            )
        if precision not in kernel_mod.PRECISIONS:
            raise ValueError(
                f"precision must be one of {list(kernel_mod.PRECISIONS)}, got {precision!r}"
            )
        neighbour_fft.check_repulsion(repulsion)
        self.repulsion = repulsion
        self.fft = FFTSettings() if fft is None else fft
        if repulsion == "fft" and precision != "float64":
            raise ValueError("repulsion='fft' computes in float64; precision must be float64")
        self.kernel = OUTPUT_KERNELS[kernel]
        self.n_space = n_space
        self.precision = precision
        self.float64_from = 0 if precision == "float64" else None
        self.calls = 0
        self._recent: list[float] = []  # the last unexaggerated float32 costs
        self.n = P.shape[0]
        self.parts = kernel_mod.csr_parts(P)
        # the FFT path's P (its points renumbered once)
        self._renumbered = neighbour_fft.RenumberedP.of(self.parts) if repulsion == "fft" else None
        data = self.parts[2]
        self.entropy_term = float(np.sum(data * np.log(data)))  # sum p log p

    def fields(self, Y: np.ndarray, with_cost: bool = True) -> kernel_mod.PairFields:
        """The kernel's sums at Y; ``with_cost=False`` lets the FFT path skip C_att (NaN)."""
        if Y.shape[0] != self.n:
            raise ValueError(f"embedding has {Y.shape[0]} points, P has {self.n}")
        if self.repulsion == "fft":
            return self._renumbered.fields(
                self.kernel.kernel_id, Y, self.n_space, self.fft, with_cost
            )
        precision = self.precision if self.float64_from is None else "float64"
        return kernel_mod.pair_fields(
            self.kernel.kernel_id, Y, self.n_space, self.parts, precision=precision
        )

    def cost(self, Y: np.ndarray) -> float:
        """KL(P || Q(Y))."""
        return self(Y)[0]

    def __call__(
        self, Y: np.ndarray, exaggeration: float = 1.0, with_cost: bool = True
    ) -> tuple[float, np.ndarray]:
        """(KL at Y, gradient with the attraction exaggerated); without ``with_cost`` the KL
        is NaN and, with repulsion="fft", not computed (the gradient is the same)."""
        f = self.fields(Y, with_cost)
        if not (np.isfinite(f.mass) and f.mass > 0 and np.isfinite(f.shift)):
            extent = np.array2string(np.ptp(Y, axis=0), precision=3)
            raise DivergenceError(
                f"{self.kernel.name}: the normaliser Z = {f.mass!r} * exp({f.shift!r}) is not "
                f"finite and positive: the coordinates have blown up (extent per column "
                f"{extent}; {self.n_space} space columns, then time)"
            )
        grad = 4.0 * (exaggeration * f.att - f.rep / f.mass)
        self.calls += 1
        if not with_cost:
            return math.nan, grad
        kl = float(self.entropy_term + f.att_cost + np.log(f.mass) + f.shift)
        if self.float64_from is None:
            recent = self._recent[1 - REFINE_WINDOW :] + [kl] if exaggeration == 1.0 else []
            if len(recent) == REFINE_WINDOW and max(recent) - min(recent) <= REFINE_BELOW * abs(kl):
                self.float64_from = self.calls
            self._recent = recent
        return kl, grad
