"""Tune six hyperparameters of scikit-learn's MLPClassifier on the digits data through Optuna, comparing
the ProbNES bridge (probnes_client.optuna.ProbnesSampler) with Optuna's own TPE and CMA-ES samplers.

    npm run example:optuna-mlp                               # starts a server of its own
    /usr/bin/python3 examples/optuna_mlp.py --url http://127.0.0.1:8080 --trials 30 --seeds 3

Needs Debian's python3-optuna and python3-sklearn (/usr/bin/python3 has them) and the client
(clients/python on PYTHONPATH, which the npm script sets, or `pip install ./clients/python`).

The task: the digits data shipped with scikit-learn (1797 8×8 images, 10 classes), split once into
1000 training and 797 validation images (random_state 0); an MLPClassifier with two hidden layers,
trained by SGD with momentum for --max-iter epochs (random_state 0), scored by validation accuracy
(maximised). The six dimensions (the paper's FCNet task: learning rate, batch size, two layer
widths, L2 penalty, momentum), with the prior centred on scikit-learn's defaults:

    learning_rate_init  log   [1e-5, 1]    default 1e-3
    batch_size          int   [32, 512] log  default 200
    width_1, width_2    int   [8, 256] log   default 100 (scikit-learn's one layer of 100, twice)
    alpha (L2 penalty)  log   [1e-7, 1e-1]  default 1e-4
    momentum            float [0, 0.99]     default 0.9

ProbNES gets that prior (log-scaled ones: mean ln(default), std 1.5 in ln units; momentum: mean 0.9,
std 0.2); CMA-ES starts at the defaults (x0) with Optuna's default σ0; TPE has no prior. Each sampler
runs --trials trials per seed (seeds 1..--seeds); one JSON line per (sampler, seed) goes to --out,
and a table of mean ± standard error of the best accuracy after 1/3, 2/3 and all trials is printed.
"""
import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings

import optuna
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from probnes_client.optuna import ProbnesSampler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULTS = {"learning_rate_init": 1e-3, "batch_size": 200, "width_1": 100, "width_2": 100, "alpha": 1e-4, "momentum": 0.9}
LOG = {"learning_rate_init", "batch_size", "width_1", "width_2", "alpha"}


def data():
    X, y = load_digits(return_X_y=True)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, train_size=1000, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_va), y_tr, y_va


def make_objective(split, max_iter):
    X_tr, X_va, y_tr, y_va = split

    def objective(trial):
        p = {
            "learning_rate_init": trial.suggest_float("learning_rate_init", 1e-5, 1.0, log=True),
            "batch_size": trial.suggest_int("batch_size", 32, 512, log=True),
            "width_1": trial.suggest_int("width_1", 8, 256, log=True),
            "width_2": trial.suggest_int("width_2", 8, 256, log=True),
            "alpha": trial.suggest_float("alpha", 1e-7, 1e-1, log=True),
            "momentum": trial.suggest_float("momentum", 0.0, 0.99),
        }
        model = MLPClassifier(hidden_layer_sizes=(p["width_1"], p["width_2"]), solver="sgd", learning_rate_init=p["learning_rate_init"],
                              batch_size=p["batch_size"], alpha=p["alpha"], momentum=p["momentum"], max_iter=max_iter, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", RuntimeWarning)  # a diverging learning rate overflows; its score says so
            model.fit(X_tr, y_tr)
        return float(model.score(X_va, y_va))

    return objective


def prior():
    out = {k: {"mean": math.log(v), "std": 1.5} for k, v in DEFAULTS.items() if k in LOG}
    out["momentum"] = {"mean": 0.9, "std": 0.2}
    return out


def sampler_for(name, seed, url):
    if name == "probnes":
        return ProbnesSampler(url, method="prob-cmaes", seed=seed, priors=prior(), study_name=f"optuna-mlp-s{seed}")
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(x0=dict(DEFAULTS), seed=seed)
    raise ValueError(name)


def start_server():
    """A server of our own on a free loopback port, with a throwaway database."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = os.path.join(tempfile.mkdtemp(prefix="optuna-mlp-"), "probnes.db")
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", DATABASE_PATH=db, LOG_LEVEL="warn")
    proc = subprocess.Popen([os.path.join(ROOT, "node_modules/.bin/tsx"), "src/server.ts"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not become ready")


def summary(rows, trials):
    marks = sorted({max(1, round(trials / 3)), max(1, round(2 * trials / 3)), trials})
    lines = ["| sampler | seeds | " + " | ".join(f"best accuracy after {m} trials" for m in marks) + " |",
             "|---|---:|" + "---:|" * len(marks)]
    for name in ("probnes", "tpe", "cmaes"):
        rs = [r for r in rows if r["sampler"] == name]
        if not rs:
            continue
        cells = []
        for m in marks:
            v = [max(r["accuracies"][:m]) for r in rs]
            mean = sum(v) / len(v)
            se = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else 0.0
            cells.append(f"{mean:.4f} ± {se:.4f}")
        lines.append(f"| {name} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running server (default: start one)")
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=20, help="training epochs per trial")
    ap.add_argument("--samplers", default="probnes,tpe,cmaes")
    ap.add_argument("--out", default="optuna-mlp.jsonl", help="one JSON line per (sampler, seed)")
    args = ap.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    proc, url = (None, args.url) if args.url else start_server()
    try:
        split = data()
        objective = make_objective(split, args.max_iter)
        rows = []
        with open(args.out, "w") as out:
            for seed in range(1, args.seeds + 1):
                for name in args.samplers.split(","):
                    t0 = time.time()
                    study = optuna.create_study(direction="maximize", sampler=sampler_for(name, seed, url))
                    study.optimize(objective, n_trials=args.trials)
                    accs = [t.value for t in study.trials]
                    row = {"sampler": name, "seed": seed, "trials": args.trials, "max_iter": args.max_iter, "accuracies": accs,
                           "best_accuracy": max(accs), "best_params": study.best_params, "seconds": round(time.time() - t0, 1)}
                    rows.append(row)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    print(f"{name} seed {seed}: best accuracy {row['best_accuracy']:.4f} ({row['seconds']} s)", file=sys.stderr)
        print(summary(rows, args.trials))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
