"""The triplet methods without scikit-learn: each method's options and the fit that turns
them into an objective, a start, a projection and a solver run (:mod:`.triplet_solvers`).

The estimators of :mod:`embedlab.methods.triplets` extend these classes (as openTSNE's
scikit-learn ``TSNE`` extends its own): the constructor, so each method's parameters and
defaults are spelled once, here, and the fit, which they call after reading their input with
scikit-learn's checks; the options are described on the estimators. The workflow's t-STE
jobs fit these classes (:data:`FITS`) and start without scikit-learn (tests/test_cli.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from functools import partial
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from embedlab.kernels import triplets as kern
from embedlab.methods.conventions import keep_arguments
from embedlab.methods.triplet_solvers import (
    SOLVERS,
    CoordsObjective,
    GramObjective,
    StepRule,
    check_triplets,
    gram_embedding,
    project_psd,
    project_psd_released,
    project_unit_diagonal,
)

# K forms on at most this many items run their eigen-decompositions on one BLAS thread:
# threads do not pay off for small matrices and stall badly on a loaded machine
SMALL_GRAM = 256


class TripletFit:
    """Option checks and fit shared by the triplet methods. Subclasses set the loss code, the
    forms they support, the default learning rate per form and the loss parameter."""

    _loss: int
    _forms: tuple[str, ...] = ("X", "K")
    _default_learning_rate: dict[str, float] = {"X": 1.0, "K": 1.0}

    def _loss_param(self) -> float:
        return 0.0

    def _form(self) -> str:
        return getattr(self, "form", "X")

    def _check_params(self, n: int) -> None:
        name = type(self).__name__
        form = self._form()
        if form not in self._forms:
            raise ValueError(f"{name}: form must be one of {self._forms}, got {form!r}")
        k = self.n_components
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"{name}: n_components must be a positive integer, got {k!r}")
        if form == "K" and k > n:
            raise ValueError(f"{name}: n_components = {k} exceeds the number of items {n}")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"{name}: lam must be a finite number >= 0, got {self.lam}")
        if int(self.max_iter) < 1:
            raise ValueError(f"{name}: max_iter must be >= 1, got {self.max_iter}")
        w = getattr(self, "loss_weight", 1.0)
        if not (np.isfinite(w) and w >= 0):
            raise ValueError(f"{name}: loss_weight must be a finite number >= 0, got {w}")
        if w != 1.0 and form != "K":
            raise ValueError(f"{name}: loss_weight applies to the K form only, got {w}")
        if self.solver not in SOLVERS:
            raise ValueError(
                f"{name}: solver must be one of {sorted(SOLVERS)}, got {self.solver!r}"
            )
        precision = getattr(self, "precision", "float64")
        if precision not in ("float32", "float64"):
            raise ValueError(f"{name}: precision must be float32 or float64, got {precision!r}")
        if precision != "float64" and form != "K":
            raise ValueError(f"{name}: precision applies to the K form only, got {precision!r}")
        r = getattr(self, "init_rank", None)
        if r is not None and (isinstance(r, bool) or not isinstance(r, int | np.integer) or r < 1):
            raise ValueError(f"{name}: init_rank must be a positive integer or None, got {r!r}")
        if not isinstance(getattr(self, "use_log", True), bool | np.bool_):
            raise ValueError(f"{name}: use_log must be True or False, got {self.use_log!r}")
        kform = getattr(self, "kform", "symmetric")
        if kform not in ("symmetric", "released"):
            raise ValueError(f"{name}: kform must be symmetric or released, got {kform!r}")
        if kform == "released" and form == "K" and self.solver != "adaptive":
            raise ValueError(f"{name}: kform='released' runs the adaptive solver only")
        if kform == "released" and form == "K" and getattr(self, "unit_diagonal", False):
            raise ValueError(f"{name}: kform='released' has no unit diagonal")
        k = getattr(self, "min_iter", 0)
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"{name}: min_iter must be an integer >= 0, got {k!r}")
        if k and self.solver != "adaptive":
            raise ValueError(f"{name}: min_iter applies to the adaptive solver only")

    def fit(self, triplets: Any, *, n: int | None = None, allow_self: bool = False) -> TripletFit:
        """Embed the items of ``triplets`` (read by :func:`.triplet_solvers.check_triplets`;
        ``n`` items, default largest index + 1; ``allow_self`` accepts j = i) with the
        options; sets the attributes of the estimators' ``fit``."""
        trip, n = check_triplets(triplets, n, allow_self=allow_self)
        self._check_params(n)
        form = self._form()
        name = f"{type(self).__name__}-{form}"
        lr = self.learning_rate
        lr = self._default_learning_rate[form] if lr is None else float(lr)
        step = lr * n / len(trip)
        rng = np.random.default_rng(self.random_state)
        dims = int(self.n_components)
        param = self._loss_param()
        use_log = bool(getattr(self, "use_log", True))
        released = form == "K" and getattr(self, "kform", "symmetric") == "released"
        extra: dict[str, Any] = {}
        if getattr(self, "min_iter", 0):
            extra["min_iter"] = int(self.min_iter)
        if form == "X":
            objective = CoordsObjective(self._loss, param, self.lam, trip, use_log)
            x0 = rng.normal(0.0, 1e-4, size=(n, dims))
            project = None
        else:
            objective = GramObjective(
                self._loss, param, self.lam, trip, n, getattr(self, "loss_weight", 1.0),
                use_log=use_log, one_sided=released,
                trace_in_cost=not (released and self._loss == kern.STE),
            )  # fmt: skip
            rank = getattr(self, "init_rank", None)
            Y0 = rng.normal(0.0, 0.1, size=(n, dims if rank is None else int(rank)))
            unit = self._loss == kern.CKL and getattr(self, "unit_diagonal", True)
            if released:
                project = partial(project_psd_released, precision=self.precision)
                extra["best_after_step"] = self._loss == kern.CKL
            else:
                project = partial(
                    project_unit_diagonal if unit else project_psd, precision=self.precision
                )
            x0 = project(Y0 @ Y0.T)
            if x0 is None:
                raise ValueError(f"{name}: the initial kernel has no positive eigenvalue")
        single_blas = form == "K" and n <= SMALL_GRAM
        with threadpool_limits(limits=1, user_api="blas") if single_blas else nullcontext():
            solve = SOLVERS[self.solver]
            res = solve(
                objective,
                x0,
                StepRule(step, max_iter=self.max_iter, name=name, verbose=self.verbose),
                **{"rtol" if self.solver == "accelerated" else "tol": self.tol},
                project=project,
                **extra,
            )
        if form == "X":
            self.embedding_ = res.x
        else:
            self.kernel_ = res.x
            self.embedding_ = gram_embedding(res.x, dims)
        self.cost_ = res.cost
        self.n_iter_ = res.n_iter
        self.cost_history_ = np.asarray(res.costs)
        self.step_history_ = np.asarray(res.steps)
        self.n_items_ = n
        return self


class GNMDS(TripletFit):
    """GNMDS's options and fit (the estimator: :class:`embedlab.methods.triplets.GNMDS`)."""

    _loss = kern.GNMDS

    def __init__(
        self,
        n_components: int = 2,
        form: str = "X",
        lam: float = 0.0,
        loss_weight: float = 1.0,
        init_rank: int | None = None,
        kform: str = "symmetric",
        min_iter: int = 0,
        precision: str = "float64",
        learning_rate: float | None = None,
        solver: str = "adaptive",
        max_iter: int = 1000,
        tol: float = 1e-7,
        random_state: Any = None,
        verbose: bool = False,
    ):
        keep_arguments(self, locals())


class CKL(TripletFit):
    """CKL's options and fit (the estimator: :class:`embedlab.methods.triplets.CKL`)."""

    _loss = kern.CKL
    _default_learning_rate = {"X": 1.0, "K": 1.0}

    def __init__(
        self,
        n_components: int = 2,
        form: str = "X",
        mu: float = 0.05,
        lam: float = 0.0,
        unit_diagonal: bool = True,
        init_rank: int | None = None,
        kform: str = "symmetric",
        precision: str = "float64",
        learning_rate: float | None = None,
        solver: str = "adaptive",
        max_iter: int = 1000,
        tol: float = 1e-7,
        random_state: Any = None,
        verbose: bool = False,
    ):
        keep_arguments(self, locals())

    def _check_params(self, n: int) -> None:
        super()._check_params(n)
        if not (np.isfinite(self.mu) and self.mu >= 0):
            raise ValueError(f"CKL: mu must be a finite number >= 0, got {self.mu}")
        if self.form == "K" and self.unit_diagonal and self.lam != 0:
            raise ValueError(
                f"CKL-K fixes k_ii = 1, so trace(K) is constant: lam must be 0, got {self.lam}"
            )

    def _loss_param(self) -> float:
        return float(self.mu)


class STE(TripletFit):
    """STE's options and fit (the estimator: :class:`embedlab.methods.triplets.STE`)."""

    _loss = kern.STE

    def __init__(
        self,
        n_components: int = 2,
        form: str = "X",
        lam: float = 0.0,
        use_log: bool = True,
        loss_weight: float = 1.0,
        init_rank: int | None = None,
        kform: str = "symmetric",
        precision: str = "float64",
        learning_rate: float | None = None,
        solver: str = "adaptive",
        max_iter: int = 1000,
        tol: float = 1e-7,
        random_state: Any = None,
        verbose: bool = False,
    ):
        keep_arguments(self, locals())


class TSTE(TripletFit):
    """t-STE's options and fit (the estimator: :class:`embedlab.methods.triplets.TSTE`)."""

    _loss = kern.TSTE
    _forms = ("X",)
    _default_learning_rate = {"X": 2.0}

    def __init__(
        self,
        n_components: int = 2,
        alpha: float | None = None,
        lam: float = 0.0,
        use_log: bool = True,
        learning_rate: float | None = None,
        solver: str = "adaptive",
        max_iter: int = 1000,
        tol: float = 1e-7,
        random_state: Any = None,
        verbose: bool = False,
    ):
        keep_arguments(self, locals())

    def _loss_param(self) -> float:
        return float(self.alpha_)

    def _check_params(self, n: int) -> None:
        super()._check_params(n)
        alpha = max(int(self.n_components) - 1, 1) if self.alpha is None else self.alpha
        if not (np.isfinite(alpha) and alpha > 0):
            raise ValueError(f"TSTE: alpha must be a positive number, got {alpha}")
        self.alpha_ = float(alpha)


def by_paper_name(classes: Mapping[str, type]) -> dict[str, Callable[..., Any]]:
    """The seven methods of the paper's Fig. 2 by the paper's names ("GNMDS-K", ...,
    "t-STE-X"), made from ``classes`` (the class of each loss by its name: "GNMDS", "CKL",
    "STE", "t-STE"): a class of two forms with its ``form`` set, t-STE (X only) as it is."""
    made: dict[str, Callable[..., Any]] = {}
    for name in ("GNMDS-K", "GNMDS-X", "CKL-K", "CKL-X", "STE-K", "STE-X", "t-STE-X"):
        loss, form = name.rsplit("-", 1)
        method = classes[loss]
        made[name] = partial(method, form=form) if len(method._forms) > 1 else method
    return made


FITS = by_paper_name({"GNMDS": GNMDS, "CKL": CKL, "STE": STE, "t-STE": TSTE})
"""The seven methods of the paper's Fig. 2 without scikit-learn, by the paper's names."""
