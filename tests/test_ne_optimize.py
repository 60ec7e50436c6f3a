"""The shared gradient-descent engine: schedules, gains, stopping rule, divergence."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from embedlab.methods.neighbour_kl import NeighbourKL
from embedlab.optimize import DivergenceError, GradientDescent, minimize
from tests.helpers import random_P


class Spy:
    """An objective with a prescribed gradient and cost per call; records what it was given."""

    def __init__(self, gradient, cost=lambda call: 0.0):
        self.gradient, self.cost = gradient, cost
        self.factors: list[float] = []
        self.points: list[np.ndarray] = []

    def __call__(self, Y, exaggeration):
        call = len(self.factors)
        self.factors.append(exaggeration)
        self.points.append(Y.copy())
        return self.cost(call), self.gradient(call, Y)


def mean_free(rng, shape):
    g = rng.normal(size=shape)
    return g - g.mean(axis=0)


def centred(update):
    """The displacement an update causes: Y is re-centred after each step."""
    return update - update.mean(axis=0)


def test_schedule_epochs_are_recorded_and_applied():
    settings = GradientDescent(
        momentum=(0.5, 0.8, 0.9), momentum_epochs=(3, 7), exaggeration=4.0,
        exaggeration_epochs=5, max_iter=10, min_iter=2, tol=0.0,
    )
    spy = Spy(lambda call, Y: np.zeros_like(Y), lambda call: 1.0 / (call + 1))
    result = minimize(spy, np.zeros((4, 3)), n_space=2, settings=settings)
    assert result.n_iter == 10 and not result.converged
    assert result.momentum_switches == [3, 7]
    assert result.exaggeration_end == 5
    assert spy.factors == [4.0] * 5 + [1.0] * 5 + [1.0]  # + the final cost evaluation
    assert [settings.momentum_at(e) for e in (0, 2, 3, 6, 7, 100)] == [0.5, 0.5, 0.8, 0.8, 0.9, 0.9]


def test_momentum_carries_the_last_update():
    """A single kick at epoch 0, then zero gradient: each step is mu_e times the last one,
    in space and in time (the update itself is not centred; the coordinates are)."""
    rng = np.random.default_rng(0)
    kick = mean_free(rng, (6, 3))
    settings = GradientDescent(momentum=(0.5, 0.8, 0.9), momentum_epochs=(3, 5),
                               max_iter=8, min_iter=8, exaggeration_epochs=0)
    spy = Spy(lambda call, Y: kick if call == 0 else np.zeros_like(Y))
    minimize(spy, np.zeros((6, 3)), n_space=2, settings=settings)
    steps = np.diff(np.array(spy.points), axis=0)  # steps[e] = update of epoch e
    for e in range(1, len(steps)):
        np.testing.assert_allclose(steps[e], settings.momentum_at(e) * steps[e - 1], rtol=1e-12)
    first = np.hstack([
        -settings.learning_rate * np.where(kick[:, :2] > 0, 1.2, 0.8) * kick[:, :2],
        -settings.learning_rate_time * 0.8 * kick[:, 2:],
    ])
    np.testing.assert_allclose(steps[0], centred(first), rtol=1e-12, atol=1e-12)


def test_delta_bar_delta_gains_under_a_constant_gradient():
    """Space: gain + 0.2 where sign(g) != sign(last update), x 0.8 where equal (floored at
    min_gain); time: one gain, + 0.2 when <g, last update> < 0, else x 0.8."""
    rng = np.random.default_rng(1)
    g = mean_free(rng, (5, 3))
    s = GradientDescent(momentum=(0.0,), momentum_epochs=(), max_iter=4, min_iter=4,
                        exaggeration_epochs=0, learning_rate=0.1, learning_rate_time=0.01)
    spy = Spy(lambda call, Y: g)
    minimize(spy, np.zeros((5, 3)), n_space=2, settings=s)
    steps = np.diff(np.array(spy.points), axis=0)
    gains, time_gain, last = np.ones((5, 2)), 1.0, np.zeros((5, 3))
    for step in steps:
        flip = (g[:, :2] > 0) != (last[:, :2] > 0)
        gains = np.maximum(np.where(flip, gains + 0.2, gains * 0.8), s.min_gain)
        time_gain = time_gain + 0.2 if g[:, 2] @ last[:, 2] < 0 else time_gain * 0.8
        last = np.hstack([-0.1 * gains * g[:, :2], -0.01 * time_gain * g[:, 2:]])
        np.testing.assert_allclose(step, centred(last), rtol=1e-12, atol=1e-15)
    assert time_gain == pytest.approx(0.8 + 0.2 + 0.2 + 0.2)


def test_coordinates_are_recentred():
    spy = Spy(lambda call, Y: np.ones_like(Y))  # pushes every point the same way
    result = minimize(spy, np.arange(12.0).reshape(4, 3), n_space=3,
                      settings=GradientDescent(max_iter=5, min_iter=5))
    np.testing.assert_allclose(result.Y.mean(axis=0), 0.0, atol=1e-12)


def test_stops_at_the_first_epoch_meeting_the_rule_after_min_iter():
    def cost(call):
        return float(np.exp(-call / 40.0))

    s = GradientDescent(max_iter=5000, min_iter=500, tol=1e-9)
    result = minimize(Spy(lambda c, Y: np.zeros_like(Y), cost), np.zeros((3, 2)), 2, s)
    E = np.array([cost(e) for e in range(5000)])
    expected = next(
        e for e in range(s.min_iter - 1, 5000)
        if np.ptp(E[e - 4 : e + 1]) <= s.tol * abs(E[e] - E[0])
    )
    assert result.converged and result.n_iter == expected + 1
    np.testing.assert_array_equal(result.cost_trace, E[: expected + 1])


def test_flat_cost_still_runs_min_iter_epochs():
    s = GradientDescent(max_iter=100, min_iter=30)
    result = minimize(Spy(lambda c, Y: np.zeros_like(Y), lambda c: 1.0), np.zeros((3, 2)), 2, s)
    assert result.converged and result.n_iter == 30


def test_tol_zero_runs_to_max_iter():
    s = GradientDescent(max_iter=40, min_iter=5, tol=0.0)
    spy = Spy(lambda c, Y: np.zeros_like(Y), lambda c: 1.0 / (c + 1))
    result = minimize(spy, np.zeros((3, 2)), 2, s)
    assert not result.converged and result.n_iter == 40 and len(result.cost_trace) == 40


RATE_TESTS = dict(
    max_iter=5000, min_iter=500, tol=0.0, momentum_epochs=(250, 1000), exaggeration_epochs=100,
    rate_window=250, plateau_tol=1e-4, abandon_margin=0.0,
)


def run_on(cost, **settings):
    s = GradientDescent(**{**RATE_TESTS, **settings.pop("overrides", {})})
    return minimize(Spy(lambda c, Y: np.zeros_like(Y), cost), np.zeros((3, 2)), 2, s, **settings)


def test_plateau_stops_a_converged_run_and_not_one_still_descending():
    converged = run_on(lambda e: 1.0 + np.exp(-e / 300.0))  # flat long before 5000
    assert converged.stop == "plateau" and converged.converged
    # first epoch after the schedule (1000) with E_{e-250} - E_e <= 1e-4 E_e
    E = 1.0 + np.exp(-np.arange(5000) / 300.0)
    expected = next(e for e in range(1000, 5000) if E[e - 250] - E[e] <= 1e-4 * E[e])
    assert converged.n_iter == expected + 1
    descending = run_on(lambda e: 1.0 - 1e-5 * e)  # 2.5e-3 per window: never a plateau
    assert descending.stop == "max_iter" and descending.n_iter == 5000
    off = run_on(lambda e: 1.0 + np.exp(-e / 300.0), overrides={"rate_window": 0})
    assert off.stop == "max_iter"


def test_abandonment_stops_a_run_that_cannot_catch_up_and_keeps_one_that_can():
    slow = run_on(lambda e: 2.0 - 1e-6 * e, reference_cost=1.0)  # would end near 1.995
    assert slow.stop == "abandoned" and not slow.converged and slow.n_iter == 1001
    # 82 % above the reference at epoch 1000 but descending fast (SNEST R^{3,1} on SCHOOL)
    fast = run_on(lambda e: 1.0 + 1.5 * np.exp(-e / 400.0), reference_cost=1.01)
    assert fast.stop != "abandoned" and fast.cost_trace[-1] < 1.01
    assert run_on(lambda e: 2.0 - 1e-6 * e).stop == "max_iter"  # no reference, no abandonment
    margin = run_on(lambda e: 2.0 - 1e-6 * e, reference_cost=1.0, overrides={"abandon_margin": 1.0})
    assert margin.stop == "max_iter"  # 1.995 is within 100 % of 1.0


def test_neighbour_embedding_is_deterministic_and_decreases_kl():
    P = random_P(30, seed=4)
    objective = NeighbourKL(P, "snest", 2)
    Y0 = np.random.default_rng(7).normal(scale=1e-4, size=(30, 3))
    s = GradientDescent(learning_rate=10.0, learning_rate_time=0.1, max_iter=300, min_iter=300)
    a = minimize(objective, Y0, 2, s)
    b = minimize(objective, Y0, 2, s)
    np.testing.assert_array_equal(a.Y, b.Y)
    np.testing.assert_array_equal(a.cost_trace, b.cost_trace)
    assert a.cost < 0.9 * a.cost_trace[0]
    assert a.cost == pytest.approx(objective.cost(a.Y), rel=1e-14)


def test_absurd_learning_rate_raises_divergence_naming_the_epoch():
    P = random_P(20, seed=5)
    Y0 = np.random.default_rng(0).normal(scale=1e-4, size=(20, 3))
    s = GradientDescent(learning_rate=1e12, learning_rate_time=1e12, max_iter=200)
    with pytest.raises(DivergenceError, match=r"epoch \d+"):
        minimize(NeighbourKL(P, "snest", 2), Y0, 2, s)


def test_non_finite_cost_raises_divergence_at_that_epoch():
    spy = Spy(lambda c, Y: np.zeros_like(Y), lambda c: np.nan if c == 3 else 1.0)
    with pytest.raises(DivergenceError, match="epoch 3: non-finite cost"):
        minimize(spy, np.zeros((3, 2)), 2, GradientDescent(max_iter=10))


def test_progress_is_logged_every_n_epochs(caplog):
    spy = Spy(lambda c, Y: np.zeros_like(Y), lambda c: 1.0 / (c + 1))
    with caplog.at_level(logging.INFO, logger="embedlab.optimize"):
        minimize(spy, np.zeros((3, 2)), 2, GradientDescent(max_iter=25, log_every=10, tol=0))
    lines = [r.getMessage() for r in caplog.records]
    epochs = [line.split()[1] for line in lines if line.startswith("epoch")]
    assert epochs == ["0", "10", "20"]


def test_cost_every_asks_for_the_cost_only_at_its_epochs_and_logged_ones():
    """cost_every = 4 over 11 epochs, logged every 5: the cost is asked for at epochs 0, 4, 5,
    8, 10 and at the end; the other calls pass with_cost=False and leave NaN in the trace;
    the steps are those of a run that evaluates every cost."""
    asked: list[bool] = []

    def objective(Y, exaggeration, with_cost=True):
        asked.append(with_cost)
        return (float(np.sum(Y**2)) if with_cost else np.nan), 2.0 * Y - 1.0

    start = np.arange(6.0).reshape(3, 2)
    s = GradientDescent(max_iter=11, min_iter=11, cost_every=4, log_every=5, learning_rate=0.1)
    every = minimize(lambda Y, x: objective(Y, x), start, 2, GradientDescent(
        max_iter=11, min_iter=11, log_every=5, learning_rate=0.1))  # fmt: skip
    asked.clear()
    sparse = minimize(objective, start, 2, s)
    assert asked == [e in (0, 4, 5, 8, 10) for e in range(11)] + [True]  # + the final cost
    assert np.array_equal(sparse.Y, every.Y) and sparse.cost == every.cost
    known = ~np.isnan(sparse.cost_trace)
    assert np.flatnonzero(known).tolist() == [0, 4, 5, 8, 10]
    assert np.array_equal(sparse.cost_trace[known], every.cost_trace[known])


@pytest.mark.parametrize(
    "kwargs",
    [dict(momentum=(0.5, 0.8)), dict(momentum_epochs=(1000, 250)), dict(learning_rate=0.0),
     dict(min_gain=0.0), dict(window=1), dict(cost_every=0),
     dict(cost_every=5, max_iter=100, min_iter=50),
     dict(cost_every=5, max_iter=100, min_iter=100, rate_window=20)],
)
def test_invalid_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        GradientDescent(**kwargs)


def test_settings_are_read_by_name_given_values_first_sequences_as_tuples():
    class Options:
        momentum = [0.3, 0.6]
        momentum_epochs = [40]
        max_iter = 90
        min_iter = 10
        perplexity = 30.0  # not an optimiser setting: not read

    s = GradientDescent.read(Options(), min_iter=90, learning_rate=7.0)
    assert (s.momentum, s.momentum_epochs, s.max_iter) == ((0.3, 0.6), (40,), 90)
    assert (s.min_iter, s.learning_rate) == (90, 7.0)
    assert s.tol == GradientDescent().tol and s.exaggeration == GradientDescent().exaggeration
    assert s.values(["momentum", "max_iter"]) == {"momentum": (0.3, 0.6), "max_iter": 90}
    with pytest.raises(ValueError, match="one more value"):
        GradientDescent.read(Options(), momentum_epochs=[])
