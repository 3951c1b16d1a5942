#!/usr/bin/python3
"""The real mixed task of bench:mixed: tune scikit-learn's SVC on the digits data shipped with
scikit-learn (1797 8×8 images, 10 classes), a kernel choice and two log-scaled numbers:

  kernel ∈ {linear, rbf, poly, sigmoid} (categorical), C ∈ [1e-3, 1e3] (log), gamma ∈ [1e-5, 1e1] (log)

objective = 1 − mean 3-fold cross-validated accuracy (StratifiedKFold, shuffled with a fixed seed, so
every method sees the same deterministic objective). The service's methods run through the Python
client against the server at --url; Optuna's TPE sampler (defaults, seeded) runs in-process. Each run
prints one JSON line: {"method", "seed", "values": [...], "parameters": [...], "seconds"}.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.preprocessing import StandardScaler
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
import probnes_client  # noqa: E402

KERNELS = ["linear", "rbf", "poly", "sigmoid"]
X, Y = load_digits(return_X_y=True)
CV = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)


def objective(p):
    model = make_pipeline(StandardScaler(), SVC(kernel=p["kernel"], C=p["C"], gamma=p["gamma"], max_iter=20000))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 1.0 - float(np.mean(cross_val_score(model, X, Y, cv=CV)))


SPACE = [
    {"name": "kernel", "type": "categorical", "choices": KERNELS},
    {"name": "C", "scale": "log", "bounds": [1e-3, 1e3]},
    {"name": "gamma", "scale": "log", "bounds": [1e-5, 1e1]},
]


def run_service(url, method, seed, budget, families):
    c = probnes_client.Client(url)
    # CMA-ES ranks a generation: its default λ = 4 + ⌊3 ln 3⌋ = 7; the ProbNES family (by the server's
    # GET /v1/methods, `families`) the API's default 3; the others one point at a time.
    batch = 7 if method == "cmaes" else 3 if families.get(method) == "probnes" else 1
    study = c.create_study({"name": f"svc-{method}-{seed}", "parameters": SPACE, "method": method, "batch_size": batch, "seed": seed})
    values, params = [], []
    while len(values) < budget:
        trials = c.suggest(study["id"], count=min(batch, budget - len(values)), client_id="bench")["trials"]
        obs = []
        for trial in trials:
            v = objective(trial["parameters"])
            obs.append({"trial_id": trial["trial_id"], "value": v})
            values.append(v)
            params.append(trial["parameters"])
        c.observe(study["id"], obs)
    return values, params


def run_tpe(seed, budget):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    values, params = [], []
    for _ in range(budget):
        t = study.ask()
        p = {"kernel": t.suggest_categorical("kernel", KERNELS), "C": t.suggest_float("C", 1e-3, 1e3, log=True), "gamma": t.suggest_float("gamma", 1e-5, 1e1, log=True)}
        v = objective(p)
        study.tell(t, v)
        values.append(v)
        params.append(p)
    return values, params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--methods", default="random,bo,pibo,cmaes,prob-cmaes,tpe")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=30)
    a = ap.parse_args()
    methods = a.methods.split(",")
    # Each method's family as the server's registry states it (GET /v1/methods), asked once.
    families = {m["name"]: m["family"] for m in probnes_client.Client(a.url).list_methods()["methods"]} if any(m != "tpe" for m in methods) else {}
    for seed in range(a.seeds):
        for method in methods:
            t0 = time.time()
            values, params = run_tpe(seed, a.budget) if method == "tpe" else run_service(a.url, method, seed, a.budget, families)
            print(json.dumps({"method": method, "seed": seed, "values": values, "parameters": params, "seconds": time.time() - t0}), flush=True)


if __name__ == "__main__":
    main()
