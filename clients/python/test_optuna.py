"""The Optuna bridge (probnes_client.optuna.ProbnesSampler) against a real server: PROBNES_URL.

Run by test/clients/python-optuna.test.ts with Debian's python3-optuna (/usr/bin/python3).
"""
import math
import os
import socket
import tempfile
import threading
import time
import unittest
import uuid
import warnings

import optuna
from optuna.samplers import RandomSampler
from optuna.trial import TrialState

from probnes_client import Client
from probnes_client.optuna import (ParameterOutsideSpaceWarning, ProbnesPruner, ProbnesSampler, ServerFallbackWarning,
                                   ServerUnavailable, UntakenChoicesWarning, _objective_names)

URL = os.environ.get("PROBNES_URL", "http://127.0.0.1:8080")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial):
    x = trial.suggest_float("x", -5, 5)
    lr = trial.suggest_float("lr", 1e-4, 1, log=True)
    width = trial.suggest_int("width", 4, 256, log=True)
    depth = trial.suggest_int("depth", 1, 6)
    return (x - 1) ** 2 + (math.log10(lr) + 2) ** 2 + (math.log2(width) - 5) ** 2 / 4 + (depth - 3) ** 2


def learning_curve(steps):
    """An objective that reports a falling loss at each of `steps` steps and stops when Optuna's pruner says so."""
    def curve(trial):
        x = trial.suggest_float("x", -5, 5)
        y = trial.suggest_float("y", -5, 5)
        loss = 0.0
        for step in range(steps):
            loss = (x * x + y * y) * (1 + 1 / (step + 1))
            trial.report(loss, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return loss
    return curve


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
        # The first trial's space is empty (independent sampling); every later one came from the server. The
        # first was told to the server by its parameters when the study was created, so the server has all 24.
        done = [t for t in self.server_trials(sid) if t["state"] == "COMPLETED"]
        self.assertEqual(len(done), 24)
        first = study.trials[0]
        self.assertEqual([(t["parameters"], t["value"]) for t in done if t["source"] == "external"], [(first.params, first.value)])
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
        curve = learning_curve(8)

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
            # 16 trials: the first by its parameters, 15 handed out by the server.
            self.assertEqual(len([t for t in self.server_trials(sid) if t["state"] == "COMPLETED"]), 16)

    def test_two_processes_racing_to_create_the_server_study_share_the_stored_one(self):
        tag = f"race-{uuid.uuid4().hex[:8]}"

        def quad(trial):
            return (trial.suggest_float("x", -3, 3) - 1) ** 2 + trial.suggest_float("y", -3, 3) ** 2

        with tempfile.TemporaryDirectory() as d:
            storage = f"sqlite:///{d}/optuna.db"
            # Two processes on one Optuna study: each its own sampler and its own storage connection.
            first = ProbnesSampler(URL, method="prob-cmaes", seed=1, study_name=tag)
            second = ProbnesSampler(URL, method="prob-cmaes", seed=2, study_name=tag)
            study_a = optuna.create_study(study_name=tag, storage=storage, sampler=first)
            study_b = optuna.load_study(study_name=tag, storage=storage, sampler=second)
            # The race, made deterministic: the second process looked for the stored server study before
            # the first had stored it, so it saw none until it had created a server study of its own.
            real_entry, real_create = second._entry, second._create
            duplicate = []

            def entry_not_yet_stored(study):
                return real_entry(study) if duplicate else None

            def create(*args, **kwargs):
                made = real_create(*args, **kwargs)
                duplicate.append(made["id"])
                return made

            second._entry, second._create = entry_not_yet_stored, create
            study_a.optimize(quad, n_trials=2)  # a startup trial, then the first creates and stores its study
            kept = self.server_study_of(study_a)
            study_b.optimize(quad, n_trials=3)  # the second creates one too, finds the stored id and gives way
            self.assertEqual(len(duplicate), 1)
            self.assertNotEqual(duplicate[0], kept)
            self.assertEqual(self.server_study_of(study_b), kept)
            study_a.optimize(quad, n_trials=2)
            study_b.optimize(quad, n_trials=2)
            trials = optuna.load_study(study_name=tag, storage=storage).trials
            self.assertEqual([t.state for t in trials], [TrialState.COMPLETE] * 9)
            served = [t for t in trials if "probnes:trial" in t.system_attrs]
            self.assertEqual([t.number for t in served], list(range(1, 9)))  # every trial after the startup one
            self.assertEqual({t.system_attrs["probnes:trial"]["study"] for t in served}, {kept})
            first.release(study_a)
            second.release(study_b)

        servers = {s["id"]: s for s in self.client.iter_studies(page_size=100) if s["name"].startswith(tag)}
        self.assertEqual(sorted(servers), sorted([kept, duplicate[0]]))
        self.assertEqual([sid for sid, s in servers.items() if s["state"] == "ACTIVE"], [kept])
        closed = self.client.get_study(duplicate[0])
        self.assertEqual(closed["state"], "COMPLETED")
        self.assertEqual(closed["metadata"]["superseded_by"], kept)
        self.assertEqual(self.server_trials(duplicate[0]), [])
        # Both processes told the kept study every result: the startup trial by its parameters, the rest as
        # the server's own trials; nothing is left pending.
        counts = self.client.get_study(kept)["trial_counts"]
        self.assertEqual((counts["COMPLETED"], counts["FAILED"], counts["ABANDONED"]), (9, 0, 0), counts)
        self.assertEqual((counts["REQUESTED"], counts["ACTIVE"]), (0, 0), counts)
        done = {t["trial_id"]: t["value"] for t in self.server_trials(kept) if t["source"] != "external"}
        self.assertEqual({done[t.system_attrs["probnes:trial"]["trial_id"]] for t in served}, {t.value for t in served})

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
        # The first trial (sampled before the server study existed) and the enqueued one.
        first = study.trials[0]
        self.assertEqual([(t["parameters"], t["value"]) for t in external], [(first.params, first.value), ({"a": 0.125, "b": 0.625}, 0.75)])
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
        # After the first trial's, told when the study was created.
        self.assertEqual(external[0]["value"], study.trials[0].value)
        self.assertEqual([t["parameters"] for t in external[1:]], [{"x": 0.3, "d": 0.7, "n": 5}])

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


def svc_like(trial):
    """A define-by-run space as people write it: gamma only for rbf, degree only for poly."""
    kernel = trial.suggest_categorical("kernel", ["linear", "rbf", "poly"])
    c = trial.suggest_float("C", 1e-3, 1e3, log=True)
    loss = (math.log10(c) - 1) ** 2
    if kernel == "rbf":
        gamma = trial.suggest_float("gamma", 1e-4, 1, log=True)
        loss += (math.log10(gamma) + 2) ** 2
    elif kernel == "poly":
        degree = trial.suggest_int("degree", 2, 5)
        loss += (degree - 3) ** 2 + 0.5
    else:
        loss += 1.0
    return loss


def svc_stepped(trial):
    """svc_like with a stepped degree: gamma only for rbf, degree (1, 3, 5 or 7) only for poly."""
    kernel = trial.suggest_categorical("kernel", ["linear", "rbf", "poly"])
    c = trial.suggest_float("C", 1e-3, 1e3, log=True)
    loss = (math.log10(c) - 1) ** 2
    if kernel == "rbf":
        loss += (math.log10(trial.suggest_float("gamma", 1e-4, 1, log=True)) + 2) ** 2
    elif kernel == "poly":
        loss += (trial.suggest_int("degree", 1, 7, step=2) - 3) ** 2 + 0.5
    else:
        loss += 1.0
    return loss


def nested_branches(trial):
    """A categorical inside a branch, and a parameter inside its branch: coef0 only for poly of degree 3."""
    kernel = trial.suggest_categorical("kernel", ["linear", "poly"])
    x = trial.suggest_float("x", -1, 1)
    loss = x * x
    if kernel == "poly":
        degree = trial.suggest_categorical("degree", [2, 3])
        loss += degree
        if degree == 3:
            loss += trial.suggest_float("coef0", 0, 1)
    return loss


class RecordingSampler(RandomSampler):
    """RandomSampler that records which (trial number, parameter) it was asked for."""

    def __init__(self, seed):
        super().__init__(seed=seed)
        self.calls = []

    def sample_independent(self, study, trial, param_name, param_distribution):
        self.calls.append((trial.number, param_name))
        return super().sample_independent(study, trial, param_name, param_distribution)


class Proxy:
    """A TCP forwarder to the server that can be stopped and started again on the same port: the
    server as the sampler sees it going away mid-run and coming back."""

    def __init__(self, target_url):
        host_port = target_url.split("//", 1)[1].rstrip("/")
        host, port = host_port.rsplit(":", 1)
        self.target = (host, int(port))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.listener = None
        self.conns = []
        self.lock = threading.Lock()

    def start(self):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(64)
        self.listener = ls
        threading.Thread(target=self._accept, args=(ls,), daemon=True).start()

    def stop(self):
        ls, self.listener = self.listener, None
        if ls is not None:
            try:
                ls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            ls.close()
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.close()
            except OSError:
                pass

    def _accept(self, ls):
        while True:
            try:
                a, _ = ls.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(self.target)
            except OSError:
                a.close()
                continue
            with self.lock:
                self.conns += [a, b]
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for x in (src, dst):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DefineByRunTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(URL)

    def studies_named(self, prefix):
        return [s for s in self.client.iter_studies(page_size=100) if s["name"].startswith(prefix)]

    def test_one_server_study_for_a_define_by_run_space(self):
        tag = f"dbr-{uuid.uuid4().hex[:8]}"
        sampler = ProbnesSampler(URL, method="bo", seed=11, study_name=tag, startup_trials=6)
        study = optuna.create_study(sampler=sampler)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(svc_like, n_trials=30)
        self.assertEqual([t.state for t in study.trials], [TrialState.COMPLETE] * 30)
        servers = self.studies_named(tag)
        self.assertEqual(len(servers), 1, [s["id"] for s in servers])  # never a second study
        sid = servers[0]["id"]
        self.assertEqual(study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"], sid)
        # Its space: every parameter the first six finished trials used (the union, not the intersection).
        first = set().union(*(t.params for t in study.trials[:6]))
        names = {p["name"] for p in self.client.get_study(sid)["parameters"]}
        self.assertEqual(names, first)
        self.assertTrue({"kernel", "C"} <= names)
        served = [t for t in study.trials if "probnes:trial" in t.system_attrs]
        self.assertEqual(len(served), 24)
        self.assertTrue(any(set(t.params) != names for t in served), "no trial left a branch of the space unused")
        for t in served:
            info = t.system_attrs["probnes:trial"]
            self.assertEqual(info["study"], sid)
            st = self.client.get_trial(sid, info["trial_id"])
            # Reported for the server trial its point came from, whichever parameters the branch used.
            self.assertEqual((st["state"], st["value"]), ("COMPLETED", t.value))
            for k, v in t.params.items():
                if k in names:
                    self.assertEqual(st["parameters"][k], v)
        counts = self.client.get_study(sid)["trial_counts"]
        # The 24 served and the 6 startup trials, told by their parameters when the study was created.
        self.assertEqual((counts["COMPLETED"], counts["FAILED"], counts["ABANDONED"]), (30, 0, 0), counts)
        self.assertEqual(sorted(t["value"] for t in self.client.iter_trials(sid) if t["source"] == "external"),
                         sorted(t.value for t in study.trials[:6]))
        # Parameters outside the space (if the first trials missed a branch) were named once each.
        outside = sorted(str(w.message).split("'")[1] for w in caught if issubclass(w.category, ParameterOutsideSpaceWarning))
        self.assertEqual(outside, sorted(set().union(*(t.params for t in study.trials)) - names))
        # After the last optimize nothing is left pending on the server.
        sampler.release(study)
        counts = self.client.get_study(sid)["trial_counts"]
        self.assertEqual((counts["REQUESTED"], counts["ACTIVE"]), (0, 0), counts)

    def test_define_by_run_branches_become_conditions(self):
        tag = f"dbrc-{uuid.uuid4().hex[:8]}"
        sampler = ProbnesSampler(URL, method="prob-cmaes", seed=3, study_name=tag, startup_trials=8)
        study = optuna.create_study(sampler=sampler)
        # One startup trial per branch at least, so that the branches are known when the study is made.
        for kernel in ("linear", "rbf", "poly"):
            study.enqueue_trial({"kernel": kernel})
        study.optimize(svc_like, n_trials=24)
        self.assertEqual([t.state for t in study.trials], [TrialState.COMPLETE] * 24)
        sid = self.studies_named(tag)[0]["id"]
        params = {p["name"]: p for p in self.client.get_study(sid)["parameters"]}
        self.assertEqual(params["gamma"]["condition"], {"parent": "kernel", "values": ["rbf"]})
        self.assertEqual(params["degree"]["condition"], {"parent": "kernel", "values": ["poly"]})
        self.assertNotIn("condition", params["C"])
        served = [t for t in study.trials if "probnes:trial" in t.system_attrs]
        self.assertEqual(len(served), 16)
        for t in served:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            # The server handed out exactly the branch the objective took, and got its result.
            self.assertEqual(st["parameters"], t.params)
            self.assertEqual((st["state"], st["value"]), ("COMPLETED", t.value))
        # An enqueued point in another branch than the server's is told by its active parameters.
        study.enqueue_trial({"kernel": "poly", "degree": 3})
        study.optimize(svc_like, n_trials=1)
        last = study.trials[-1]
        # (by its trial id in the rare case that the server had handed out that very point)
        told = [t for t in self.client.iter_trials(sid) if t["state"] == "COMPLETED"]
        self.assertTrue(any(t["parameters"] == last.params and t["value"] == last.value for t in told), told[-3:])

    def test_default_options_discover_every_branch_before_the_one_server_study(self):
        tag = f"dbrd-{uuid.uuid4().hex[:8]}"
        independent = RecordingSampler(seed=13)
        sampler = ProbnesSampler(URL, seed=13, study_name=tag, independent_sampler=independent)
        study = optuna.create_study(sampler=sampler)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(svc_stepped, n_trials=20)
        self.assertEqual([t.state for t in study.trials], [TrialState.COMPLETE] * 20)
        servers = self.studies_named(tag)
        self.assertEqual(len(servers), 1, [s["id"] for s in servers])
        sid = servers[0]["id"]
        params = {p["name"]: p for p in self.client.get_study(sid)["parameters"]}
        self.assertEqual(sorted(params), ["C", "degree", "gamma", "kernel"])
        self.assertEqual(params["gamma"]["condition"], {"parent": "kernel", "values": ["rbf"]})
        self.assertEqual(params["degree"]["condition"], {"parent": "kernel", "values": ["poly"]})
        self.assertEqual((params["degree"]["type"], params["degree"]["bounds"], params["degree"]["step"]), ("int", [1, 7], 2))
        self.assertNotIn("condition", params["C"])
        self.assertNotIn("condition", params["kernel"])
        # Startup: three trials, one per kernel (untaken choices first); the server study was made at the fourth.
        startup = [t for t in study.trials if "probnes:trial" not in t.system_attrs]
        self.assertEqual([t.number for t in startup], [0, 1, 2])
        self.assertEqual(sorted(t.params["kernel"] for t in startup), ["linear", "poly", "rbf"])
        # After it, every parameter of every trial came from the server: none from the fallback sampler.
        self.assertEqual([c for c in independent.calls if c[0] >= 3], [])
        for t in study.trials[3:]:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            self.assertEqual(st["parameters"], t.params)
            self.assertEqual((st["state"], st["value"]), ("COMPLETED", t.value))
        self.assertEqual([str(w.message) for w in caught if issubclass(w.category, (ParameterOutsideSpaceWarning, UntakenChoicesWarning))], [])
        self.assertEqual(self.client.get_study(sid)["trial_counts"]["COMPLETED"], 20)

    def test_a_categorical_inside_a_branch_is_discovered_too(self):
        tag = f"dbrn-{uuid.uuid4().hex[:8]}"
        independent = RecordingSampler(seed=4)
        study = optuna.create_study(sampler=ProbnesSampler(URL, seed=4, study_name=tag, independent_sampler=independent))
        study.optimize(nested_branches, n_trials=12)
        self.assertEqual(len(self.studies_named(tag)), 1)
        sid = self.studies_named(tag)[0]["id"]
        params = {p["name"]: p for p in self.client.get_study(sid)["parameters"]}
        self.assertEqual(params["degree"]["condition"], {"parent": "kernel", "values": ["poly"]})
        self.assertEqual(params["coef0"]["condition"], {"parent": "degree", "values": [3]})
        # Three startup trials take linear, poly with 2 and poly with 3 (in some order).
        startup = [t for t in study.trials if "probnes:trial" not in t.system_attrs]
        self.assertEqual([t.number for t in startup], [0, 1, 2])
        self.assertEqual(sorted((t.params["kernel"], t.params.get("degree", 0)) for t in startup), [("linear", 0), ("poly", 2), ("poly", 3)])
        self.assertEqual([c for c in independent.calls if c[0] >= 3], [])

    def test_a_choice_never_taken_within_max_startup_trials_is_named_and_its_parameters_fall_back(self):
        tag = f"dbr1-{uuid.uuid4().hex[:8]}"
        sampler = ProbnesSampler(URL, method="prob-cmaes", seed=2, study_name=tag, max_startup_trials=1)
        study = optuna.create_study(sampler=sampler)
        study.enqueue_trial({"kernel": "linear", "C": 1.0})  # the only startup trial takes the linear branch
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(svc_like, n_trials=20)
        sid = self.studies_named(tag)[0]["id"]
        self.assertEqual(len(self.studies_named(tag)), 1)
        self.assertEqual({p["name"] for p in self.client.get_study(sid)["parameters"]}, {"kernel", "C"})
        untaken = [str(w.message) for w in caught if issubclass(w.category, UntakenChoicesWarning)]
        self.assertEqual(len(untaken), 1, untaken)
        self.assertIn("no trial took kernel='rbf', kernel='poly'", untaken[0])
        self.assertIn("max_startup_trials", untaken[0])
        outside = [w for w in caught if issubclass(w.category, ParameterOutsideSpaceWarning)]
        later = sorted({"gamma", "degree"} & set().union(*(t.params for t in study.trials)))
        self.assertEqual(sorted(str(w.message).split("'")[1] for w in outside), later)
        for w in outside:
            self.assertIn("enqueue_trial", str(w.message))
        self.assertEqual(self.client.get_study(sid)["trial_counts"]["ABANDONED"], 0)


class ResilienceTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(URL)
        self.proxy = Proxy(URL)
        self.proxy.start()

    def tearDown(self):
        self.proxy.stop()

    @staticmethod
    def quad(trial):
        return (trial.suggest_float("x", -3, 3) - 1) ** 2 + trial.suggest_float("y", -3, 3) ** 2

    def test_nothing_listening_fails_the_trials_cleanly_within_the_retry_budget(self):
        sampler = ProbnesSampler(f"http://127.0.0.1:{free_port()}", retry_seconds=1.0, timeout=1.0)
        study = optuna.create_study(sampler=sampler)
        t0 = time.monotonic()
        study.optimize(self.quad, n_trials=3, catch=(ServerUnavailable,))
        # The first trial needs no server (its space is empty); the others fail, none stays RUNNING.
        self.assertEqual([t.state for t in study.trials], [TrialState.COMPLETE, TrialState.FAIL, TrialState.FAIL])
        self.assertLess(time.monotonic() - t0, 10)
        # Without catch=, study.optimize raises the clear error, and the trial is FAIL, not RUNNING.
        with self.assertRaises(ServerUnavailable) as e:
            study.optimize(self.quad, n_trials=1)
        self.assertIn("gave no point", str(e.exception))
        self.assertEqual(study.trials[-1].state, TrialState.FAIL)
        self.assertEqual([t for t in study.trials if t.state == TrialState.RUNNING], [])

    def test_server_going_away_mid_run_fail_mode(self):
        sampler = ProbnesSampler(self.proxy.url, method="prob-cmaes", seed=1, retry_seconds=1.0, timeout=2.0)
        study = optuna.create_study(sampler=sampler)
        study.optimize(self.quad, n_trials=4)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]

        def dies_during_evaluation(trial):
            v = self.quad(trial)  # the point came from the server ...
            self.proxy.stop()     # ... which goes away before the result is reported
            return v

        study.optimize(dies_during_evaluation, n_trials=1)
        lost = study.trials[-1]
        self.assertEqual(lost.state, TrialState.COMPLETE)
        study.optimize(self.quad, n_trials=2, catch=(ServerUnavailable,))
        self.assertEqual([t.state for t in study.trials[-2:]], [TrialState.FAIL, TrialState.FAIL])
        self.assertEqual([t for t in study.trials if t.state == TrialState.RUNNING], [])
        self.proxy.start()
        study.optimize(self.quad, n_trials=2)
        self.assertEqual([t.state for t in study.trials[-2:]], [TrialState.COMPLETE] * 2)
        # The result held back during the outage reached the server when it answered again.
        st = self.client.get_trial(sid, lost.system_attrs["probnes:trial"]["trial_id"])
        self.assertEqual((st["state"], st["value"]), ("COMPLETED", lost.value))
        sampler.release(study)
        counts = self.client.get_study(sid)["trial_counts"]
        self.assertEqual((counts["REQUESTED"], counts["ACTIVE"]), (0, 0), counts)

    def test_a_suggestion_whose_answer_was_lost_is_failed_on_the_server_when_it_answers_again(self):
        from probnes_client import ConnectionFailed
        sampler = ProbnesSampler(URL, method="prob-cmaes", seed=3, retry_seconds=1.0)
        study = optuna.create_study(sampler=sampler)
        study.optimize(self.quad, n_trials=3)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        real = sampler.client.suggest

        def leased_then_lost(*a, **k):
            real(*a, **k)  # the server leases a point ...
            raise ConnectionFailed("connection reset", sent=True)  # ... whose answer never arrives

        sampler.client.suggest = leased_then_lost
        study.optimize(self.quad, n_trials=1, catch=(ServerUnavailable,))
        self.assertEqual(study.trials[-1].state, TrialState.FAIL)
        client_id = f"optuna-{study._study_id}-{study.trials[-1].number}"
        held = [t for t in self.client.iter_trials(sid, state="ACTIVE") if t["client_id"] == client_id]
        self.assertEqual(len(held), 1)
        sampler.client.suggest = real
        study.optimize(self.quad, n_trials=1)  # the server answers: what it was owed is sent first
        st = self.client.get_trial(sid, held[0]["trial_id"])
        self.assertEqual(st["state"], "FAILED")
        self.assertIn("no answer from the server", st["failure_reason"])

    def test_server_going_away_mid_run_fallback_mode(self):
        sampler = ProbnesSampler(self.proxy.url, method="prob-cmaes", seed=1, retry_seconds=1.0, timeout=2.0,
                                 on_server_error="fallback", recheck_seconds=0.5)
        study = optuna.create_study(sampler=sampler)
        study.optimize(self.quad, n_trials=4)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        self.proxy.stop()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(self.quad, n_trials=3)
        down = study.trials[-3:]
        self.assertEqual([t.state for t in down], [TrialState.COMPLETE] * 3)
        self.assertTrue(all("probnes:trial" not in t.system_attrs for t in down))
        self.assertTrue(any(issubclass(w.category, ServerFallbackWarning) for w in caught))
        self.proxy.start()
        time.sleep(0.6)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(self.quad, n_trials=3)
        self.assertTrue(any("answers again" in str(w.message) for w in caught), [str(w.message) for w in caught])
        # The server is used again, and the trials sampled without it were told to it as external points.
        self.assertTrue(all("probnes:trial" in t.system_attrs for t in study.trials[-2:]))
        external = [t for t in self.client.iter_trials(sid) if t["source"] == "external"]
        # The first trial (told when the study was created), then those of the outage.
        self.assertEqual(external[0]["value"], study.trials[0].value)
        self.assertGreaterEqual(len(external), 3)
        self.assertTrue({t["value"] for t in external[1:]} <= {t.value for t in down})


class FailureAndStoppingTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(URL)

    def test_a_failed_trial_carries_the_exception_text(self):
        study = optuna.create_study(sampler=ProbnesSampler(URL, method="prob-cmaes", seed=8))

        def f(trial):
            x = trial.suggest_float("x", -1, 1)
            if trial.number == 2:
                raise ValueError("diverged at epoch 3: " + "loss " * 200)
            if trial.number == 3:
                return float("nan")
            return x * x

        study.optimize(f, n_trials=5, catch=(ValueError,))
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        by_number = {t.number: self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
                     for t in study.trials if "probnes:trial" in t.system_attrs}
        raised, nan = by_number[2], by_number[3]
        self.assertEqual(raised["state"], "FAILED")
        self.assertTrue(raised["failure_reason"].startswith("ValueError: diverged at epoch 3: loss"), raised["failure_reason"])
        self.assertLessEqual(len(raised["failure_reason"]), 500)
        self.assertEqual(nan["state"], "FAILED")
        self.assertIn("nan", nan["failure_reason"])
        self.assertNotIn("ended FAIL", nan["failure_reason"])

    def test_the_stopping_rule_is_the_users_and_the_server_pruner_uses_it(self):
        rule = {"rule": "median", "min_steps": 1, "warmup_trials": 3}
        sampler = ProbnesSampler(URL, method="prob-cmaes", seed=9, stopping=rule)
        study = optuna.create_study(sampler=sampler, pruner=ProbnesPruner(sampler))

        curve = learning_curve(6)

        study.optimize(curve, n_trials=25)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        server = self.client.get_study(sid)
        self.assertEqual({k: server["stopping"][k] for k in rule}, rule)
        pruned = [t for t in study.trials if t.state == TrialState.PRUNED]
        self.assertGreater(len(pruned), 0)
        for t in pruned:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            last = t.intermediate_values[max(t.intermediate_values)]
            self.assertEqual((st["state"], st["stopped"], st["value"]), ("COMPLETED", True, last))
        # Every curve is on the server once, whether the pruner or the copy after the trial sent it.
        for t in study.trials:
            if "probnes:trial" in t.system_attrs:
                st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
                self.assertEqual([(v["step"], v["value"]) for v in st["intermediate_values"]], sorted(t.intermediate_values.items()))


def zdt1(trial, d=4):
    """ZDT1 (Zitzler, Deb & Thiele 2000): f1 = x1, g = 1 + 9/(d-1)·Σ_{i>=2} x_i, f2 = g·(1 - sqrt(f1/g)); x in [0, 1]^d."""
    x = [trial.suggest_float(f"x{i}", 0, 1) for i in range(1, d + 1)]
    g = 1 + 9 / (d - 1) * sum(x[1:])
    return x[0], g * (1 - math.sqrt(x[0] / g))


def value_multiset(rows):
    return sorted(tuple(r) for r in rows)


def value_set(rows):
    """Distinct objective vectors (for fronts one of which, Optuna 3.1's best_trials, ignores constraints)."""
    return sorted(set(tuple(float(v) for v in r) for r in rows))


def params_key(params):
    return tuple(sorted(params.items()))


class MultiObjectiveBridgeTest(unittest.TestCase):
    """Optuna studies of several objectives (optuna.create_study(directions=[...])) and constraints_func on the real server."""

    def setUp(self):
        self.client = Client(URL)

    def test_zdt1_two_objectives_best_trials_are_the_servers_front(self):
        sampler = ProbnesSampler(URL, seed=5)
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(zdt1, n_trials=20)
        self.assertEqual(len([t for t in study.trials if t.state == TrialState.COMPLETE]), 20)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        server = self.client.get_study(sid)
        self.assertEqual(server["objectives"], [{"name": "value_0", "direction": "minimize"}, {"name": "value_1", "direction": "minimize"}])
        # Every Optuna trial is on the server with the values Optuna has (the first told by its parameters).
        done = [t for t in self.client.iter_trials(sid) if t["state"] == "COMPLETED"]
        self.assertEqual(value_multiset(t["values"] for t in done), value_multiset(t.values for t in study.trials))
        for t in study.trials[1:]:
            st = self.client.get_trial(sid, t.system_attrs["probnes:trial"]["trial_id"])
            self.assertEqual((st["values"], st["feasible"]), (t.values, True))
        # Optuna's Pareto front (study.best_trials, Optuna's own dominance) is the server's front.
        front = self.client.front(sid, page_size=3)
        self.assertGreater(len(study.best_trials), 0)
        # Trials of equal values are all on both fronts (equal points dominate nothing).
        self.assertEqual(value_multiset(t["values"] for t in front["trials"]), value_multiset(t.values for t in study.best_trials))
        self.assertTrue(front["reference_point"]["derived"])
        self.assertGreater(front["hypervolume"], 0)
        history = self.client.front_history(sid)
        self.assertEqual(len(history["points"]), 20)
        self.assertEqual(history["points"][-1]["front_size"], len(front["trials"]))

    def test_constraints_func_reaches_the_server_and_its_front_is_optunas_feasible_front(self):
        from optuna.study._multi_objective import _get_pareto_front_trials_by_trials

        def objective(trial):
            f1, f2 = zdt1(trial)
            # Feasible when x2 <= 0.5 (Optuna's convention: <= 0), and a second, always met, constraint.
            trial.set_user_attr("constraints", [trial.params["x2"] - 0.5, -1.0])
            return f1, f2

        sampler = ProbnesSampler(URL, seed=6, constraints_func=lambda t: t.user_attrs["constraints"], reference_point=[1.1, 11])
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(objective, n_trials=16)
        sid = study._storage.get_study_system_attrs(study._study_id)["probnes:study"]["id"]
        server = self.client.get_study(sid)
        self.assertEqual(server["constraints"], [{"name": "constraint_0"}, {"name": "constraint_1"}])
        self.assertEqual(server["reference_point"], [1.1, 11])
        by_params = {params_key(t["parameters"]): t for t in self.client.iter_trials(sid) if t["state"] == "COMPLETED"}
        self.assertEqual(len(by_params), 16)
        for t in study.trials:
            # Kept where Optuna's samplers keep them, and reported as they are.
            self.assertEqual(t.system_attrs["constraints"], tuple(t.user_attrs["constraints"]))
            st = by_params[params_key(t.params)]
            self.assertEqual(st["values"], t.values)
            self.assertEqual(st["constraints"], t.user_attrs["constraints"])
            self.assertEqual(st["feasible"], all(c <= 0 for c in t.user_attrs["constraints"]))
        feasible = [t for t in study.trials if all(c <= 0 for c in t.system_attrs["constraints"])]
        self.assertGreater(len(feasible), 0)
        front = self.client.front(sid)
        self.assertEqual(front["feasible_count"], len(feasible))
        expected = _get_pareto_front_trials_by_trials(feasible, study.directions)
        self.assertEqual(value_set(t["values"] for t in front["trials"]), value_set(t.values for t in expected))
        self.assertEqual(front["reference_point"], {"value": [1.1, 11], "derived": False})


class StubServer(Client):
    """The server's contract for several objectives and constraints (docs/multi-objective.md), in memory: enough
    of it to check what the bridge sends without a server. It refuses what the server refuses: values of the
    wrong count, `value` in a study of several objectives, constraints missing or of the wrong count."""

    def __init__(self, methods=None):
        super().__init__("http://stub.invalid", max_retries=0)
        self.methods = methods if methods is not None else [
            {"name": "prob-cmaes", "default": True, "multi_objective": True, "constraints": True}]
        self.studies, self.trials, self.calls = {}, {}, []
        self.lock = threading.Lock()
        self.rng = __import__("random").Random(0)

    def request(self, method, path, query=None, body=None, idempotent=True, raw=False):
        with self.lock:
            self.calls.append((method, path, body))
            parts = path.strip("/").split("/")
            if (method, parts) == ("GET", ["v1", "methods"]):
                return {"methods": self.methods}
            if (method, parts) == ("POST", ["v1", "studies"]):
                sid = f"s{len(self.studies) + 1}"
                objectives = body.get("objectives") or [{"name": "value", "direction": body.get("direction", "minimize")}]
                self.studies[sid] = dict(body, id=sid, objectives=objectives, constraints=body.get("constraints", []))
                self.trials[sid] = []
                return self.studies[sid]
            sid, rest = parts[2], parts[3:]
            study, trials = self.studies[sid], self.trials[sid]
            if method == "GET" and rest == ["suggestions"]:
                point = {p["name"]: self._draw(p) for p in study["parameters"]}
                trials.append({"trial_id": len(trials) + 1, "state": "ACTIVE", "parameters": point, "source": "suggested"})
                return {"trials": [dict(trials[-1])], "reason": None}
            if method == "POST" and rest == ["observations"]:
                out = []
                for i, obs in enumerate(body["observations"]):
                    self._check(study, obs, i)
                    if "trial_id" in obs:
                        t = trials[obs["trial_id"] - 1]
                    else:
                        trials.append({"trial_id": len(trials) + 1, "parameters": obs["parameters"], "source": "external"})
                        t = trials[-1]
                    t.update(state="COMPLETED", observation=obs)
                    out.append(dict(t))
                return {"trials": out, "study_state": "ACTIVE"}
            if method == "POST" and rest[-1] in ("fail", "abandon"):
                t = trials[int(rest[1]) - 1]
                t.update(state="FAILED" if rest[-1] == "fail" else "ABANDONED", failure_reason=(body or {}).get("reason"))
                return dict(t)
            if method == "POST" and rest[-1] == "intermediate":
                return {"should_stop": False}
            raise AssertionError(f"the stub does not answer {method} {path}")

    def _draw(self, p):
        lo, hi = p["bounds"]
        return self.rng.randint(lo, hi) if p["type"] == "int" else self.rng.uniform(lo, hi)

    def _check(self, study, obs, i):
        m, k = len(study["objectives"]), len(study["constraints"])
        def bad(field, detail):
            raise AssertionError(f"the server would answer 400 at /observations/{i}/{field}: {detail}")
        if obs.get("infeasible"):
            return
        if m > 1 and "value" in obs:
            bad("value", "value in a study of several objectives")
        if "values" in obs and len(obs["values"]) != m:
            bad("values", f"{len(obs['values'])} values for {m} objectives")
        if "value" not in obs and "values" not in obs:
            bad("value", "no value")
        if k > 0 and len(obs.get("constraints") or []) != k:
            bad("constraints", f"{len(obs.get('constraints') or [])} constraints for {k}")
        if k == 0 and "constraints" in obs:
            bad("constraints", "the study declares none")

    def observed(self, sid):
        return [t for t in self.trials[sid] if t["state"] == "COMPLETED"]


def two_objectives(trial):
    x = trial.suggest_float("x", 0, 1)
    y = trial.suggest_float("y", -1, 1)
    trial.set_user_attr("c", [x - 0.5, y * y - 0.25])
    return x, (1 - x) + y * y


class StubbedServerTest(unittest.TestCase):
    """The bridge's side of several objectives and constraints, against StubServer (no HTTP)."""

    def run_study(self, n, directions=("minimize", "minimize"), f=two_objectives, methods=None, **kw):
        stub = StubServer(methods)
        sampler = ProbnesSampler(client=stub, seed=1, **kw)
        study = optuna.create_study(directions=list(directions), sampler=sampler)
        study.optimize(f, n_trials=n)
        return stub, sampler, study

    def test_several_objectives_become_the_server_studys_objectives_and_every_result_reaches_it(self):
        stub, _, study = self.run_study(8, directions=("minimize", "maximize"))
        [(sid, spec)] = stub.studies.items()
        self.assertEqual(spec["objectives"], [{"name": "value_0", "direction": "minimize"}, {"name": "value_1", "direction": "maximize"}])
        self.assertNotIn("direction", spec)
        self.assertEqual(spec["constraints"], [])
        # Every COMPLETE Optuna trial is on the server once: the first (sampled before the study existed) by its
        # parameters, the others as the server trial each came from; with the values in Optuna's order.
        observed = stub.observed(sid)
        self.assertEqual(len(observed), 8)
        self.assertEqual([t["source"] for t in observed].count("external"), 1)
        by_params = {tuple(sorted(t["parameters"].items())): t["observation"]["values"] for t in observed}
        for t in study.trials:
            self.assertEqual(by_params[tuple(sorted(t.params.items()))], t.values)

    def test_ask_and_tell_with_a_list_of_values(self):
        stub = StubServer()
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=ProbnesSampler(client=stub, seed=2))
        for i in range(4):
            trial = study.ask()
            x = trial.suggest_float("x", 0, 1)
            study.tell(trial, [x, 1 - x])
        [sid] = stub.studies
        self.assertEqual(sorted(tuple(t["observation"]["values"]) for t in stub.observed(sid)),
                         sorted(tuple(t.values) for t in study.trials))

    def test_constraints_func_values_are_reported_and_kept_where_optunas_samplers_keep_them(self):
        stub, _, study = self.run_study(6, constraints_func=lambda t: t.user_attrs["c"])
        [(sid, spec)] = stub.studies.items()
        self.assertEqual(spec["constraints"], [{"name": "constraint_0"}, {"name": "constraint_1"}])
        for t in study.trials:
            # Optuna's convention (optuna.samplers._base._process_constraints_after_trial): a tuple under "constraints".
            self.assertEqual(t.system_attrs["constraints"], tuple(t.user_attrs["c"]))
        reported = {tuple(sorted(t["parameters"].items())): t["observation"]["constraints"] for t in stub.observed(sid)}
        self.assertEqual(len(reported), 6)
        for t in study.trials:
            self.assertEqual(reported[tuple(sorted(t.params.items()))], list(t.user_attrs["c"]))

    def test_no_server_study_is_created_before_the_number_of_constraints_is_known(self):
        stub = StubServer()
        seen = []

        def constraints(trial):
            seen.append(len(stub.studies))
            return [trial.params["x"] - 0.5]

        study = optuna.create_study(directions=["minimize", "minimize"],
                                    sampler=ProbnesSampler(client=stub, seed=3, constraints_func=constraints))
        study.optimize(two_objectives, n_trials=3)
        # The first trial's constraints came before any server study; the study was created with one constraint.
        self.assertEqual(seen[0], 0)
        self.assertEqual([len(s["constraints"]) for s in stub.studies.values()], [1])

    def test_constraints_of_another_count_fail_the_server_trial_instead_of_sending_a_wrong_shape(self):
        counts = iter([1, 1, 2, 1])
        stub, _, study = self.run_study(4, constraints_func=lambda t: [0.0] * next(counts))
        [sid] = stub.studies
        failed = [t for t in stub.trials[sid] if t["state"] == "FAILED"]
        self.assertEqual(len(failed), 1)
        self.assertIn("constraints_func returned 2 value(s) for Optuna trial 2; the server study declares 1 constraint(s)", failed[0]["failure_reason"])
        self.assertEqual(len(stub.observed(sid)), 3)

    def test_a_method_that_handles_several_objectives_is_chosen_unless_the_user_chose_one(self):
        methods = [{"name": "prob-cmaes", "default": True, "multi_objective": False, "constraints": False},
                   {"name": "cmaes", "multi_objective": False, "constraints": False},
                   {"name": "bo", "multi_objective": True, "constraints": True}]
        stub, _, _ = self.run_study(3, methods=methods)
        self.assertEqual([s["method"] for s in stub.studies.values()], ["bo"])
        stub, _, _ = self.run_study(3, methods=methods, method="cmaes")
        self.assertEqual([s["method"] for s in stub.studies.values()], ["cmaes"])
        # One objective, no constraint: prob-cmaes without asking the server for its methods.
        stub, _, _ = self.run_study(3, directions=("minimize",), methods=methods, f=lambda t: t.suggest_float("x", 0, 1) ** 2)
        self.assertEqual([s["method"] for s in stub.studies.values()], ["prob-cmaes"])
        self.assertNotIn(("GET", "/v1/methods", None), stub.calls)

    def test_one_objective_keeps_direction_and_value(self):
        stub, _, study = self.run_study(4, directions=("maximize",), f=lambda t: -t.suggest_float("x", 0, 1) ** 2)
        [(sid, spec)] = stub.studies.items()
        self.assertEqual(spec["direction"], "maximize")
        created = next(body for method, path, body in stub.calls if (method, path) == ("POST", "/v1/studies"))
        self.assertNotIn("objectives", created)  # what a server without several objectives takes too
        self.assertEqual(sorted(t["observation"]["value"] for t in stub.observed(sid)), sorted(t.value for t in study.trials))
        self.assertTrue(all("values" not in t["observation"] for t in stub.observed(sid)))

    def test_reference_point_and_metric_names(self):
        stub, _, _ = self.run_study(2, reference_point=[1.5, 3])
        self.assertEqual([s["reference_point"] for s in stub.studies.values()], [[1.5, 3.0]])

        class Named:
            directions = [optuna.study.StudyDirection.MINIMIZE] * 2

            def __init__(self, names):
                self.metric_names = names

        self.assertEqual(_objective_names(Named(["error", "fit_seconds"])), ["error", "fit_seconds"])
        # A name the server would refuse, or a repeated one: value_0, value_1, … instead.
        self.assertIsNone(_objective_names(Named(["error", "fit time"])))
        self.assertIsNone(_objective_names(Named(["a", "a"])))
        self.assertIsNone(_objective_names(Named(None)))


def objective_at_prior_centre():
    class Fixed:
        def suggest_float(self, name, low, high, log=False):
            return math.sqrt(low * high) if log else (low + high) / 2

        def suggest_int(self, name, low, high, log=False):
            return int(round(math.sqrt(low * high) if log else (low + high) / 2))

    return objective(Fixed())


if __name__ == "__main__":
    unittest.main()
