"""Facts of tlx-tune reports for devices.test: the winner, the devices and
their work, how many configurations were evaluated and how many distinct,
and a digest of the results sorted by configuration (the order in which
evaluations end depends on which device finishes first)."""
import hashlib
import json
import sys

for path in sys.argv[1:]:
    r = json.load(open(path))
    evals = r["evaluations"]
    cfgs = [json.dumps(e["config"], sort_keys=True) for e in evals]
    ran = sorted({e["device"] for e in evals if e["device"] is not None})
    results = sorted("%s %s %s" % (c, e["status"], e["cost"])
                     for c, e in zip(cfgs, evals))
    print("best", json.dumps(r["best"]["config"], sort_keys=True),
          r["best"]["cost"])
    print("devices", [d["device"] for d in r["devices"]], "ran-on", ran,
          "all-worked" if all(d["evaluated"] > 0 for d in r["devices"])
          else "some-idle")
    print("evaluated", len(evals), "distinct", len(set(cfgs)))
    print("results", hashlib.sha1("\n".join(results).encode()).hexdigest())
