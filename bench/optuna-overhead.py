"""The Optuna bridge's own time per trial against TPE's, on objectives that cost nothing.

    /usr/bin/python3 bench/optuna-overhead.py --url http://127.0.0.1:8080 [--trials 60] [--seeds 3] [--methods prob-cmaes,bo]
        [--objectives quadratic,svc]

Usually run through `npm run bench:optuna-overhead` (bench/optuna-overhead.ts starts the server and
publishes the table). Each sampler is wrapped so that every call Optuna makes to it —
infer_relative_search_space, sample_relative, sample_independent, after_trial — is timed and
charged to its trial; the objectives take microseconds, so the time per trial is the sampler's own:
`quadratic`, four numeric parameters, and `svc`, a define-by-run space with conditional and stepped
parameters (kernel in {linear, rbf, poly}; gamma only for rbf; degree, an int of step 2, only for poly),
which the bridge searches as one server study with two conditional parameters after a startup of one
trial per kernel. For the bridge, the HTTP requests each trial makes are counted too, and for every
sampler the parameters its independent sampling drew after its first server point (the bridge's
fallback; TPE's are all independent). Prints one JSON line per (objective, sampler, seed, trial).
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

import optuna  # noqa: E402
from optuna.samplers import BaseSampler  # noqa: E402

from probnes_client.optuna import ProbnesSampler  # noqa: E402
# The SVC-like define-by-run space the bridge's tests check (gamma only for rbf, a stepped degree only for poly).
from test_optuna import svc_stepped as svc  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)


def quadratic(trial):
    x = trial.suggest_float("x", -5, 5)
    lr = trial.suggest_float("lr", 1e-4, 1, log=True)
    width = trial.suggest_int("width", 4, 256, log=True)
    depth = trial.suggest_int("depth", 1, 6)
    return (x - 1) ** 2 + (math.log10(lr) + 2) ** 2 + (math.log2(width) - 5) ** 2 / 4 + (depth - 3) ** 2


OBJECTIVES = {"quadratic": quadratic, "svc": svc}


class Timed(BaseSampler):
    """Delegates to `inner`, adding the wall time of each call to the trial's total."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = {}
        self.parts = {}  # (trial, method name) → seconds
        self.requests = {}
        self.independent = {}  # trial → parameters drawn by sample_independent

    def _timed(self, number, fn, *args):
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            dt = time.perf_counter() - t0
            self.seconds[number] = self.seconds.get(number, 0.0) + dt
            key = (number, fn.__name__)
            self.parts[key] = self.parts.get(key, 0.0) + dt

    def reseed_rng(self):
        self.inner.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        return self._timed(trial.number, self.inner.infer_relative_search_space, study, trial)

    def sample_relative(self, study, trial, space):
        return self._timed(trial.number, self.inner.sample_relative, study, trial, space)

    def sample_independent(self, study, trial, name, dist):
        self.independent[trial.number] = self.independent.get(trial.number, 0) + 1
        return self._timed(trial.number, self.inner.sample_independent, study, trial, name, dist)

    def after_trial(self, study, trial, state, values):
        return self._timed(trial.number, self.inner.after_trial, study, trial, state, values)


def counting(client, timed, study_holder):
    """Counts the bridge's HTTP requests (retries included) per trial, by the trial running at the time."""
    once = client._once

    def wrapped(*a, **k):
        n = study_holder["trial"]
        timed.requests[n] = timed.requests.get(n, 0) + 1
        return once(*a, **k)

    client._once = wrapped


def run(objective_name, name, make, seed, trials):
    objective = OBJECTIVES[objective_name]
    timed = Timed(make(seed))
    holder = {"trial": 0}
    if isinstance(timed.inner, ProbnesSampler):
        counting(timed.inner.client, timed, holder)

    def f(trial):
        holder["trial"] = trial.number
        return objective(trial)

    study = optuna.create_study(sampler=timed)
    # The trial's after_trial runs after f returns; the next trial's ask starts with its own number.
    study.optimize(f, n_trials=trials, callbacks=[lambda s, t: holder.__setitem__("trial", t.number + 1)])
    if isinstance(timed.inner, ProbnesSampler):
        timed.inner.release(study)
    for t in study.trials:
        served = "probnes:trial" in t.system_attrs
        print(json.dumps({"objective": objective_name, "sampler": name, "seed": seed, "trial": t.number, "ms": 1000 * timed.seconds.get(t.number, 0.0),
                          "relative_ms": 1000 * (timed.parts.get((t.number, "infer_relative_search_space"), 0.0) + timed.parts.get((t.number, "sample_relative"), 0.0)),
                          "independent_ms": 1000 * timed.parts.get((t.number, "sample_independent"), 0.0),
                          "after_ms": 1000 * timed.parts.get((t.number, "after_trial"), 0.0),
                          "requests": timed.requests.get(t.number), "independent": timed.independent.get(t.number, 0),
                          "served": served if isinstance(timed.inner, ProbnesSampler) else None, "value": t.value}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--methods", default="prob-cmaes,bo")
    ap.add_argument("--objectives", default="quadratic,svc")
    args = ap.parse_args()
    samplers = {"tpe": lambda seed: optuna.samplers.TPESampler(seed=seed)}
    for m in args.methods.split(","):
        samplers[f"probnes:{m}"] = lambda seed, m=m: ProbnesSampler(args.url, method=m, seed=seed, study_name="overhead")
    for objective_name in args.objectives.split(","):
        for seed in range(1, args.seeds + 1):
            for name, make in samplers.items():
                run(objective_name, name, make, seed, args.trials)


if __name__ == "__main__":
    main()
