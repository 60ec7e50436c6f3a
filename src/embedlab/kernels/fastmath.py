"""Branch-free exp(x) and 1/x that LLVM vectorises, in float64 and float32.

libm's exp is not vectorised without SVML, and LLVM's cost model keeps a loop with a true
division scalar on this CPU; these routines are plain arithmetic on the bits, so a loop over
them becomes SIMD code (twice as many float32 lanes as float64 lanes per register).

    exp(x) = 2^k exp(r),  k = round(x / ln 2),  r = x - k ln 2 (Cody-Waite: ln 2 = hi + lo,
             k hi exact),  |r| <= ln(2) / 2,  exp(r) by its Taylor polynomial in Estrin's
             form, 2^k written into the exponent bits;
    1/x    : y0 from the bit pattern C - bits(x) (negates the exponent, mirrors the mantissa),
             then Newton steps y <- y (2 - x y), each squaring the relative error.

    precision  exp: degree  error                         1/x: C              steps  error
    float64    13           < 1e-15 (|x| < 10), 3e-14     0x7FDE65FD8ADAB9F6  4      1 ulp
    float32     7           2 ulp                         0x7EF311C2          3      2 ulp

:func:`fast_exp` and :func:`fast_reciprocal` follow the precision of their argument (numba
picks the implementation when it types the call, so one loop written over the input's dtype
serves both). In compiled code a Python float literal is float64 and float32 op float64 is
float64: a constant in such a loop goes through :func:`as_float_of`.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

# NaN/inf must survive optimisation (no nnan/ninf). No reassociation either: LLVM vectorises
# a reassociated sum differently in a fresh and in a cached compile (different bits, and an
# optimisation run that diverges in the 4th digit); sums go through lanes (see
# kernels.neighbour._repulsion_row).
FASTMATH = {"contract", "arcp", "nsz"}

# --------------------------------------------------------------------------------------
# bit casts


@intrinsic
def _bits_as_float64(typingctx, bits):
    """Reinterpret the bits of an int64 as a float64 (no conversion)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float64_bits(typingctx, value):
    """Reinterpret the bits of a float64 as an int64 (no conversion)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_as_float32(typingctx, bits):
    """Reinterpret the low 32 bits of an int64 as a float32 (numba does integer arithmetic in
    int64; LLVM narrows it back to 32-bit lanes)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())

    return types.float32(types.int64), codegen


@intrinsic
def _float32_bits(typingctx, value):
    """The bits of a float32 as an int32, sign-extended to int64."""

    def codegen(context, builder, signature, args):
        return builder.sext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))

    return types.int64(types.float32), codegen


# --------------------------------------------------------------------------------------
# float64


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471806019545  # ln 2 rounded to 32 significant bits: k * _LN2_HI is exact
_LN2_LO = -4.2009150726810846e-11  # ln 2 - _LN2_HI
_ROUND_SHIFTER = 6755399441055744.0  # 1.5 * 2^52: k + shifter holds the integer k in its bits
_EXP_MIN = -708.0  # below this exp(x) is subnormal; returned as 0
_EXP_MAX = 709.0  # above this 2^k overflows; returned as inf
_C = [1.0 / math.factorial(i) for i in range(14)]  # Taylor coefficients of exp
_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C


@njit(inline="always", fastmath=FASTMATH)
def fast_exp64(x):
    """exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= ln(2) / 2; exp(r) by its Taylor
    polynomial of degree 13 (truncation < 2e-17) in Estrin's form (short dependency chains);
    2^k built from its bits. Branch-free, so LLVM vectorises it. Relative error < 1e-15 for
    |x| < 10, < 3e-14 up to |x| = 708; 0 below -708, inf above 709, NaN for NaN."""
    k = math.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    q0 = (_C0 + _C1 * r) + (_C2 + _C3 * r) * r2
    q1 = (_C4 + _C5 * r) + (_C6 + _C7 * r) * r2
    q2 = (_C8 + _C9 * r) + (_C10 + _C11 * r) * r2
    q3 = _C12 + _C13 * r
    poly = (q0 + q1 * r4) + (q2 + q3 * r4) * (r4 * r4)
    value = poly * _bits_as_float64((_float64_bits(k + _ROUND_SHIFTER) + 1023) << 52)
    if x < _EXP_MIN:
        value = 0.0
    if x > _EXP_MAX:
        value = np.inf
    return value


# bits(1/x) ~ C - bits(x): C = 2 bits(1) = 0x7FE0000000000000 negates the exponent and
# mirrors the mantissa (error <= 1/8); this C, found by scanning C below 2 bits(1) for the
# smallest max |1 - x y0| over two binades, brings the error down to 5.1% (4.3 bits).
_RECIPROCAL_START = 0x7FDE65FD8ADAB9F6


@njit(inline="always", fastmath=FASTMATH)
def fast_reciprocal64(x):
    """1 / x for a finite normal x > 0, branch-free so that LLVM vectorises it (its cost model
    keeps loops with a true division scalar on this CPU). Start from the bit pattern
    _RECIPROCAL_START - bits(x) (relative error <= 0.052); each Newton step
    y <- y (2 - x y) squares the error: 0.052 -> 2.6e-3 -> 6.9e-6 -> 4.7e-11 -> 2.2e-21,
    i.e. 1 ulp after rounding. Non-finite x gives NaN (reported upstream as divergence)."""
    y = _bits_as_float64(_RECIPROCAL_START - _float64_bits(x))
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    y = y * (2.0 - x * y)
    return y


_SQRT2 = math.sqrt(2.0)
_NO_ROUNDING_TERM = 2.0**52
_MANTISSA_BITS = (1 << 52) - 1
_ONE_BITS = 1023 << 52
# 2 atanh(s) / s = 2 sum_k s^2k / (2k + 1): degree 11 in s^2 leaves < 1e-18 for |s| <= 0.172
_L = [2.0 / (2 * k + 1) for k in range(12)]
_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8, _L9, _L10, _L11 = _L


@njit(inline="always", fastmath=FASTMATH)
def fast_log1p64(a):
    """log(1 + a) for a >= 0, branch-free and without a division, so that LLVM vectorises a
    loop over it (the attraction's -log w of t-SNE and SNEST, one per non-zero of P: libm's
    scalar log1p was ~80 % of that loop's time).

        u = 1 + a = 2^e m, m in [sqrt(1/2), sqrt(2)),  s = (m - 1) / (m + 1),
        log u = e ln 2 + 2 atanh(s)  (|s| <= 0.172; the series in Estrin's form),
        log1p(a) = log u + (a - (u - 1)) / u  (the rounding of 1 + a, to first order),

    the divisions by :func:`fast_reciprocal64`.

    Relative error < 1e-15 (4 ulp) for a >= 1e-300 (0 at a = 0); inf at a = inf, NaN for NaN."""
    u = 1.0 + a
    bits = _float64_bits(u)
    e = (bits >> 52) - 1023
    m = _bits_as_float64((bits & _MANTISSA_BITS) | _ONE_BITS)  # [1, 2)
    big = m > _SQRT2
    if big:  # a select, not a branch, once compiled
        m = 0.5 * m
    if big:
        e = e + 1
    s = (m - 1.0) * fast_reciprocal64(m + 1.0)  # no division: the loop stays SIMD
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    q0 = (_L0 + _L1 * z) + (_L2 + _L3 * z) * z2
    q1 = (_L4 + _L5 * z) + (_L6 + _L7 * z) * z2
    q2 = (_L8 + _L9 * z) + (_L10 + _L11 * z) * z2
    log_m = s * ((q0 + q1 * z4) + q2 * (z4 * z4))
    k = float(e)
    rounding = (a - (u - 1.0)) * fast_reciprocal64(u)
    if u > _NO_ROUNDING_TERM:  # there it is below 1 ulp of the result (and 1/u not normal)
        rounding = 0.0
    value = (k * _LN2_HI + (log_m + k * _LN2_LO)) + rounding
    if u == np.inf:
        value = np.inf
    return value


# --------------------------------------------------------------------------------------
# float32 (constants are float32 scalars, so that no operation is promoted to float64)

_F = np.float32
_LOG2E_32 = _F(_LOG2E)
_LN2_HI_32 = _F(0.693359375)  # ln 2 rounded to 9 significant bits: k * hi exact for |k| < 2^15
_LN2_LO_32 = _F(math.log(2.0) - 0.693359375)
_ROUND_SHIFTER_32 = _F(12582912.0)  # 1.5 * 2^23
_EXP_MIN_32 = _F(-87.0)  # exp(-87) = 1.6e-38, just above the smallest normal float32
_EXP_MAX_32 = _F(88.0)  # k <= 127 (2^128 overflows); exp(88) = 1.7e38 < 3.4e38
_ZERO_32, _HALF_32, _TWO_32, _INF_32 = _F(0.0), _F(0.5), _F(2.0), _F(np.inf)
_D0, _D1, _D2, _D3, _D4, _D5, _D6, _D7 = (_F(1.0 / math.factorial(i)) for i in range(8))


@njit(inline="always", fastmath=FASTMATH)
def fast_exp32(x):
    """exp(x) in float32, as :func:`fast_exp64` with a Taylor polynomial of degree 7
    (truncation < 1e-8 on |r| <= ln(2) / 2) and 2^k from 8 exponent bits. Relative error
    < 2.5e-7 (2 ulp) for x in [-87, 88]; 0 below -87, inf above 88, NaN for NaN."""
    k = np.floor(x * _LOG2E_32 + _HALF_32)
    r = (x - k * _LN2_HI_32) - k * _LN2_LO_32
    r2 = r * r
    q0 = (_D0 + _D1 * r) + (_D2 + _D3 * r) * r2
    q1 = (_D4 + _D5 * r) + (_D6 + _D7 * r) * r2
    poly = q0 + q1 * (r2 * r2)
    value = poly * _bits_as_float32((_float32_bits(k + _ROUND_SHIFTER_32) + 127) << 23)
    if x < _EXP_MIN_32:
        value = _ZERO_32
    if x > _EXP_MAX_32:
        value = _INF_32
    return value


# The same scan as for float64, over float32 bit patterns: 0x7EF311C2 (the classic constant),
# start error 5.05%; three Newton steps: 2.6e-3 -> 6.6e-6 -> 4.4e-11, i.e. 1-2 ulp.
_RECIPROCAL_START_32 = 0x7EF311C2


@njit(inline="always", fastmath=FASTMATH)
def fast_reciprocal32(x):
    """1 / x in float32 for a finite normal x > 0, as :func:`fast_reciprocal64` with three
    Newton steps. Non-finite x gives NaN."""
    y = _bits_as_float32(_RECIPROCAL_START_32 - _float32_bits(x))
    y = y * (_TWO_32 - x * y)
    y = y * (_TWO_32 - x * y)
    y = y * (_TWO_32 - x * y)
    return y


# --------------------------------------------------------------------------------------
# dispatch on the argument's precision


def _by_precision(name, f64, f32):
    """A function whose compiled calls go to ``f64`` or ``f32`` by the argument's type."""

    def stub(x):
        raise NotImplementedError(f"{name} runs in compiled code only; call {f64.__name__}")

    stub.__name__ = stub.__qualname__ = name

    @overload(stub, inline="always", jit_options={"fastmath": FASTMATH})
    def _choose(x):
        if x == types.float64:
            return lambda x: f64(x)
        if x == types.float32:
            return lambda x: f32(x)
        raise TypingError(f"{name}: float32 or float64 expected, got {x}")

    return stub


fast_exp = _by_precision("fast_exp", fast_exp64, fast_exp32)
fast_exp.__doc__ = "exp(x) in the precision of x: :func:`fast_exp64` or :func:`fast_exp32`."
fast_reciprocal = _by_precision("fast_reciprocal", fast_reciprocal64, fast_reciprocal32)
fast_reciprocal.__doc__ = (
    "1 / x in the precision of x: :func:`fast_reciprocal64` or :func:`fast_reciprocal32`."
)


def as_float_of(like, value):
    """``value`` in the float type of ``like`` (compiled code only)."""
    raise NotImplementedError("as_float_of runs in compiled code only")


@overload(as_float_of, inline="always")
def _as_float_of(like, value):
    cast = as_dtype(like).type
    return lambda like, value: cast(value)
