"""tune_devices.py OUTDIR: the comparison of bench/tune_devices.sh's
reports, a line per shape and search: the wall time on one device and on
several and the speed-up, both winners and their re-timed costs,
configurations evaluated, lost (evaluated on one device and not on
several) or evaluated twice, and the devices the runs reported (each run
child says which device it opened)."""
import collections
import glob
import json
import os
import sys

out = sys.argv[1]
runs = collections.defaultdict(dict)
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    n, search, devs = os.path.basename(path)[:-5].split("-", 2)
    runs[(int(n), search)][devs] = json.load(open(path))

print("%-6s %-10s %8s %8s %7s  %-34s %-34s %5s %4s %4s  %s" % (
    "size", "search", "1 dev s", "N dev s", "speedup", "winner on 1 (cost)",
    "winner on N (cost)", "evals", "lost", "dup", "devices (evals)"))
for (n, search), r in sorted(runs.items()):
    if len(r) != 2:
        print("%-6d %-10s incomplete: %s" % (n, search, sorted(r)))
        continue
    one, many = sorted(r.values(), key=lambda x: len(x["devices"]))
    cfg = lambda e: json.dumps(e["config"], sort_keys=True)  # noqa: E731
    seen1 = {cfg(e) for e in one["evaluations"]}
    seen = collections.Counter(cfg(e) for e in many["evaluations"])
    lost = len(seen1 - set(seen)) if search == "exhaustive" else 0
    dup = sum(c - 1 for c in seen.values())
    ran = collections.Counter(e["device"] for e in many["evaluations"]
                              if e["device"] is not None)

    def win(x):
        b = x["best"]
        return "%s (%.4g)" % (" ".join("%s=%s" % kv for kv in b["config"].items()),
                              b["cost"]) if b else "none"
    print("%-6d %-10s %8.1f %8.1f %6.2fx  %-34s %-34s %5d %4d %4d  %s" % (
        n, search, one["wall_s"], many["wall_s"], one["wall_s"] / max(many["wall_s"], 1e-9),
        win(one), win(many), len(many["evaluations"]), lost, dup,
        " ".join("%s:%d" % kv for kv in sorted(ran.items()))))
