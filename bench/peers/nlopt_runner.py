#!/usr/bin/python3
"""BOBYQA and NEWUOA (Powell's quadratic-interpolation trust-region methods, through NLopt) as external
peers of bench:bbob. The objective lives on the Node side, so the values are the project's own BBOB
functions bit for bit: this process only proposes points.

Protocol (one JSON object per line; the Node side is bench/lib/bbob-peers.ts):
  Node -> runner  {"method": "bobyqa"|"newuoa", "dim": d, "budget": B, "x0": [...], "step": s,
                   "lower": [...], "upper": [...], "seed": k, "xtol_rel": t}
  runner -> Node  {"ready": true, "algorithm": "LN_BOBYQA", "nlopt": "2.7.1"}
  runner -> Node  {"x": [...]}          one evaluation; Node answers {"y": f} (f at x projected onto the box)
  runner -> Node  {"restart": r, "start": [...], "after": n, "reason": "..."}   (no answer)
  runner -> Node  {"done": true, "evaluations": n, "restarts": r}
  runner -> Node  {"error": "..."}     then exit status 1

Each run is NLopt's minimiser from x0 with initial step s (step / sigma of the protocol), stopped by the
budget or by convergence (relative x tolerance xtol_rel, or NLopt's round-off stop); after convergence
with budget left it restarts from a start drawn from N(x0, s^2 I) projected onto the box, with the same
initial step (numpy's PCG64 seeded with k, so a run is reproducible). BOBYQA honours the box itself;
NLopt's NEWUOA is unconstrained, so its points are projected onto the box before evaluation by the Node
side, as bench:bbob projects every method's points.
"""
import json
import sys

import nlopt
import numpy as np

ALGORITHMS = {"bobyqa": nlopt.LN_BOBYQA, "newuoa": nlopt.LN_NEWUOA}


class Exhausted(Exception):
    """The budget is spent."""


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def receive():
    line = sys.stdin.readline()
    if not line:
        raise EOFError("the benchmark closed the pipe")
    return json.loads(line)


def run(job):
    d = int(job["dim"])
    budget = int(job["budget"])
    x0 = np.asarray(job["x0"], dtype=float)
    lower = np.asarray(job["lower"], dtype=float)
    upper = np.asarray(job["upper"], dtype=float)
    step = float(job["step"])
    algorithm = ALGORITHMS[job["method"]]
    rng = np.random.default_rng(int(job["seed"]))
    xtol_rel = float(job.get("xtol_rel", 1e-10))
    send({"ready": True, "algorithm": nlopt.algorithm_name(algorithm),
          "nlopt": f"{nlopt.version_major()}.{nlopt.version_minor()}.{nlopt.version_bugfix()}"})

    used = 0

    def objective(x, grad):
        nonlocal used
        if used >= budget:
            raise Exhausted()
        send({"x": [float(v) for v in x]})
        reply = receive()
        used += 1
        return float(reply["y"])

    restarts = 0
    start = x0.copy()
    idle = 0
    while used < budget:
        before = used
        opt = nlopt.opt(algorithm, d)
        if job["method"] == "bobyqa":
            opt.set_lower_bounds(lower)
            opt.set_upper_bounds(upper)
        opt.set_min_objective(objective)
        opt.set_initial_step(np.full(d, step))
        opt.set_xtol_rel(xtol_rel)
        opt.set_maxeval(budget - used)
        reason = "converged"
        try:
            opt.optimize(start)
            reason = f"nlopt result {opt.last_optimize_result()}"
        except Exhausted:
            break
        except nlopt.RoundoffLimited:
            reason = "round-off limited"
        except (RuntimeError, ValueError) as e:  # NLopt's generic failure, e.g. a degenerate model
            reason = f"nlopt failure: {e}"
        if used >= budget:
            break
        # No evaluation at all in many restarts in a row would loop forever.
        idle = idle + 1 if used == before else 0
        if idle > 100:
            raise RuntimeError(f"{job['method']}: 100 restarts without an evaluation ({reason})")
        restarts += 1
        start = np.clip(x0 + step * rng.standard_normal(d), lower, upper)
        send({"restart": restarts, "start": [float(v) for v in start], "after": used, "reason": reason})
    send({"done": True, "evaluations": used, "restarts": restarts})


def main():
    try:
        job = receive()
        if job.get("method") not in ALGORITHMS:
            raise ValueError(f"unknown method {job.get('method')!r}; known: {', '.join(ALGORITHMS)}")
        run(job)
    except EOFError:
        sys.exit(1)
    except Exception as e:  # report anything else to the benchmark, which records the run as failed
        send({"error": f"{type(e).__name__}: {e}"})
        sys.exit(1)


if __name__ == "__main__":
    main()
