#!/usr/bin/python3
"""The Optuna peers of bench:multi (bench/multi.ts) and its scikit-learn task: a long-lived process
that keeps Optuna studies open for an ask/tell loop driven by the benchmark (so that every method's
points are evaluated by the same code: the synthetic problems by src/engine/benchmarks/multi.ts in
TypeScript, the scikit-learn task here) and evaluates the scikit-learn task for every side.

Samplers (every one seeded, on a study with one direction per objective, all minimised):
  nsga2  NSGAIISampler(seed=k, constraints_func=…), its defaults (population 50, crossover
         UniformCrossover(0.5), mutation 1/d);
  tpe    TPESampler(seed=k, multivariate=True, constraints_func=…), Optuna's multi-objective TPE
         (MOTPE) with the multivariate Parzen estimator Optuna recommends; other defaults
         (10 random startup trials, its multi-objective gamma);
  random RandomSampler(seed=k).
The constraints (one number per constraint, feasible when every one is ≤ 0, Optuna's convention) are
set as the trial's user attribute "constraints" before `tell`, where constraints_func reads them.
A study without constraints gets no constraints_func.

The scikit-learn task `rf-breast-cancer` (d = 4): RandomForestClassifier(random_state=0, n_jobs=1)
on the breast cancer data shipped with scikit-learn (569 × 30, 2 classes), 3-fold StratifiedKFold
shuffled with a fixed seed; parameters n_estimators ∈ {1, …, 32}, max_depth ∈ {1, …, 12},
min_samples_leaf ∈ {1, …, 32} (log), max_features ∈ [0.05, 1] (a fraction of the 30 features).
Objectives, both minimised and deterministic: the CV error (1 − mean accuracy over the folds) and the
model size (the number of tree nodes of the forest, averaged over the three fold models). Results are
memoised per parameter set (the task is deterministic, so a repeat would give the same numbers).

Protocol (one JSON object per line):
  -> {"ready": true, "optuna": …, "sklearn": …, "numpy": …}
  <- {"start": {"key": K, "sampler": S, "seed": k, "space": [{"name", "low", "high", "int", "log"}],
                "objectives": M, "constraints": C}}                          -> {"ok": true}
  <- {"ask": {"key": K}}                                                    -> {"params": {…}}
  <- {"tell": {"key": K, "values": […], "constraints": […]}}               -> {"ok": true}
  <- {"end": {"key": K}}                                                    -> {"ok": true}
  <- {"eval": {"task": "rf-breast-cancer", "params": {…}}}                  -> {"values": [err, nodes], "seconds": s}
  any failure                                                              -> {"error": "…"} (the process carries on)
"""
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import optuna  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_validate  # noqa: E402
from line_protocol import serve  # noqa: E402

X, Y = load_breast_cancer(return_X_y=True)
CV = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
MEMO = {}


def rf_breast_cancer(p):
    key = (int(p["n_estimators"]), int(p["max_depth"]), int(p["min_samples_leaf"]), float(p["max_features"]))
    if key in MEMO:
        return MEMO[key]
    model = RandomForestClassifier(n_estimators=key[0], max_depth=key[1], min_samples_leaf=key[2], max_features=key[3], random_state=0, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cross_validate(model, X, Y, cv=CV, n_jobs=1, return_estimator=True)
    error = 1.0 - float(np.mean(r["test_score"]))
    nodes = float(np.mean([sum(t.tree_.node_count for t in m.estimators_) for m in r["estimator"]]))
    MEMO[key] = [error, nodes]
    return MEMO[key]


TASKS = {"rf-breast-cancer": rf_breast_cancer}
STUDIES = {}


def constraints_func(trial):
    return trial.user_attrs["constraints"]


def make_sampler(name, seed, constrained):
    cf = constraints_func if constrained else None
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, constraints_func=cf)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constraints_func=cf)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise ValueError(f"unknown sampler {name!r}")


def start(j):
    constrained = int(j["constraints"]) > 0
    study = optuna.create_study(directions=["minimize"] * int(j["objectives"]), sampler=make_sampler(j["sampler"], int(j["seed"]), constrained))
    STUDIES[j["key"]] = {"study": study, "space": j["space"], "trial": None}


def ask(j):
    s = STUDIES[j["key"]]
    t = s["study"].ask()
    params = {}
    for p in s["space"]:
        if p.get("int"):
            params[p["name"]] = t.suggest_int(p["name"], int(p["low"]), int(p["high"]), log=bool(p.get("log")))
        else:
            params[p["name"]] = t.suggest_float(p["name"], p["low"], p["high"], log=bool(p.get("log")))
    s["trial"] = t
    return params


def tell(j):
    s = STUDIES[j["key"]]
    t = s["trial"]
    if j.get("constraints") is not None:
        t.set_user_attr("constraints", [float(c) for c in j["constraints"]])
    s["study"].tell(t, [float(v) for v in j["values"]])
    s["trial"] = None


def handle(msg):
    if "ask" in msg:
        return {"params": ask(msg["ask"])}
    if "tell" in msg:
        tell(msg["tell"])
        return {"ok": True}
    if "start" in msg:
        start(msg["start"])
        return {"ok": True}
    if "end" in msg:
        STUDIES.pop(msg["end"]["key"], None)
        return {"ok": True}
    if "eval" in msg:
        t0 = time.time()
        values = TASKS[msg["eval"]["task"]](msg["eval"]["params"])
        return {"values": values, "seconds": time.time() - t0}
    raise ValueError("expected start, ask, tell, end or eval")


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    serve({"ready": True, "optuna": optuna.__version__, "sklearn": sklearn.__version__, "numpy": np.__version__}, handle)


if __name__ == "__main__":
    main()
