"""Facts of tlx-tune reports for prior.test: the evaluation at which the
optimum (cost 1) was first reached, summed over the reports (a report
that never reached it counts its evaluations + 1), or, with --order, the
first configurations and whether the prior's estimates ascend."""
import json
import sys

if sys.argv[1] == "--order":
    r = json.load(open(sys.argv[2]))
    ev = r["evaluations"]
    pri = [e["prior"] for e in ev]
    finite = [p for p in pri if p is not None]
    print("first", json.dumps(ev[0]["config"], sort_keys=True), ev[0]["prior"])
    print("ascending", finite == sorted(finite) and
          all(p is None for p in pri[len(finite):]))
    print("estimates", len(finite), "of", len(ev))
    sys.exit(0)
total = 0
for path in sys.argv[1:]:
    ev = json.load(open(path))["evaluations"]
    total += next((i + 1 for i, e in enumerate(ev) if e["cost"] == 1), len(ev) + 1)
print("reached after", total)
