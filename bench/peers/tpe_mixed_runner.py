#!/usr/bin/python3
"""Optuna's TPE sampler as the external peer of bench:mixed (benchmark only). The objective lives on
the Node side (bench/mixed.ts), so the values are the project's own mixed BBOB problems: this process
only proposes points.

Protocol (one JSON object per line):
  Node -> runner  {"dim": d_c, "choices": [K_1, ...], "lower": l, "upper": u, "budget": B, "seed": k}
  runner -> Node  {"ready": true, "optuna": "3.1.0"}
  runner -> Node  {"x": [...], "c": [...]}   one evaluation (continuous part, choice indices); Node answers {"y": f}
  runner -> Node  {"done": true, "evaluations": n}
  runner -> Node  {"error": "..."}          then exit status 1

TPE with Optuna's defaults (TPESampler(seed=k): 10 random start-up trials, univariate Parzen
estimators); floats by suggest_float in [l, u], categories by suggest_categorical over the labels
"c0" ... "c{K-1}" (unordered, as for the service).
"""
import json
import sys

import optuna


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def receive():
    line = sys.stdin.readline()
    if not line:
        raise EOFError("the benchmark closed the pipe")
    return json.loads(line)


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    job = receive()
    d, K = int(job["dim"]), [int(k) for k in job["choices"]]
    lo, hi, budget = float(job["lower"]), float(job["upper"]), int(job["budget"])
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=int(job["seed"])))
    send({"ready": True, "optuna": optuna.__version__})
    for _ in range(budget):
        trial = study.ask()
        x = [trial.suggest_float(f"x{i}", lo, hi) for i in range(d)]
        c = [int(trial.suggest_categorical(f"c{j}", [f"c{a}" for a in range(k)])[1:]) for j, k in enumerate(K)]
        send({"x": x, "c": c})
        study.tell(trial, float(receive()["y"]))
    send({"done": True, "evaluations": budget})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the protocol's error message, then a failing exit status
        send({"error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
