"""The shared gradient-descent engine of the neighbour embeddings (SNE, t-SNE, SNEST).

The SNEST paper's optimiser (section 4, "the same optimizer" for all methods), following the
authors' public code (delta-bar-delta gains, momentum, early exaggeration). The coordinates are
split into ``n_space`` space columns followed by ``n_time`` time columns. At epoch e (from 0)
the objective is evaluated at Y_e with the attraction exaggerated by x (x = ``exaggeration``
for e < ``exaggeration_epochs``, else 1), giving the cost E_e (the true cost, unexaggerated)
and the gradient g; then, with momentum mu_e (``momentum[k]`` for the k-th interval cut by
``momentum_epochs``):

* space, delta-bar-delta gains per scalar (van der Maaten's t-SNE rule):
      gain <- gain + 0.2 where sign(g) != sign(u),  gain <- 0.8 gain where equal,
      gain <- max(gain, min_gain),   u <- mu_e u - gamma_s gain g;
  where "sign(g) != sign(u)" is (g > 0) != (u > 0), as in the reference code;
* time, ONE global gain:
      G <- G + 0.2 if <g, u> < 0 else 0.8 G,  G <- max(G, min_gain),  u <- mu_e u - gamma_t G g;
* Y <- Y + u, then every column is re-centred to mean 0 (all costs are translation invariant).

Stopping: after ``max_iter`` epochs, or at the first epoch e >= ``min_iter`` - 1 where the
last ``window`` costs satisfy  max - min <= tol |E_e - E_0|  (the paper's criterion
(max - min) / |E_last - E_first| < tol, written without the division). With the paper's
tol = 1e-9 almost no run stops before ``max_iter``; two further tests, off by default, spend
fewer epochs. Both act only once the schedule is over (e >= the last momentum switch, the end
of the exaggeration and ``min_iter``) and read the descent rate over the last
``rate_window`` W epochs (0: both off), r_e = (E_{e-W} - E_e) / W:

* plateau: stop when the cost fell by at most ``plateau_tol`` relative over W epochs,
  W r_e <= plateau_tol |E_e|;
* abandonment (given ``reference_cost`` R, the final cost of the best finished run of the
  same problem): stop a losing run when even descending at its present rate until
  ``max_iter`` it would end above R by more than ``abandon_margin`` a (relative),
  E_e - (max_iter - 1 - e) max(r_e, 0) > R + a |R|.
  The rate of a settled run only slows down, so the extrapolation is optimistic: a run that
  is still catching up fast is kept (on SCHOOL, SNEST R^{3,1}'s best run is 82 % above the
  best earlier run at epoch 1000 and below it by epoch 1700).

``OptimizeResult.stop`` says which test ended the run ("tol", "plateau", "abandoned" or
"max_iter").

Runs of a fixed length (``min_iter`` = ``max_iter``, no rate tests) may evaluate the cost only
every ``cost_every`` epochs (and at every logged one; openTSNE computes its KL every 50): the
objective is then called as objective(Y, x, with_cost=False) in between, returns the gradient
with a NaN cost, and the trace holds NaN there. The gradient, hence the run, is unchanged;
an FFT objective skips a log per non-zero of P (~10-20 % of a t-SNE epoch at n = 70,000).
The final cost is always evaluated.

Divergence raises :class:`DivergenceError` naming the epoch: a non-finite cost, gradient or
coordinate, or a time coordinate beyond ``max_abs_time`` (SNEST's cost stays finite for huge
time values thanks to its log-sum-exp shift, so a time blow-up -- SCHOOL at gamma_t = 1: |t|
grows steadily past 1e130 while the KL reaches 1e263 -- is caught on the coordinates; good
runs keep |t| < 2, with transients up to ~50 when the exaggeration ends).
Space coordinates have no limit by default: SNE on SCHOOL swings out to |s| ~ 1e10 when the
exaggeration ends and comes back to its best KL. A run whose final cost is above its initial
cost E_0 has not descended at all (a map worse than the start: for the KL, worse than the
uniform Q of the near-zero start) and diverges too.

Backing off: with ``backoff`` = b > 0, a run that diverges starts again from ``Y0`` with both
learning rates halved, at most b times (the k-th restart at gamma / 2^k); the first run that
does not diverge is the result (``OptimizeResult.backoffs``, ``learning_rate``). A run that
never diverges is the same with or without ``backoff``. Step sizes that suit large data
(openTSNE's gamma ~ n, :func:`auto_learning_rate`, with its floor for small n) can be far
too long for a few dozen points or a P with a heavy row (the attraction's Hessian grows with
x max_i sum_j p_ij): halving finds a stable step without any estimate of the curvature.

The result records the cost trace, the epochs where the momentum switched and where the
exaggeration ended, so that callers and tests can check the schedule.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np

log = logging.getLogger(__name__)

Objective = Callable[..., tuple[float, np.ndarray]]
"""objective(Y, exaggeration) -> (cost at Y without exaggeration, gradient with it); with
``cost_every`` > 1 also objective(Y, exaggeration, with_cost=False) -> (NaN, gradient)."""


class DivergenceError(FloatingPointError):
    """The optimisation produced a non-finite cost, gradient or coordinate."""


@dataclass(frozen=True)
class GradientDescent:
    """Settings of the optimiser (defaults: the SNEST paper's protocol; learning rates: its
    driver's). The workflow's fits start from these; a library user's estimators start from
    :data:`LIBRARY` instead."""

    learning_rate: float = 500.0  # gamma_s
    learning_rate_time: float = 1.0  # gamma_t
    momentum: Sequence[float] = (0.5, 0.8, 0.9)
    momentum_epochs: Sequence[int] = (250, 1000)  # where momentum[k] hands over to momentum[k+1]
    exaggeration: float = 4.0
    exaggeration_epochs: int = 100
    gain_increase: float = 0.2
    gain_decrease: float = 0.8
    min_gain: float = 0.01
    max_iter: int = 5000
    min_iter: int = 500
    tol: float = 1e-9
    window: int = 5
    log_every: int = 100  # epochs between progress lines (0: never)
    max_abs_time: float = 1e3  # a time coordinate beyond this has blown up
    max_abs_space: float = np.inf  # space coordinates may swing far and come back
    rate_window: int = 0  # W: epochs over which the descent rate is read (0: no rate tests)
    plateau_tol: float = 0.0  # relative decrease over W epochs that counts as a plateau
    abandon_margin: float = np.inf  # relative excess over the reference that abandons a run
    cost_every: int = 1  # epochs between cost evaluations (> 1: fixed-length runs only)
    backoff: int = 0  # restarts of a diverging run from Y0, each with the learning rates halved

    @classmethod
    def read(cls, options: object, **given: object) -> GradientDescent:
        """The settings that ``options`` (an estimator, a step's settings) holds under the
        fields' names, ``given`` taking precedence over them; a field that neither names
        stays at its default. An estimator's optimiser options reach the optimiser this way,
        by name."""
        held = {f.name: getattr(options, f.name) for f in fields(cls) if hasattr(options, f.name)}
        return cls(**_as_tuples({**held, **given}))

    def values(self, names: Iterable[str]) -> dict[str, object]:
        """{name: value} of the fields ``names`` (the sequences as tuples): the keywords of
        the same names that another optimiser or an estimator takes."""
        return _as_tuples({name: getattr(self, name) for name in names})

    def schedule_end(self) -> int:
        """First epoch after every scheduled change (momentum, exaggeration) and min_iter."""
        return max([self.min_iter, self.exaggeration_epochs, *self.momentum_epochs])

    def __post_init__(self) -> None:
        if len(self.momentum) != len(self.momentum_epochs) + 1:
            raise ValueError(
                f"momentum {tuple(self.momentum)} needs one more value than momentum_epochs "
                f"{tuple(self.momentum_epochs)}"
            )
        if list(self.momentum_epochs) != sorted(self.momentum_epochs):
            raise ValueError(f"momentum_epochs {tuple(self.momentum_epochs)} must be increasing")
        checks = {
            "learning_rate": self.learning_rate > 0,
            "learning_rate_time": self.learning_rate_time > 0,
            "exaggeration": self.exaggeration > 0,
            "exaggeration_epochs": self.exaggeration_epochs >= 0,
            "min_gain": self.min_gain > 0,
            "max_iter": self.max_iter >= 1,
            "min_iter": self.min_iter >= 0,
            "tol": self.tol >= 0,
            "window": self.window >= 2,
            "max_abs_time": self.max_abs_time > 0,
            "max_abs_space": self.max_abs_space > 0,
            "rate_window": self.rate_window >= 0,
            "plateau_tol": self.plateau_tol >= 0,
            "abandon_margin": self.abandon_margin >= 0,
            "cost_every": self.cost_every >= 1,
            "backoff": self.backoff >= 0,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(
                    f"GradientDescent.{name} = {getattr(self, name)!r} is out of range"
                )
        if self.cost_every > 1 and (self.min_iter < self.max_iter or self.rate_window):
            raise ValueError(
                f"GradientDescent.cost_every = {self.cost_every} needs a run of fixed length "
                f"(min_iter = max_iter, rate_window = 0; got {self.min_iter}, {self.max_iter}, "
                f"{self.rate_window}): the stopping tests read every epoch's cost"
            )

    def momentum_at(self, epoch: int) -> float:
        """mu_e: the momentum used at ``epoch``."""
        return float(self.momentum[int(np.searchsorted(self.momentum_epochs, epoch, "right"))])

    def exaggeration_at(self, epoch: int) -> float:
        """x_e: the attraction factor used at ``epoch``."""
        return float(self.exaggeration) if epoch < self.exaggeration_epochs else 1.0


#: the estimators' ``backoff``: restarts of a diverging run, each with the learning rates
#: halved (10 reach gamma / 1024); the papers' protocols, which search grids of rates, use 0
BACKOFF = 10

#: the fields that hold a sequence (one value per stretch of the schedule)
SEQUENCE_FIELDS = ("momentum", "momentum_epochs")


def _as_tuples(values: dict[str, object]) -> dict[str, object]:
    """``values`` with those of :data:`SEQUENCE_FIELDS` as tuples (a list or an array given)."""
    return {k: tuple(v) if k in SEQUENCE_FIELDS else v for k, v in values.items()}


#: The neighbour estimators' library defaults: openTSNE's schedule (750 epochs; the first 250
#: with the attraction x 12 and momentum 0.5, then momentum 0.8), every epoch run (min_iter =
#: max_iter). Its learning rate is :func:`auto_learning_rate` of n (the 500 here is not read).
LIBRARY = GradientDescent(
    momentum=(0.5, 0.8),
    momentum_epochs=(250,),
    exaggeration=12.0,
    exaggeration_epochs=250,
    max_iter=750,
    min_iter=750,
)

#: openTSNE's gradient / ours: our KL gradient carries the factor 4 of
#: :mod:`embedlab.kernels.neighbour`, openTSNE's does not, so our rate is openTSNE's / 4
OPENTSNE_FACTOR = 4.0
#: openTSNE's floor on its automatic learning rate (its units)
AUTO_RATE_FLOOR = 50.0


def auto_learning_rate(n: int, exaggeration: float) -> float:
    """The space learning rate for ``n`` points: openTSNE's (Belkina et al. 2019)
    max(n / exaggeration, 50) in its units, i.e. max(n / exaggeration, 50) / 4 in ours
    (:data:`OPENTSNE_FACTOR`). The KL gradient of one point scales as 1 / n (p_ij ~ 1 / (n k)),
    so a rate proportional to n keeps the first steps' length independent of n."""
    if n < 1 or not exaggeration > 0:
        raise ValueError(f"need n >= 1 and exaggeration > 0, got {n} and {exaggeration}")
    return max(n / float(exaggeration), AUTO_RATE_FLOOR) / OPENTSNE_FACTOR


@dataclass
class OptimizeResult:
    """What :func:`minimize` returns."""

    Y: np.ndarray  # final coordinates (n x (n_space + n_time))
    cost: float  # cost at the final Y
    n_iter: int  # epochs run (gradient steps taken)
    converged: bool  # stopped by the tolerance or the plateau test
    cost_trace: np.ndarray  # E_e for e = 0 .. n_iter - 1 (cost before the step of epoch e)
    momentum_switches: list[int] = field(default_factory=list)  # epochs where mu changed
    exaggeration_end: int | None = None  # first epoch run without exaggeration
    time_gain: float | None = None  # final global time gain (None without time columns)
    seconds: float = 0.0
    stop: str = "max_iter"  # the test that ended the run: tol, plateau, abandoned, max_iter
    backoffs: int = 0  # restarts after a divergence (learning rates halved at each)
    learning_rate: float = math.nan  # gamma_s of the run returned
    learning_rate_time: float = math.nan  # gamma_t of the run returned


def _check_finite(what: str, value, epoch: int) -> None:
    if not np.all(np.isfinite(value)):
        raise DivergenceError(
            f"optimisation diverged at epoch {epoch}: non-finite {what} "
            "(try a smaller learning rate, in particular for the time coordinates)"
        )


def _evaluate(objective: Objective, Y: np.ndarray, factor: float, epoch: int, with_cost=True):
    try:
        return objective(Y, factor) if with_cost else objective(Y, factor, with_cost=False)
    except DivergenceError as error:
        raise DivergenceError(f"optimisation diverged at epoch {epoch}: {error}") from error


def stop_reason(
    s: GradientDescent, costs: np.ndarray, reference_cost: float | None = None
) -> str | None:
    """The test that stops a run after the epochs whose costs are ``costs`` (E_0 .. E_e), or
    None to go on: "tol" (the paper's), then, once the schedule is over, "plateau" and
    "abandoned" (see the module docstring). Pure, so that a benchmark can replay it on saved
    cost traces (benchmarks/bench_ne_stopping.py)."""
    epoch = len(costs) - 1
    cost = costs[epoch]
    if epoch + 1 >= max(s.min_iter, s.window):
        last = costs[epoch + 1 - s.window :]
        if last.max() - last.min() <= s.tol * abs(cost - costs[0]):
            return "tol"
    W = s.rate_window
    if not W or epoch < max(s.schedule_end(), W):
        return None
    drop = costs[epoch - W] - cost
    if drop <= s.plateau_tol * abs(cost):
        return "plateau"
    if reference_cost is not None:
        reachable = cost - (s.max_iter - 1 - epoch) * max(drop, 0.0) / W
        if reachable > reference_cost + s.abandon_margin * abs(reference_cost):
            return "abandoned"
    return None


def minimize(
    objective: Objective,
    Y0: np.ndarray,
    n_space: int,
    settings: GradientDescent | None = None,
    reference_cost: float | None = None,
) -> OptimizeResult:
    """Minimise ``objective`` from ``Y0`` (n x d; columns ``n_space:`` are time);
    ``reference_cost``: the cost a losing run is abandoned against; a diverging run backs off
    ``settings.backoff`` times (see the module doc)."""
    s = settings or GradientDescent()
    backoffs = 0
    while True:
        try:
            result = _descend(objective, Y0, n_space, s, reference_cost)
        except DivergenceError as error:
            if backoffs == s.backoff:
                if backoffs:
                    raise DivergenceError(
                        f"{error} (after {backoffs} restarts with the learning rates halved, "
                        f"the last at {s.learning_rate:.3g} for space, "
                        f"{s.learning_rate_time:.3g} for time)"
                    ) from error
                raise
            log.warning("%s; restarting with the learning rates halved", error)
            s = replace(
                s, learning_rate=s.learning_rate / 2, learning_rate_time=s.learning_rate_time / 2
            )
            backoffs += 1
            continue
        result.backoffs = backoffs
        result.learning_rate = s.learning_rate
        result.learning_rate_time = s.learning_rate_time
        return result


def _descend(
    objective: Objective,
    Y0: np.ndarray,
    n_space: int,
    s: GradientDescent,
    reference_cost: float | None,
) -> OptimizeResult:
    """One run of :func:`minimize` at the rates of ``s``."""
    Y = np.array(Y0, dtype=np.float64, copy=True)
    if Y.ndim != 2 or not 0 <= n_space <= Y.shape[1]:
        raise ValueError(f"Y0 of shape {Y.shape} cannot have {n_space} space columns")
    _check_finite("initial coordinates", Y, 0)
    space, tm = slice(0, n_space), slice(n_space, Y.shape[1])
    has_time = Y.shape[1] > n_space
    update = np.zeros_like(Y)
    gains = np.ones((Y.shape[0], n_space))
    time_gain = 1.0
    costs = np.empty(s.max_iter)
    switches: list[int] = []
    exaggeration_end = None
    converged = False
    stop = "max_iter"
    started = time.perf_counter()
    previous_momentum = s.momentum_at(0)
    epoch = 0
    for epoch in range(s.max_iter):
        momentum = s.momentum_at(epoch)
        if momentum != previous_momentum:
            switches.append(epoch)
            previous_momentum = momentum
        factor = s.exaggeration_at(epoch)
        if factor == 1.0 and exaggeration_end is None and s.exaggeration_epochs > 0:
            exaggeration_end = epoch
        logged = bool(s.log_every) and epoch % s.log_every == 0
        with_cost = epoch % s.cost_every == 0 or logged
        cost, grad = _evaluate(objective, Y, factor, epoch, with_cost)
        if with_cost:
            _check_finite("cost", cost, epoch)
        _check_finite("gradient", grad, epoch)
        costs[epoch] = cost

        g, u = grad[:, space], update[:, space]
        flip = (g > 0) != (u > 0)
        gains = np.where(flip, gains + s.gain_increase, gains * s.gain_decrease)
        np.maximum(gains, s.min_gain, out=gains)
        update[:, space] = momentum * u - s.learning_rate * gains * g
        if has_time:
            gt, ut = grad[:, tm], update[:, tm]
            if np.vdot(gt, ut) < 0:
                time_gain += s.gain_increase
            else:
                time_gain *= s.gain_decrease
            time_gain = max(time_gain, s.min_gain)
            update[:, tm] = momentum * ut - s.learning_rate_time * time_gain * gt
        Y += update
        Y -= Y.mean(axis=0)
        _check_finite("coordinates", Y, epoch)
        for name, cols, limit in (("space", space, s.max_abs_space), ("time", tm, s.max_abs_time)):
            largest = float(np.abs(Y[:, cols]).max(initial=0.0))
            if largest > limit:
                raise DivergenceError(
                    f"optimisation diverged at epoch {epoch}: a {name} coordinate reached "
                    f"{largest:.3g} (limit {limit:.3g}); try a smaller {name} learning rate"
                )

        if logged:
            log.info(
                "epoch %5d  cost %.6f  |grad| %.3e  momentum %.2f  exaggeration %.1f%s",
                epoch, cost, float(np.linalg.norm(grad)), momentum, factor,
                f"  time gain {time_gain:.3g}" if has_time else "",
            )
        reason = stop_reason(s, costs[: epoch + 1], reference_cost) if s.cost_every == 1 else None
        if reason is not None:
            converged, stop = reason != "abandoned", reason
            break
    n_iter = epoch + 1
    final_cost, _ = _evaluate(objective, Y, 1.0, n_iter)
    _check_finite("cost", final_cost, n_iter)
    if final_cost > costs[0]:  # costs[0] is always evaluated (epoch 0)
        raise DivergenceError(
            f"optimisation diverged: the final cost {final_cost:.6g} is above the initial "
            f"{costs[0]:.6g} after {n_iter} epochs (try a smaller learning rate)"
        )
    seconds = time.perf_counter() - started
    log.info(
        "%s after %d epochs: cost %.6f (%.2f s)",
        f"stopped ({stop})", n_iter, final_cost, seconds,
    )
    return OptimizeResult(
        Y=Y,
        cost=float(final_cost),
        n_iter=n_iter,
        converged=converged,
        cost_trace=costs[:n_iter].copy(),
        momentum_switches=switches,
        exaggeration_end=exaggeration_end,
        time_gain=time_gain if has_time else None,
        seconds=seconds,
        stop=stop,
    )
