"""The vectorisable exp and 1/x of the kernels, in float64 and float32, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit, types

from embedlab.kernels import fastmath


@njit
def exp_and_reciprocal(x):
    """fast_exp(x) and fast_reciprocal(x) elementwise, in x's precision (compiled code only)."""
    e, r = np.empty_like(x), np.empty_like(x)
    for i in range(x.size):
        e[i] = fastmath.fast_exp(x[i])
        r[i] = fastmath.fast_reciprocal(x[i])
    return e, r


def test_float64_exp_and_reciprocal():
    near = np.concatenate([np.linspace(-10, 10, 200001), [0.0, -1e-300, 1e-300]])
    np.testing.assert_allclose(exp_and_reciprocal(near)[0], np.exp(near), rtol=1e-15, atol=0)
    far = np.linspace(-708, 709, 200001)
    np.testing.assert_allclose(exp_and_reciprocal(far)[0], np.exp(far), rtol=3e-14, atol=0)
    special = exp_and_reciprocal(np.array([-709.5, -1e308, np.inf, -np.inf, np.nan, 800.0]))[0]
    assert special[0] == 0 and special[1] == 0 and special[3] == 0
    assert special[2] == np.inf and special[5] == np.inf and np.isnan(special[4])
    y = np.geomspace(1e-300, 1e300, 200001)
    np.testing.assert_allclose(exp_and_reciprocal(y)[1], 1.0 / y, rtol=4.5e-16, atol=0)


def test_float32_exp_and_reciprocal_stay_float32_within_two_ulp():
    x = np.linspace(-87, 88, 400001, dtype=np.float32)
    exp32 = exp_and_reciprocal(x)[0]
    assert exp32.dtype == np.float32
    np.testing.assert_allclose(exp32, np.exp(x.astype(np.float64)), rtol=2.5e-7, atol=0)
    special = np.array([-90, -np.inf, 89, np.inf, np.nan], np.float32)
    special = exp_and_reciprocal(special)[0]
    assert special[0] == special[1] == 0 and special[2] == special[3] == np.inf
    assert np.isnan(special[4])
    y = np.geomspace(1e-30, 1e30, 200001, dtype=np.float32)
    np.testing.assert_allclose(exp_and_reciprocal(y)[1], 1.0 / y.astype(np.float64), rtol=2.5e-7)


def test_constants_keep_the_precision_of_the_loop():
    """A float literal is float64 in compiled code (float32 + 1.0 is float64); as_float_of
    keeps a float32 loop in float32."""
    one_plus = njit(lambda a: fastmath.as_float_of(a, 1.0) + a)
    one_plus(np.float32(1.0))
    one_plus(1.0)
    returns = {sig.args[0]: sig.return_type for sig in one_plus.nopython_signatures}
    assert returns == {types.float32: types.float32, types.float64: types.float64}


@njit
def log1p_of(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = fastmath.fast_log1p64(x[i])
    return out


def test_float64_log1p_within_four_ulp():
    """The FFT attraction's log(1 + a), a >= 0: tiny, moderate and huge a, and the ends."""
    for a in (
        np.geomspace(1e-300, 1e300, 400001),
        np.linspace(0.0, 10.0, 400001),
        np.linspace(0.40, 0.43, 100001),  # 1 + a around sqrt(2): the mantissa's switch
    ):
        np.testing.assert_allclose(log1p_of(a), np.log1p(a), rtol=1e-15, atol=0)
    special = log1p_of(np.array([0.0, np.inf, np.nan, 1.7e308]))
    assert special[0] == 0.0 and special[1] == np.inf and np.isnan(special[2])
    assert special[3] == pytest.approx(np.log1p(1.7e308), rel=1e-15)
