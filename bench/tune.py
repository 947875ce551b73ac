"""tune.py OUTDIR: the comparison of bench/tune.sh's reports (issue 17's
proof), a line per case and search: the best configuration and its
re-timed cost, against the exhaustive search's best; the evaluations the
search made, their share of the exhaustive search's, and the first at
which it came within 2% of the exhaustive best; the wall time; the
default configuration's cost and the winner's speed-up over it."""
import collections
import glob
import json
import os
import sys

out = sys.argv[1]
runs = collections.defaultdict(dict)
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    case, search = os.path.basename(path)[:-5].rsplit("-", 1)
    try:
        runs[case][search] = json.load(open(path))
    except ValueError as e:
        print("%s: unreadable (%s)" % (path, e))


def best(r):
    b = r.get("best")
    return b["cost"] if b else None


print("%-22s %-10s %9s %7s %6s %7s %7s %8s %8s  %s" % (
    "case", "search", "best", "/exh", "evals", "share", "to 2%", "wall s", "default",
    "winner"))
for case, r in sorted(runs.items()):
    ex = r.get("exhaustive")
    ref = best(ex) if ex else None
    # the exhaustive search's best first measurement: what "within 2%" is
    # measured against in each search's own evaluations
    ref0 = min((e["cost"] for e in ex["evaluations"] if e.get("status") == "ok"),
               default=None) if ex else None
    for search in ("exhaustive", "lfbo", "random"):
        x = r.get(search)
        if not x:
            continue
        b = best(x)
        costs = [e["cost"] for e in x["evaluations"] if e.get("status") == "ok"]
        to2 = next((i + 1 for i, c in enumerate(costs)
                    if ref0 and c <= 1.02 * ref0), None) if costs else None
        n = len(x["evaluations"])
        share = n / len(ex["evaluations"]) if ex else float("nan")
        cfg = " ".join("%s=%s" % kv for kv in x["best"]["config"].items()) if x.get("best") else "-"
        # the default re-timed beside the finalists where the report has it
        d = x.get("default_retimed") or x.get("default_cost") or 0
        print("%-22s %-10s %9.4g %7s %6d %6.1f%% %7s %8.1f %8.4g  %s (%.2fx the default%s)" % (
            case, search, b or 0, "%.3f" % (b / ref) if b and ref else "-", n, 100 * share,
            to2 or "-", x["wall_s"], d, cfg, d / b if b else 0,
            ", re-timed together" if x.get("default_retimed") else ""))
