# check_ulp.py A B ULPS: the float32 files A and B (the GPU's and the
# simulator's outputs) agree to ULPS units in the last place of B's
# values (NaN where both are NaN).  Exits 1 and says where they differ.
import sys

import numpy as np

a = np.fromfile(sys.argv[1], np.float32).astype(np.float64)
b = np.fromfile(sys.argv[2], np.float32).astype(np.float64)
ulps = float(sys.argv[3])
if a.shape != b.shape:
    sys.exit("check_ulp: %d values against %d" % (a.size, b.size))
ulp = np.spacing(np.abs(b).astype(np.float32)).astype(np.float64)
bad = ~((np.abs(a - b) <= ulps * ulp) | (np.isnan(a) & np.isnan(b)))
if bad.any():
    i = np.flatnonzero(bad)
    print("check_ulp: %d of %d differ by more than %g ulp, first at %d: %r against %r"
          % (i.size, a.size, ulps, i[0], a[i[0]], b[i[0]]))
    sys.exit(1)
