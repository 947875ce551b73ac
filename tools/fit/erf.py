# tools/fit/erf.py: the coefficients of codegen/math.c's erf, and their
# error in f32 arithmetic against math.erf.
#
#   |x| < 1:  erf(x) = x + x C(x^2), C a polynomial of degree 6 fitted
#             to erf(x)/x - 1 (relative error)
#   |x| >= 1: erf(x) = sign(x) (1 - 2^Q(a)), a = min(|x|, 4), Q of
#             degree 8 fitted to log2(erfc(a)) on [1, 4] (absolute
#             error; erf(4) is 1 in f32)
#
# The fit is least squares on Chebyshev nodes, reweighted toward the
# minimax error (Lawson).  The check evaluates each piece as codegen
# does: every fma rounded once to f32, 2^Q with a relative error of
# +-2^-22 (ex2.approx.ftz), over 2 million points of [0, 4.2] and 20,001
# from 1e-30 to 1.  Runs with Debian's python3-numpy:
#
#   /usr/bin/python3 tools/fit/erf.py
import math

import numpy as np

DEG_A, DEG_B = 6, 8


def fit(f, lo, hi, deg, iters=30):
    x = np.cos(np.linspace(0, np.pi, 4000)) * (hi - lo) / 2 + (hi + lo) / 2
    y = f(x)
    v = np.vander(x, deg + 1, increasing=True)
    w = np.ones_like(x)
    for _ in range(iters):
        c, *_ = np.linalg.lstsq(v * w[:, None], y * w, rcond=None)
        err = np.abs(v @ c - y)
        w = w * np.sqrt(err / err.max()) + 1e-12
        w /= w.max()
    return np.float32(c)


def horner(c, t):
    p = np.full_like(t, c[-1], dtype=np.float32)
    for k in c[-2::-1]:
        p = np.float32(np.float64(p) * t + np.float64(k))
    return p


def ulp(y):
    y = np.abs(np.float32(y))
    return np.float64(np.nextafter(y, np.float32(np.inf)) - y)


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)
ca = fit(lambda s: erf(np.sqrt(s)) / np.sqrt(np.maximum(s, 1e-300)) - 1, 1e-12, 1.0, DEG_A)
cb = fit(lambda a: np.log2(erfc(a)), 1.0, 4.0, DEG_B)
print("erf_a:", ", ".join("%.9g" % c for c in ca))
print("erf_b:", ", ".join("%.9g" % c for c in cb))

x = np.float32(np.concatenate([np.linspace(0, 4.2, 2000001), np.logspace(-30, 0, 20001)]))
ref = erf(np.float64(x))
s = np.float32(np.float64(x) * x)
small = np.float32(np.float64(x) * horner(ca, s) + x)
q = horner(cb, np.minimum(x, np.float32(4)))
worst = [0.0, 0.0]
for rel in (0.0, 2.0**-22, -(2.0**-22)):
    big = np.float32(1.0 - np.float64(np.float32(np.exp2(np.float64(q)) * (1 + rel))))
    err = np.abs(np.where(x < 1, small, big) - ref) / ulp(ref)
    worst[0] = max(worst[0], err[x < 1].max())
    worst[1] = max(worst[1], err[x >= 1].max())
print("max error: %.2f ulp below 1, %.2f ulp from 1" % tuple(worst))
