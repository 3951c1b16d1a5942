"""The Optuna bridge (probnes_client.optuna.ProbnesSampler) against a real server: PROBNES_URL.

Run by test/clients/python-optuna.test.ts with Debian's python3-optuna (/usr/bin/python3).
"""
import math
import os
import tempfile
import threading
import unittest

import optuna

from probnes_client import Client
from probnes_client.optuna import ProbnesSampler

URL = os.environ.get("PROBNES_URL", "http://127.0.0.1:8080")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial):
    x = trial.suggest_float("x", -5, 5)
    lr = trial.suggest_float("lr", 1e-4, 1, log=True)
    width = trial.suggest_int("width", 4, 256, log=True)
    depth = trial.suggest_int("depth", 1, 6)
    return (x - 1) ** 2 + (math.log10(lr) + 2) ** 2 + (math.log2(width) - 5) ** 2 / 4 + (depth - 3) ** 2


class BridgeTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(URL)

    def server_trials(self, study_id):
        return list(self.client.iter_trials(study_id))

    def server_study_of(self, study):
        attrs = study._storage.get_study_system_attrs(study._study_id)
        self.assertEqual([k for k in attrs if k.startswith("probnes:")], ["probnes:study"], attrs)
        sid = attrs["probnes:study"]["id"]
        # One server study per Optuna study: every Optuna trial the server served points to it.
        self.assertEqual({t.system_attrs["probnes:trial"]["study"] for t in study.trials if "probnes:trial" in t.system_attrs} - {sid}, set())
        return sid

    def test_optimize_searches_the_relative_space_on_the_server(self):
        sampler = ProbnesSampler(URL, method="prob-cmaes", seed=3)
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=24)
        sid = self.server_study_of(study)
        server = self.client.get_study(sid)
        self.assertEqual(server["method"], "prob-cmaes")
        self.assertEqual(sorted(p["name"] for p in server["parameters"]), ["depth", "lr", "width", "x"])
        by_name = {p["name"]: p for p in server["parameters"]}
        self.assertEqual((by_name["lr"]["scale"], by_name["width"]["type"], by_name["width"]["scale"]), ("log", "int", "log"))
        # The first trial's space is empty (independent sampling); every later one came from the server.
        done = [t for t in self.server_trials(sid) if t["state"] == "COMPLETED"]
        self.assertEqual(len(done), 23)
        relative = [t for t in study.trials if "probnes:trial" in t.system_attrs]
        self.assertEqual(len(relative), 23)
        for t in relative:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            self.assertEqual(st["value"], t.value)
            self.assertEqual(st["parameters"]["width"], t.params["width"])
            self.assertIsInstance(t.params["width"], int)
            self.assertTrue(1e-4 <= t.params["lr"] <= 1)
        self.assertLess(study.best_value, objective_at_prior_centre())

    def test_parallel_n_jobs(self):
        study = optuna.create_study(sampler=ProbnesSampler(URL, method="prob-cmaes", seed=5), direction="maximize")
        study.optimize(lambda t: -objective(t), n_trials=20, n_jobs=4)
        self.assertEqual(len([t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]), 20)
        sid = self.server_study_of(study)
        self.assertEqual(self.client.get_study(sid)["direction"], "maximize")
        handed = [t for t in study.trials if "probnes:trial" in t.system_attrs]
        ids = [t.system_attrs["probnes:trial"]["trial_id"] for t in handed]
        self.assertEqual(len(set(ids)), len(ids))  # no server trial given to two Optuna trials
        states = {t["trial_id"]: t["state"] for t in self.server_trials(sid)}
        self.assertTrue(all(states[i] == "COMPLETED" for i in ids), states)

    def test_pruned_trials_are_reported_as_stopped_with_their_last_value(self):
        def curve(trial):
            x = trial.suggest_float("x", -5, 5)
            y = trial.suggest_float("y", -5, 5)
            loss = 0.0
            for step in range(8):
                loss = (x * x + y * y) * (1 + 1 / (step + 1))
                trial.report(loss, step)
                if trial.should_prune():
                    raise optuna.TrialPruned()
            return loss

        study = optuna.create_study(sampler=ProbnesSampler(URL, method="cmaes", batch_size=4, seed=1),
                                    pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=1))
        study.optimize(curve, n_trials=20)
        pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED and "probnes:trial" in t.system_attrs]
        self.assertGreater(len(pruned), 0)
        sid = self.server_study_of(study)
        for t in pruned:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            last = t.intermediate_values[max(t.intermediate_values)]
            self.assertEqual((st["state"], st["stopped"], st["value"]), ("COMPLETED", True, last))
            self.assertEqual([v["value"] for v in st["intermediate_values"]], [t.intermediate_values[s] for s in sorted(t.intermediate_values)])

    def test_optuna_rdb_storage_and_independent_sampling_outside_the_space(self):
        with tempfile.TemporaryDirectory() as d:
            storage = f"sqlite:///{d}/optuna.db"

            def conditional(trial):
                x = trial.suggest_float("x", -3, 3)
                y = trial.suggest_int("y", 0, 10)
                # Only in some trials: never in the intersection, so always sampled independently.
                z = trial.suggest_float("z", 0, 1) if trial.number % 2 else 0.0
                return x * x + (y - 4) ** 2 + z

            study = optuna.create_study(study_name="rdb", storage=storage, sampler=ProbnesSampler(URL, method="prob-cmaes", seed=2))
            study.optimize(conditional, n_trials=12)
            # A second process would load the study from the storage and continue with the same server study.
            again = optuna.load_study(study_name="rdb", storage=storage, sampler=ProbnesSampler(URL, method="prob-cmaes", seed=2))
            again.optimize(conditional, n_trials=4)
            sid = self.server_study_of(again)
            names = sorted(p["name"] for p in self.client.get_study(sid)["parameters"])
            self.assertEqual(names, ["x", "y"])
            self.assertEqual(len([t for t in self.server_trials(sid) if t["state"] == "COMPLETED"]), 15)

    def test_enqueued_values_are_told_as_external_points(self):
        study = optuna.create_study(sampler=ProbnesSampler(URL, method="prob-cmaes", seed=4))
        study.optimize(lambda t: t.suggest_float("a", 0, 1) + t.suggest_float("b", 0, 1), n_trials=3)
        # Values the server does not hand out: prob-cmaes starts with Powell's stencil (docs/ALGORITHM.md
        # §29), the prior mean and ± one prior std, i.e. 0.25, 0.5, 0.75 on [0, 1]; an enqueued point equal
        # to the server's own is reported as its trial.
        study.enqueue_trial({"a": 0.125, "b": 0.625})
        study.optimize(lambda t: t.suggest_float("a", 0, 1) + t.suggest_float("b", 0, 1), n_trials=1)
        sid = self.server_study_of(study)
        external = [t for t in self.server_trials(sid) if t["source"] == "external"]
        self.assertEqual([(t["parameters"], t["value"]) for t in external], [({"a": 0.125, "b": 0.625}, 0.75)])
        # The point the server handed to that Optuna trial did not run: abandoned, not completed.
        handed = self.client.get_trial(sid, study.trials[-1].system_attrs["probnes:trial"]["trial_id"])
        self.assertEqual((handed["state"], handed["value"]), ("ABANDONED", None))

    def test_stepped_distributions_are_searched_on_the_server_grid(self):
        def f(trial):
            x = trial.suggest_float("x", 0, 0.9, step=0.3)
            d = trial.suggest_float("d", -1, 1, step=0.1)
            n = trial.suggest_int("n", 2, 11, step=3)
            return (x - 0.6) ** 2 + d * d + (n - 8) ** 2 / 10

        study = optuna.create_study(sampler=ProbnesSampler(URL, method="prob-cmaes", seed=7))
        study.optimize(f, n_trials=12)
        sid = self.server_study_of(study)
        by_name = {p["name"]: p for p in self.client.get_study(sid)["parameters"]}
        self.assertEqual({k: (p["type"], p["bounds"], p["step"]) for k, p in by_name.items()},
                         {"x": ("float", [0, 0.9], 0.3), "d": ("float", [-1, 1], 0.1), "n": ("int", [2, 11], 3)})
        # Every trial after the first (whose space is empty) came from the server, on its grid.
        relative = [t for t in study.trials if "probnes:trial" in t.system_attrs]
        self.assertEqual(len(relative), 11)
        d_grid = [k / 10 for k in range(-10, 11)]
        for t in relative:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            self.assertEqual(st["state"], "COMPLETED")
            self.assertIn(st["parameters"]["x"], (0, 0.3, 0.6, 0.9))
            self.assertIn(st["parameters"]["d"], d_grid)
            self.assertIn(st["parameters"]["n"], (2, 5, 8, 11))
            self.assertEqual((t.params["x"], t.params["d"], t.params["n"]), (st["parameters"]["x"], st["parameters"]["d"], st["parameters"]["n"]))
        # An enqueued point in Optuna's binary arithmetic (0.1·3) is told as the grid value it is.
        study.enqueue_trial({"x": 0.1 * 3, "d": 0.1 * 7, "n": 5})
        study.optimize(f, n_trials=1)
        external = [t for t in self.server_trials(sid) if t["source"] == "external"]
        self.assertEqual([t["parameters"] for t in external], [{"x": 0.3, "d": 0.7, "n": 5}])

    def test_categorical_parameters(self):
        def f(trial):
            kind = trial.suggest_categorical("kind", ["linear", "rbf", "poly"])
            c = trial.suggest_float("c", 1e-3, 1e3, log=True)
            return abs(math.log10(c)) + {"linear": 1.0, "rbf": 0.0, "poly": 2.0}[kind]

        study = optuna.create_study(sampler=ProbnesSampler(URL, method="bo", seed=6))
        study.optimize(f, n_trials=10)
        self.assertTrue(all(t.params["kind"] in ("linear", "rbf", "poly") for t in study.trials))
        sid = self.server_study_of(study)
        names = sorted(p["name"] for p in self.client.get_study(sid)["parameters"])
        # Where the server's method takes categorical parameters the choice is searched there too.
        self.assertIn(names, (["c", "kind"], ["c"]))


def objective_at_prior_centre():
    class Fixed:
        def suggest_float(self, name, low, high, log=False):
            return math.sqrt(low * high) if log else (low + high) / 2

        def suggest_int(self, name, low, high, log=False):
            return int(round(math.sqrt(low * high) if log else (low + high) / 2))

    return objective(Fixed())


if __name__ == "__main__":
    unittest.main()
