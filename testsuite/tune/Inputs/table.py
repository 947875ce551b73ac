"""tlx.Table and tlx.tuned over a table tlx-tune wrote (table.test):
argv[1] the table, argv[2] examples/.  Prints what each picks and runs
vadd through tlx.tuned on the simulator at a tuned shape and at one
between the tuned shapes."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "python"))
import numpy as np  # noqa: E402
import tlx  # noqa: E402

table, examples = sys.argv[1], sys.argv[2]
t = tlx.Table(table)
print("pick 1024", t.pick("vadd", n=1024))
print("pick 3000", t.pick("vadd", n=3000))
print("exact 3000", t.pick("vadd", exact=True, n=3000))
print("other", t.pick("copy", n=1024))
tlx.device("sim")
k = tlx.tuned(os.path.join(examples, "vadd.tlx"), "vadd", t)
for n in (1024, 3000):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    k(x, x, out, n)
    print("tuned", n, k.config(x, x, out, n), "ok" if np.array_equal(out, 2 * x) else "WRONG")
try:
    tlx.Table(os.path.join(here, "table.py"))
except tlx.Error as e:
    print("error", e)
