"""Summary of fmnist-mapped.sh's log: per path, final test accuracy, samples/s and wait share; MAPPED over BOUNCE.

The log holds each run's output after a line "@@run rep=N path=P" (and "@@failed" after a failed one). The sample
prints "device ...; path REASON", then per epoch "epoch E: loss L, test accuracy A, S samples/s, waited for data W%
of the epoch", then "final test accuracy A". samples/s is the median over epochs 1.. of every run of the path (epoch 0
also pays the first touch of the data); with one epoch, epoch 0 is all there is.
Usage: python3 fmnist_mapped_summary.py LOG [OUT_DIR]   (writes OUT_DIR/fmnist-mapped.json when given)
"""
import json
import os
import re
import statistics
import sys

EPOCH = re.compile(r"^epoch (\d+): loss ([\d.naif-]+), test accuracy ([\d.]+), (\d+) samples/s, "
                   r"waited for data ([\d.]+)% of the epoch$")


def parse(lines):
    runs, run = [], None
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("@@run "):
            fields = dict(kv.split("=", 1) for kv in line[6:].split())
            run = {"rep": int(fields["rep"]), "path": fields["path"], "epochs": [], "final": None, "reason": None,
                   "failed": False}
            runs.append(run)
        elif run is None:
            continue
        elif line == "@@failed":
            run["failed"] = True
        elif "; path " in line and line.startswith("device "):
            run["reason"] = line.split("; path ", 1)[1]
        elif line.startswith("final test accuracy "):
            run["final"] = float(line.split()[-1])
        else:
            m = EPOCH.match(line)
            if m:
                run["epochs"].append({"epoch": int(m.group(1)), "accuracy": float(m.group(3)),
                                      "samples_per_s": float(m.group(4)), "waited_pct": float(m.group(5))})
    return runs


def summarise(runs):
    out = {}
    for path in dict.fromkeys(r["path"] for r in runs):
        ok = [r for r in runs if r["path"] == path and not r["failed"] and r["final"] is not None]
        if not ok:
            out[path] = {"runs": 0}
            continue
        steady = [e for r in ok for e in r["epochs"] if e["epoch"] > 0] or [e for r in ok for e in r["epochs"]]
        out[path] = {
            "runs": len(ok),
            "final_accuracy": [r["final"] for r in ok],
            "samples_per_s": statistics.median(e["samples_per_s"] for e in steady),
            "samples_per_s_range": [min(e["samples_per_s"] for e in steady), max(e["samples_per_s"] for e in steady)],
            "waited_pct": statistics.median(e["waited_pct"] for e in steady),
            "taken": sorted({(r["reason"] or "?").split(":")[0] for r in ok}),
        }
    return out


def main():
    with open(sys.argv[1]) as f:
        runs = parse(f)
    summary = summarise(runs)
    for path, s in summary.items():
        if not s["runs"]:
            print("%-7s no successful run" % path)
            continue
        print("%-7s taken %s: final test accuracy %s, %.0f samples/s (epochs 1.., %.0f-%.0f), waited for data %.1f%%"
              % (path, "/".join(s["taken"]), " ".join("%.4f" % a for a in s["final_accuracy"]), s["samples_per_s"],
                 s["samples_per_s_range"][0], s["samples_per_s_range"][1], s["waited_pct"]))
    m, b = summary.get("MAPPED", {}), summary.get("BOUNCE", {})
    if m.get("runs") and b.get("runs"):
        ratio = m["samples_per_s"] / b["samples_per_s"]
        diff = statistics.mean(m["final_accuracy"]) - statistics.mean(b["final_accuracy"])
        print("MAPPED/BOUNCE samples/s %.2f; final accuracy MAPPED - BOUNCE %+.4f" % (ratio, diff))
        summary["mapped_over_bounce"] = {"samples_per_s": ratio, "accuracy_difference": diff}
    if len(sys.argv) > 2 and sys.argv[2]:
        with open(os.path.join(sys.argv[2], "fmnist-mapped.json"), "w") as f:
            json.dump({"runs": runs, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
