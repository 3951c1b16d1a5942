#!/usr/bin/python3
"""The tasks of bench:hpo (bench/hpo.ts) and its Optuna peers: a long-lived process that evaluates
scikit-learn configurations for the service's methods (so sklearn's import is paid once) and runs
Optuna's samplers on the same tasks with Optuna's own define-by-run spaces.

The model sizes are kept small (at most 50 trees) so that one evaluation stays well under a second
on a shared machine. Tasks (data shipped with scikit-learn; objective = 1 − mean 3-fold cross-validated accuracy,
StratifiedKFold shuffled with a fixed seed, every model with a fixed random_state, n_jobs = 1, so the
objective is deterministic and the same for every method):

  model-choice  breast cancer (569 × 30, 2 classes), a conditional space:
                classifier ∈ {svc, random_forest, logistic};
                svc:           svc_kernel ∈ {rbf, linear}, svc_C ∈ [1e-3, 1e3] (log),
                               svc_gamma ∈ [1e-5, 10] (log, only for the rbf kernel);
                random_forest: rf_n_estimators ∈ {10, 20, …, 50}, rf_max_depth ∈ {2, …, 12};
                logistic:      lr_C ∈ [1e-4, 100] (log).
                SVC and logistic regression behind a StandardScaler.
  boosting      breast cancer, GradientBoostingClassifier with stepped parameters:
                learning_rate ∈ [0.01, 1] (log), n_estimators ∈ {10, 20, …, 50},
                max_depth ∈ {1, 2, 3}, subsample ∈ {0.5, 0.6, …, 1.0}.

Protocol (one JSON object per line):
  -> {"ready": true, "optuna": "3.1.0", "sklearn": "1.2.1"}
  <- {"eval": {"task": T, "params": {...}}}        -> {"y": v, "seconds": s}
  <- {"optuna": {"task": T, "sampler": "tpe" | "cmaes" | "random", "seed": k, "budget": B}}
                                                  -> {"values": [...], "parameters": [...], "seconds": s}
  any failure                                     -> {"error": "..."} (the process carries on)

Samplers: TPESampler(multivariate=True, group=True, seed=k); CmaEsSampler(seed=k) with its default
independent sampler (RandomSampler(seed=k)) for what CMA-ES does not cover (categorical parameters and
the parameters outside the intersection of the trials' spaces, i.e. the conditional ones);
RandomSampler(seed=k). Nothing is cached: every configuration is trained and cross-validated again.
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
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from line_protocol import serve  # noqa: E402

X, Y = load_breast_cancer(return_X_y=True)
CV = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)


def model_choice(p):
    c = p["classifier"]
    if c == "svc":
        gamma = p["svc_gamma"] if p["svc_kernel"] == "rbf" else "scale"
        return make_pipeline(StandardScaler(), SVC(kernel=p["svc_kernel"], C=p["svc_C"], gamma=gamma, max_iter=100000))
    if c == "random_forest":
        return RandomForestClassifier(n_estimators=int(p["rf_n_estimators"]), max_depth=int(p["rf_max_depth"]), random_state=0, n_jobs=1)
    if c == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(C=p["lr_C"], max_iter=2000))
    raise ValueError(f"unknown classifier {c!r}")


def boosting(p):
    return GradientBoostingClassifier(learning_rate=p["learning_rate"], n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]),
                                      subsample=p["subsample"], random_state=0)


MODELS = {"model-choice": model_choice, "boosting": boosting}


def objective(task, p):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 1.0 - float(np.mean(cross_val_score(MODELS[task](p), X, Y, cv=CV, n_jobs=1)))


def suggest(task, t):
    """Optuna's define-by-run space of the task (the same space as bench/hpo.ts declares to the server)."""
    if task == "model-choice":
        p = {"classifier": t.suggest_categorical("classifier", ["svc", "random_forest", "logistic"])}
        if p["classifier"] == "svc":
            p["svc_kernel"] = t.suggest_categorical("svc_kernel", ["rbf", "linear"])
            p["svc_C"] = t.suggest_float("svc_C", 1e-3, 1e3, log=True)
            if p["svc_kernel"] == "rbf":
                p["svc_gamma"] = t.suggest_float("svc_gamma", 1e-5, 10, log=True)
        elif p["classifier"] == "random_forest":
            p["rf_n_estimators"] = t.suggest_int("rf_n_estimators", 10, 50, step=10)
            p["rf_max_depth"] = t.suggest_int("rf_max_depth", 2, 12)
        else:
            p["lr_C"] = t.suggest_float("lr_C", 1e-4, 100, log=True)
        return p
    if task == "boosting":
        return {
            "learning_rate": t.suggest_float("learning_rate", 0.01, 1, log=True),
            "n_estimators": t.suggest_int("n_estimators", 10, 50, step=10),
            "max_depth": t.suggest_int("max_depth", 1, 3),
            "subsample": t.suggest_float("subsample", 0.5, 1.0, step=0.1),
        }
    raise ValueError(f"unknown task {task!r}")


def sampler(name, seed):
    if name == "tpe":
        return optuna.samplers.TPESampler(multivariate=True, group=True, seed=seed)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, independent_sampler=optuna.samplers.RandomSampler(seed=seed))
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise ValueError(f"unknown sampler {name!r}")


def run_optuna(task, name, seed, budget):
    study = optuna.create_study(sampler=sampler(name, seed))
    values, params = [], []
    for _ in range(budget):
        t = study.ask()
        p = suggest(task, t)
        v = objective(task, p)
        study.tell(t, v)
        values.append(v)
        params.append(p)
    return values, params


def handle(msg):
    t0 = time.time()
    if "eval" in msg:
        y = objective(msg["eval"]["task"], msg["eval"]["params"])
        return {"y": y, "seconds": time.time() - t0}
    if "optuna" in msg:
        j = msg["optuna"]
        values, params = run_optuna(j["task"], j["sampler"], int(j["seed"]), int(j["budget"]))
        return {"values": values, "parameters": params, "seconds": time.time() - t0}
    raise ValueError("expected eval or optuna")


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    serve({"ready": True, "optuna": optuna.__version__, "sklearn": sklearn.__version__}, handle)


if __name__ == "__main__":
    main()
