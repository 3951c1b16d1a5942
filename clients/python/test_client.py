"""Tests of probnes_client against the real server, plus retry behaviour against a scripted fake.

Run by `npm test` (test/clients/python.test.ts starts the server and sets PROBNES_URL), or alone:
    cd clients/python && python3 -m unittest -v test_client
which starts `node --import tsx src/server.ts` on a free port with a temporary database.
"""
import http.server
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
import warnings

import probnes_client
from probnes_client import (batch_for_workers, prior_from_points, prior_from_study, BadRequestError, BatchSizeWarning, Client, ConflictError, ConnectionFailed,
                            NotFoundError, Progress, RateLimitedError, ServerError, UnauthorizedError, UnavailableError)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_server = None
BASE = os.environ.get("PROBNES_URL")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setUpModule():
    global _server, BASE, _tmp
    if BASE:
        return
    _tmp = tempfile.TemporaryDirectory()
    port = _free_port()
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", DATABASE_PATH=os.path.join(_tmp.name, "t.db"), LOG_LEVEL="warn", LOG_PRETTY="false")
    _server = subprocess.Popen([os.environ.get("NODE", "node"), "--import", "tsx", "src/server.ts"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    BASE = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(BASE + "/readyz", timeout=1)
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not become ready")


def tearDownModule():
    if _server is not None:
        _server.terminate()
        _server.wait(10)
        _tmp.cleanup()


def branin(p):
    x1, x2 = p["x1"], p["x2"]
    return (x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


BRANIN = {
    "name": "branin",
    "method": "cmaes",
    "batch_size": 4,
    "seed": 3,
    "known_optimum": 0.397887,
    "parameters": [
        {"name": "x1", "type": "float", "bounds": [-5, 10], "prior": {"mean": 2.5, "std": 3.75}},
        {"name": "x2", "type": "float", "bounds": [0, 15], "prior": {"mean": 7.5, "std": 3.75}},
    ],
}


class RealServer(unittest.TestCase):
    def setUp(self):
        self.c = Client(BASE, max_retries=2)

    def test_study_crud_and_typed_errors(self):
        s = self.c.create_study(dict(BRANIN, name="crud", metadata={"team": "a"}))
        self.assertEqual(s["state"], "ACTIVE")
        self.assertEqual(s["trial_counts"]["COMPLETED"], 0)
        self.assertEqual(self.c.get_study(s["id"])["metadata"], {"team": "a"})
        self.assertIn(s["id"], [x["id"] for x in self.c.iter_studies(page_size=1)])
        self.assertEqual(self.c.update_study(s["id"], name="crud-2", state="PAUSED")["state"], "PAUSED")
        self.c.delete_study(s["id"])
        with self.assertRaises(NotFoundError) as e:
            self.c.get_study(s["id"])
        self.assertEqual(e.exception.code, "study_not_found")
        self.assertEqual(e.exception.status, 404)
        self.assertTrue(e.exception.request_id)
        with self.assertRaises(BadRequestError) as e:
            self.c.create_study({"name": "bad", "parameters": [{"name": "x", "bounds": [1, 0]}], "method": "nope"})
        self.assertEqual(e.exception.code, "validation_failed")
        self.assertGreaterEqual(len(e.exception.errors), 1)
        self.assertTrue(all("path" in x for x in e.exception.errors))

    def test_loop_trials_and_results(self):
        sid = self.c.create_study(dict(BRANIN, name="loop"))["id"]
        got = self.c.suggest(sid, count=2, client_id="py-1")
        self.assertEqual(len(got["trials"]), 2)
        self.assertIsNone(got["reason"])
        # Repeating the request gives back the same leased trials, never new work.
        again = self.c.suggest(sid, count=2, client_id="py-1")
        self.assertEqual([t["trial_id"] for t in again["trials"]], [t["trial_id"] for t in got["trials"]])
        t1, t2 = got["trials"]
        self.assertEqual(self.c.heartbeat(sid, t1["trial_id"], "py-1")["state"], "ACTIVE")
        obs = self.c.observe_one(sid, t1["trial_id"], branin(t1["parameters"]), stderr=0.1)
        self.assertEqual(obs["trials"][0]["state"], "COMPLETED")
        # Identical re-send is a no-op; a different value is a typed conflict.
        self.c.observe_one(sid, t1["trial_id"], branin(t1["parameters"]), stderr=0.1)
        with self.assertRaises(ConflictError) as e:
            self.c.observe_one(sid, t1["trial_id"], 123.0)
        self.assertEqual(e.exception.code, "trial_already_completed")
        self.assertEqual(self.c.fail_trial(sid, t2["trial_id"], "out of memory", "py-1")["state"], "FAILED")
        external = self.c.observe(sid, [{"parameters": {"x1": 3.14159, "x2": 2.275}, "value": 0.3979}])
        self.assertEqual(external["trials"][0]["source"], "external")
        t3 = self.c.suggest(sid, client_id="py-2")["trials"][0]
        self.assertEqual(self.c.abandon_trial(sid, t3["trial_id"])["state"], "ABANDONED")
        self.assertEqual(self.c.get_trial(sid, t2["trial_id"])["failure_reason"], "out of memory")
        with self.assertRaises(NotFoundError) as e:
            self.c.get_trial(sid, 999)
        self.assertEqual(e.exception.code, "trial_not_found")

        states = [t["state"] for t in self.c.iter_trials(sid, page_size=1)]
        self.assertEqual(states.count("COMPLETED"), 2)
        self.assertEqual([t["state"] for t in self.c.list_trials(sid, state="FAILED")["trials"]], ["FAILED"])
        best = self.c.best(sid)
        self.assertAlmostEqual(best["observed"]["value"], 0.3979)
        hist = self.c.history(sid)
        self.assertEqual(len(hist["evaluations"]), 2)
        self.assertAlmostEqual(hist["evaluations"][-1]["regret"], 0.3979 - 0.397887, places=9)
        self.assertEqual(len(self.c.distribution(sid)["std"]), 2)

        doc = self.c.export_study(sid)
        copy = self.c.import_study(doc)
        self.assertNotEqual(copy["id"], sid)
        self.assertEqual(copy["trial_counts"], self.c.get_study(sid)["trial_counts"])
        self.assertIn("probnes_http_requests_total", self.c.metrics())
        self.assertEqual(self.c.healthz(), {"status": "ok"})

    def test_stepped_parameters(self):
        spec = {"name": "stepped", "method": "cmaes", "batch_size": 4, "seed": 2, "parameters": [
            {"name": "x", "bounds": [-1, 1], "step": 0.1}, {"name": "n", "type": "int", "bounds": [0, 20], "step": 5}]}
        seen = []

        def f(p):
            seen.append(dict(p))
            return (p["x"] - 0.3) ** 2 + (p["n"] - 10) ** 2 / 100

        study = self.c.create_study(spec)
        self.assertEqual([p["step"] for p in study["parameters"]], [0.1, 5])
        self.c.optimize(f, study["id"], budget=12, workers=2)
        self.assertEqual(len(seen), 12)
        # The grid's decimals exactly (k/10, not 0.1·k with its float noise).
        for p in seen:
            self.assertIn(p["x"], [k / 10 for k in range(-10, 11)])
            self.assertIn(p["n"], [0, 5, 10, 15, 20])
        with self.assertRaises(BadRequestError) as e:
            self.c.create_study(dict(spec, parameters=[{"name": "x", "scale": "log", "bounds": [0.1, 1], "step": 0.1}]))
        self.assertEqual([x["path"] for x in e.exception.errors], ["/parameters/0/step"])

    def test_early_stopping_with_a_trial_handle(self):
        study = self.c.create_study({"name": "py-stop", "method": "random", "batch_size": 1, "parameters": [{"name": "x", "bounds": [0, 1]}],
                                     "stopping": {"rule": "median", "min_steps": 1, "warmup_trials": 1}})
        sid = study["id"]
        self.assertEqual(study["stopping"], {"rule": "median", "min_steps": 1, "warmup_trials": 1})
        first = self.c.trial_handle(sid, self.c.suggest(sid, 1, "a")["trials"][0], "a")
        self.assertFalse(first.report(0, 5.0))
        self.assertEqual(first.last["reason"], "before_min_steps")
        self.assertFalse(first.report(1, 2.0))
        self.assertEqual(first.last["reason"], "warming_up")
        first.complete(2.0)
        second = self.c.trial_handle(sid, self.c.suggest(sid, 1, "b")["trials"][0], "b")
        self.assertIn("x", second.parameters)
        self.assertTrue(second.report(1, 3.0))  # 3 is worse than the median 2 of the completed trial at step 1
        self.assertEqual((second.last["reason"], second.last["median"]), ("worse_than_median", 2.0))
        with self.assertRaises(ConflictError):
            self.c.report(sid, second.trial_id, 1, 3.5)  # a step takes one value
        done = second.stop(3.0)["trials"][0]
        self.assertEqual((done["state"], done["stopped"], done["failure_reason"]), ("COMPLETED", True, "stopped_early"))
        curves = self.c.intermediate_values(sid)["trials"]
        self.assertEqual([[v["value"] for v in t["intermediate_values"]] for t in curves], [[5.0, 2.0], [3.0]])
        # In pages of one value: the first trial's curve spans two pages, joined again by intermediate_values.
        page = self.c.list_intermediate_values(sid, page_size=1)
        self.assertEqual(page["trials"], [{"trial_id": first.trial_id, "intermediate_values": [{"step": 0, "value": 5.0}]}])
        nxt = self.c.list_intermediate_values(sid, page_size=1, page_token=page["next_page_token"])
        self.assertEqual(nxt["trials"], [{"trial_id": first.trial_id, "intermediate_values": [{"step": 1, "value": 2.0}]}])
        self.assertEqual(self.c.intermediate_values(sid, page_size=1), self.c.intermediate_values(sid))
        with self.assertRaises(BadRequestError):
            self.c.list_intermediate_values(sid, page_size=0)

    def test_priors_from_points_and_from_study(self):
        plain = dict(BRANIN, parameters=[{k: v for k, v in p.items() if k != "prior"} for p in BRANIN["parameters"]])
        fitted = self.c.create_study(dict(plain, name="from-points", prior=prior_from_points(
            [{"x1": 3.0, "x2": 2.0}, {"x1": 3.3, "x2": 2.5}, {"x1": 2.9, "x2": 2.2}], weights=[2, 1, 1])))
        self.assertEqual(fitted["prior"]["source"]["from"], "points")
        self.assertAlmostEqual(fitted["prior"]["mean"][0], (6.0 + 3.3 + 2.9) / 4)
        sid = fitted["id"]
        for _ in range(2):
            got = self.c.suggest(sid, count=3, client_id="py-warm")["trials"]
            self.c.observe(sid, [{"trial_id": t["trial_id"], "value": branin(t["parameters"])} for t in got])
        warm = self.c.create_study(dict(plain, name="warm", prior=prior_from_study(sid, top_fraction=0.5, include_observations=True)))
        self.assertEqual(warm["prior"]["source"]["study_id"], sid)
        self.assertEqual(warm["trial_counts"]["COMPLETED"], 6)
        with self.assertRaises(BadRequestError) as e:
            self.c.create_study(dict(plain, name="bad", prior=prior_from_points([{"x1": 3.0, "x2": 2.0}])))
        self.assertEqual([x["path"] for x in e.exception.errors], ["/prior/from_points"])

    def test_optimize_with_parallel_workers(self):
        sid = self.c.create_study(dict(BRANIN, name="optimize"))["id"]
        seen = []
        result = self.c.optimize(branin, sid, budget=24, workers=4, client_prefix="py", progress=seen.append)
        self.assertEqual((result.completed, result.failed, result.stopped_reason), (24, 0, None))
        self.assertEqual(sorted(result.by_client), ["py-0", "py-1", "py-2", "py-3"])
        self.assertEqual(sum(result.by_client.values()), 24)
        self.assertEqual(sorted(p.done for p in seen), list(range(1, 25)))
        trials = list(self.c.iter_trials(sid, state="COMPLETED"))
        self.assertEqual(len(trials), 24)
        self.assertEqual({t["client_id"] for t in trials}, {"py-0", "py-1", "py-2", "py-3"})
        self.assertEqual(result.best["observed"]["value"], min(t["value"] for t in trials))
        self.assertEqual(min(p.best for p in seen), result.best["observed"]["value"])
        # Nothing left leased to these workers.
        self.assertEqual(self.c.get_study(sid)["trial_counts"]["ACTIVE"], 0)

    def test_optimize_keeps_the_best_in_the_studys_direction(self):
        # Maximising: progress's best is the largest value reported so far in the run (by the server's loss).
        sid = self.c.create_study(dict(BRANIN, name="optimize-max", direction="maximize"))["id"]
        seen = []
        self.c.optimize(branin, sid, budget=8, workers=1, client_prefix="py", progress=seen.append)
        values = [p.value for p in seen]
        self.assertEqual([p.best for p in seen], [max(values[: i + 1]) for i in range(len(values))])

    def test_optimize_matches_batch_size_to_workers_for_cmaes_and_warns_once_below(self):
        spec = {k: v for k, v in BRANIN.items() if k != "batch_size"}  # method cmaes
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            created = self.c.optimize(branin, dict(spec, name="six-workers"), budget=12, workers=6)
            self.assertEqual(self.c.get_study(created.study_id)["batch_size"], 6)
            self.assertEqual(created.completed, 12)
            self.assertEqual(caught, [])

            existing = self.c.create_study(dict(spec, name="existing"))  # the server's default batch_size, 3
            self.c.optimize(branin, existing["id"], budget=12, workers=5)
            self.assertEqual([w.category for w in caught], [BatchSizeWarning])
            self.assertIn(f"study {existing['id']} (cmaes) has batch_size 3 but optimize() runs 5 workers", str(caught[0].message))

            # A batch_size the caller chose is kept, and warned about.
            chosen = self.c.optimize(branin, dict(spec, name="chosen", batch_size=2), budget=4, workers=4)
            self.assertEqual(self.c.get_study(chosen.study_id)["batch_size"], 2)
            self.assertEqual(len(caught), 2)
            self.assertIn("has batch_size 2 but optimize() runs 4 workers", str(caught[1].message))

            # prob-cmaes learns from every result: its default batch_size stays, unwarned.
            probnes = self.c.optimize(branin, dict(spec, name="probnes", method="prob-cmaes"), budget=6, workers=6)
            self.assertEqual(self.c.get_study(probnes.study_id)["batch_size"], 3)
            self.assertEqual(len(caught), 2)

    def test_batch_for_workers_changes_only_a_ranking_method_spec_without_batch_size_and_more_workers_than_3(self):
        methods = self.c.list_methods()["methods"]  # the server says which methods rank a generation
        self.assertEqual([m["name"] for m in methods if m["ranks_generation"]], ["cmaes", "lq-cmaes", "xnes", "snes"])
        spec = {k: v for k, v in BRANIN.items() if k != "batch_size"}  # method cmaes
        self.assertNotIn("batch_size", batch_for_workers(spec, 3, methods))
        self.assertEqual(batch_for_workers(spec, 16, methods)["batch_size"], 16)
        self.assertEqual(batch_for_workers(spec, 500, methods)["batch_size"], 100)
        self.assertEqual(batch_for_workers(BRANIN, 16, methods)["batch_size"], 4)
        self.assertNotIn("batch_size", batch_for_workers(dict(spec, method="prob-cmaes"), 16, methods))
        self.assertNotIn("batch_size", batch_for_workers({k: v for k, v in spec.items() if k != "method"}, 16, methods))
        self.assertNotIn("batch_size", batch_for_workers(spec, 16, []))  # no list (an older server): unchanged
        self.assertNotIn("batch_size", spec)  # the caller's dict is not changed

    def test_optimize_fails_crashing_evaluations_and_stops_at_max_trials(self):
        sid = self.c.create_study(dict(BRANIN, name="max", max_trials=10))["id"]
        calls = {"n": 0}
        lock = threading.Lock()

        def flaky(p):
            with lock:
                calls["n"] += 1
                n = calls["n"]
            if n % 4 == 0:
                raise RuntimeError("simulator crashed")
            if n % 4 == 2:
                return float("nan")
            return branin(p)

        result = self.c.optimize(flaky, sid, budget=100, workers=2, heartbeat_seconds=0.05)
        self.assertEqual(result.completed, 10)
        self.assertIn(result.stopped_reason, ("study_completed", "max_trials_reached"))
        failed = list(self.c.iter_trials(sid, state="FAILED"))
        self.assertEqual(len(failed), result.failed)
        self.assertGreaterEqual(result.failed, 4)
        reasons = {t["failure_reason"] for t in failed}
        self.assertIn("RuntimeError: simulator crashed", reasons)
        self.assertIn("objective returned nan", reasons)
        self.assertEqual(self.c.get_study(sid)["state"], "COMPLETED")


class SeveralObjectivesRealServer(unittest.TestCase):
    """Several objectives, a constraint and an infeasible point on the real server (docs/multi-objective.md)."""

    def setUp(self):
        self.c = Client(BASE)

    def test_objectives_constraints_the_front_and_its_history(self):
        # prob-cmaes searches several objectives with constraints (a method that cannot is refused at /method).
        spec = {"name": "py-multi", "method": "prob-cmaes", "parameters": [{"name": "x", "bounds": [0, 1]}],
                "objectives": [{"name": "error", "direction": "minimize"}, {"name": "speed", "direction": "maximize"}],
                "constraints": [{"name": "memory_over"}], "reference_point": [10, 0]}
        study = self.c.create_study(spec)
        sid = study["id"]
        self.assertEqual((study["objectives"], study["constraints"], study["reference_point"], study["direction"]),
                         (spec["objectives"], spec["constraints"], [10, 0], "minimize"))
        # (error, speed, memory_over) per trial; D violates the constraint, E cannot be evaluated.
        results = {"A": ([1, 2], [-1]), "B": ([2, 5], [0]), "C": ([3, 4], [-0.5]), "D": ([0.5, 10], [1]), "E": None, "F": ([4, 6], [-2])}
        ids = {}
        for name, result in results.items():
            trial = self.c.suggest(sid, 1, "py-multi")["trials"][0]
            ids[name] = trial["trial_id"]
            if result is None:
                told = self.c.observe_one(sid, trial["trial_id"], infeasible=True)["trials"][0]
            else:
                told = self.c.observe_one(sid, trial["trial_id"], values=result[0], constraints=result[1])["trials"][0]
            self.assertEqual(told["state"], "COMPLETED")
        a, d, e = (self.c.get_trial(sid, ids[k]) for k in "ADE")
        # losses: the values as the methods minimise them (the maximised speed negated).
        self.assertEqual((a["value"], a["values"], a["losses"], a["constraints"], a["feasible"], a["infeasible"]),
                         (None, [1, 2], [1, -2], [-1], True, False))
        self.assertEqual((d["values"], d["losses"], d["constraints"], d["feasible"]), ([0.5, 10], [0.5, -10], [1], False))
        self.assertEqual((e["values"], e["feasible"], e["infeasible"]), (None, False, True))

        # The front: the feasible trials no other feasible one is at least as good as in every objective and
        # better in one: A, B and F (C is dominated by B; D is infeasible however good), by error.
        front = self.c.front(sid, page_size=2)
        self.assertEqual([t["trial_id"] for t in front["trials"]], [ids["A"], ids["B"], ids["F"]])
        self.assertEqual(front["reference_point"], {"value": [10, 0], "derived": False})
        self.assertEqual((front["evaluation_count"], front["feasible_count"]), (6, 4))
        # Hypervolume of the losses (1,-2), (2,-5), (4,-6) up to (10, 0), by a sweep over the first objective:
        # 1·2 + 2·5 + 6·6 = 48.
        self.assertAlmostEqual(front["hypervolume"], 48, places=9)
        self.assertEqual([t["trial_id"] for t in self.c.iter_front(sid, page_size=1)], [ids["A"], ids["B"], ids["F"]])
        best = self.c.best(sid)
        self.assertIsNone(best["observed"])
        self.assertEqual(best["front"]["size"], 3)
        self.assertAlmostEqual(best["front"]["hypervolume"], 48, places=9)
        self.assertEqual(front["front_size"], 3)

        # After each completed trial: A alone 9·2 = 18; with B 1·2 + 8·5 = 42; C, D and E change nothing; F 48.
        history = self.c.front_history(sid, page_size=4)
        self.assertEqual([p["index"] for p in history["points"]], [1, 2, 3, 4, 5, 6])  # results so far, 1-based
        self.assertEqual([p["trial_id"] for p in history["points"]], [ids[k] for k in "ABCDEF"])
        self.assertEqual([p["front_size"] for p in history["points"]], [1, 2, 2, 2, 2, 3])
        for got, want in zip([p["hypervolume"] for p in history["points"]], [18, 42, 42, 42, 42, 48]):
            self.assertAlmostEqual(got, want, places=9)
        self.assertEqual(list(self.c.iter_front_history(sid, page_size=1)), history["points"])

        trial = self.c.suggest(sid, 1, "py-multi")["trials"][0]
        with self.assertRaises(BadRequestError) as err:
            self.c.observe_one(sid, trial["trial_id"], values=[1.0], constraints=[0])
        self.assertIn("/observations/0/values", [x["path"] for x in err.exception.errors])
        with self.assertRaises(BadRequestError) as err:
            self.c.observe_one(sid, trial["trial_id"], 1.0, constraints=[0])
        self.assertIn("/observations/0/value", [x["path"] for x in err.exception.errors])

    def test_optimize_with_several_objectives_reports_tuples_and_the_result_points_to_the_front(self):
        spec = {"name": "py-multi-optimize", "method": "prob-cmaes", "seed": 4, "parameters": [{"name": "x", "bounds": [0, 1]}],
                "objectives": [{"name": "f1", "direction": "minimize"}, {"name": "f2", "direction": "minimize"}]}
        result = self.c.optimize(lambda p: (p["x"], (1 - p["x"]) ** 2), spec, budget=8, workers=2)
        self.assertEqual(result.completed, 8)
        trials = list(self.c.iter_trials(result.study_id, state="COMPLETED"))
        self.assertTrue(all(t["values"] == [t["parameters"]["x"], (1 - t["parameters"]["x"]) ** 2] for t in trials))
        # f2 falls strictly as f1 rises, so no point dominates another: all 8 are on the front.
        self.assertEqual(result.best["front"]["size"], 8)
        self.assertEqual(sorted(t["trial_id"] for t in self.c.iter_front(result.study_id)), sorted(t["trial_id"] for t in trials))


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next (status, headers, body) of the server's script."""

    def do_GET(self):
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get("content-length") or 0)
        self.server.bodies.append(json.loads(self.rfile.read(length)) if length else None)
        status, headers, body = self.server.script.pop(0)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        data = json.dumps(body).encode() if body is not None else b""
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET

    def log_message(self, *a):
        pass


def problem(status, code):
    return {"type": f"urn:probnes:problem:{code}", "title": "x", "status": status, "detail": f"{code} detail", "instance": "/", "code": code, "request_id": "r-1"}


class _SlowStream:
    """A stderr whose every write yields to other threads midway, as a busy terminal or pipe may."""

    def __init__(self):
        self.chunks = []

    def write(self, text):
        time.sleep(0.001)
        self.chunks.append(text)
        return len(text)

    def flush(self):
        pass


class ProgressPrinting(unittest.TestCase):
    def test_one_line_per_event_when_workers_finish_together(self):
        stream = _SlowStream()
        events = [Progress(i + 1, 64, "w-%d" % (i % 8), i + 1, 0.5 * i, 0.0, 0.7) for i in range(64)]
        start = threading.Barrier(len(events))

        def report(event):
            start.wait()  # every thread prints at the same moment
            probnes_client._printer(event)

        saved, sys.stderr = sys.stderr, stream
        try:
            threads = [threading.Thread(target=report, args=(e,)) for e in events]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.stderr = saved
        lines = "".join(stream.chunks).split("\n")
        self.assertEqual(lines[-1], "")
        self.assertEqual(len(lines[:-1]), 64)
        for line in lines[:-1]:
            self.assertRegex(line, r"^\[\d+/64\] w-\d trial \d+: [\d.]+  best 0  \(0\.7s\)$")
        self.assertEqual(sorted(int(l[1:l.index("/")]) for l in lines[:-1]), list(range(1, 65)))


def _scripted(script):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    srv.script, srv.seen, srv.bodies = list(script), [], []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


JSON = {"content-type": "application/json"}


class SeveralObjectivesScripted(unittest.TestCase):
    """The client's side of several objectives, constraints and the front, against scripted answers."""

    def serve(self, script):
        srv, url = _scripted(script)
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv, url

    def test_front_and_its_history_follow_every_page(self):
        ref = {"value": [1.1, 1.1], "derived": False}
        pages = [
            {"trials": [{"trial_id": 3}, {"trial_id": 1}], "reference_point": ref, "hypervolume": 0.5, "evaluation_count": 9,
             "feasible_count": 8, "next_page_token": "p2"},
            {"trials": [{"trial_id": 7}], "reference_point": ref, "hypervolume": 0.5, "evaluation_count": 9, "feasible_count": 8,
             "next_page_token": None},
        ]
        srv, url = self.serve([(200, JSON, pages[0]), (200, JSON, pages[1]), (200, JSON, pages[0]), (200, JSON, pages[1])])
        c = Client(url)
        front = c.front("s/1", page_size=2)
        self.assertEqual([t["trial_id"] for t in front["trials"]], [3, 1, 7])
        self.assertEqual((front["hypervolume"], front["reference_point"], front["next_page_token"]), (0.5, ref, None))
        self.assertEqual([t["trial_id"] for t in c.iter_front("s/1", page_size=2)], [3, 1, 7])
        self.assertEqual(srv.seen, [("GET", "/v1/studies/s%2F1/front?page_size=2"), ("GET", "/v1/studies/s%2F1/front?page_size=2&page_token=p2")] * 2)

        points = [{"points": [{"index": 0, "trial_id": 1, "hypervolume": 0.1, "front_size": 1}], "reference_point": ref, "next_page_token": "h2"},
                  {"points": [{"index": 1, "trial_id": 2, "hypervolume": 0.3, "front_size": 2}], "reference_point": ref, "next_page_token": None}]
        srv, url = self.serve([(200, JSON, points[0]), (200, JSON, points[1]), (200, JSON, points[0]), (200, JSON, points[1])])
        c = Client(url)
        history = c.front_history("s1", page_size=1)
        self.assertEqual([(p["index"], p["hypervolume"]) for p in history["points"]], [(0, 0.1), (1, 0.3)])
        self.assertEqual(history["next_page_token"], None)
        self.assertEqual([p["front_size"] for p in c.iter_front_history("s1", page_size=1)], [1, 2])
        self.assertEqual(srv.seen[1], ("GET", "/v1/studies/s1/front/history?page_size=1&page_token=h2"))

    def test_observations_carry_values_constraints_and_infeasible_as_given(self):
        answer = {"trials": [{"trial_id": 1, "state": "COMPLETED"}], "study_state": "ACTIVE"}
        srv, url = self.serve([(200, JSON, answer)] * 4)
        c = Client(url)
        c.observe_one("s", 1, values=[0.5, 2], constraints=[-1, 0.25])
        c.observe_one("s", 2, infeasible=True)
        c.trial_handle("s", 3).complete(values=[1, 2])
        c.observe("s", [probnes_client.observation(parameters={"x": 0.5}, values=[1, 2], constraints=[0])])
        self.assertEqual(srv.bodies, [
            {"observations": [{"trial_id": 1, "values": [0.5, 2.0], "constraints": [-1.0, 0.25]}]},
            {"observations": [{"trial_id": 2, "infeasible": True}]},
            {"observations": [{"trial_id": 3, "values": [1.0, 2.0]}]},
            {"observations": [{"parameters": {"x": 0.5}, "values": [1.0, 2.0], "constraints": [0.0]}]},
        ])
        with self.assertRaises(ValueError):
            Client(url).observe_one("s", 1, values=[1.0, float("nan")])
        with self.assertRaises(ValueError):
            probnes_client.observation(values=[1])  # neither a trial nor parameters

    def test_optimize_reports_an_objectives_tuple_as_values_and_has_no_single_best(self):
        study = {"id": "s", "batch_size": 3, "method": "prob-cmaes", "lease_seconds": 60}
        suggested = lambda i: {"trials": [{"trial_id": i, "parameters": {"x": 0.1 * i}}], "reason": None}
        told = lambda i, vs: {"trials": [{"trial_id": i, "state": "COMPLETED", "loss": None, "values": vs, "losses": vs, "feasible": True}],
                              "study_state": "ACTIVE"}
        best = {"observed": None, "front": {"size": 2, "hypervolume": 0.4}}
        srv, url = self.serve([(200, JSON, study), (200, JSON, suggested(1)), (200, JSON, told(1, [0.1, 0.9])),
                               (200, JSON, suggested(2)), (200, JSON, {"trials": [{"trial_id": 2, "state": "COMPLETED", "loss": None,
                                                                                  "values": None, "infeasible": True, "feasible": False}],
                                                                      "study_state": "ACTIVE"}),
                               (200, JSON, best)])
        seen = []
        results = iter([(0.1, 0.9), {"infeasible": True}])
        result = Client(url).optimize(lambda p: next(results), "s", budget=2, workers=1, progress=seen.append)
        self.assertEqual(srv.bodies[2], {"observations": [{"values": [0.1, 0.9], "trial_id": 1}]})
        self.assertEqual(srv.bodies[4], {"observations": [{"infeasible": True, "trial_id": 2}]})
        self.assertEqual((result.completed, result.failed, result.best), (2, 0, best))
        self.assertEqual([(p.value, p.values, p.best, p.infeasible) for p in seen], [(None, [0.1, 0.9], None, False), (None, None, None, True)])


class Retries(unittest.TestCase):
    def serve(self, script):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
        srv.script, srv.seen, srv.bodies = list(script), [], []
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv, f"http://127.0.0.1:{srv.server_address[1]}"

    def test_retries_5xx_and_429_honouring_retry_after(self):
        pj = {"content-type": "application/problem+json"}
        srv, url = self.serve([
            (503, pj, problem(503, "engine_error")),
            (429, dict(pj, **{"retry-after": "0.3"}), problem(429, "rate_limited")),
            (502, {}, None),
            (200, {"content-type": "application/json"}, {"trials": [], "reason": "study_paused", "generation": 0}),
        ])
        t0 = time.monotonic()
        got = Client(url, backoff=0.01).suggest("s1", 2, "w")
        self.assertEqual(got["reason"], "study_paused")
        self.assertEqual(len(srv.seen), 4)
        self.assertEqual(srv.seen[0], ("GET", "/v1/studies/s1/suggestions?count=2&client_id=w"))
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)

    def test_gives_up_after_max_retries_with_the_typed_error(self):
        pj = {"content-type": "application/problem+json"}
        srv, url = self.serve([(503, pj, problem(503, "engine_error"))] * 3)
        with self.assertRaises(UnavailableError) as e:
            Client(url, max_retries=2, backoff=0.001).suggest("s1")
        self.assertIsInstance(e.exception, ServerError)
        self.assertEqual((e.exception.code, e.exception.request_id), ("engine_error", "r-1"))
        self.assertEqual(len(srv.seen), 3)

    def test_client_errors_are_not_retried(self):
        pj = {"content-type": "application/problem+json"}
        srv, url = self.serve([(401, pj, problem(401, "unauthorized"))])
        with self.assertRaises(UnauthorizedError):
            Client(url, api_key="k").get_study("s")
        self.assertEqual(len(srv.seen), 1)

    def test_creation_is_not_retried_after_a_server_error_but_is_after_429(self):
        pj = {"content-type": "application/problem+json"}
        srv, url = self.serve([(500, pj, problem(500, "internal_error"))])
        with self.assertRaises(ServerError):
            Client(url, backoff=0.001).create_study({"name": "x"})
        self.assertEqual(len(srv.seen), 1)
        srv, url = self.serve([(429, dict(pj, **{"retry-after": "0"}), problem(429, "rate_limited")), (201, {"content-type": "application/json"}, {"id": "s"})])
        self.assertEqual(Client(url).create_study({"name": "x"}), {"id": "s"})
        self.assertEqual(len(srv.seen), 2)
        self.assertTrue(issubclass(RateLimitedError, Exception))

    def test_connection_refused_is_retried_then_raised(self):
        url = f"http://127.0.0.1:{_free_port()}"
        t0 = time.monotonic()
        with self.assertRaises(ConnectionFailed) as e:
            Client(url, max_retries=3, backoff=0.01).healthz()
        self.assertIsNone(e.exception.status)
        self.assertFalse(e.exception.sent)
        self.assertLess(time.monotonic() - t0, 5)

    def test_retry_seconds_bounds_the_retrying_by_time(self):
        url = f"http://127.0.0.1:{_free_port()}"
        t0 = time.monotonic()
        with self.assertRaises(ConnectionFailed):
            Client(url, max_retries=10_000, backoff=0.05, max_backoff=0.2, retry_seconds=0.6).healthz()
        self.assertLess(time.monotonic() - t0, 0.6 + 0.5)
        # A Retry-After longer than what is left is not waited for: the 429 is raised at once.
        pj = {"content-type": "application/problem+json"}
        srv, url = self.serve([(429, dict(pj, **{"retry-after": "5"}), problem(429, "rate_limited"))])
        t0 = time.monotonic()
        with self.assertRaises(RateLimitedError):
            Client(url, retry_seconds=1).get_study("s")
        self.assertLess(time.monotonic() - t0, 1)
        self.assertEqual(len(srv.seen), 1)

    def test_non_finite_values_are_refused_before_sending(self):
        with self.assertRaises(ValueError):
            Client("http://127.0.0.1:1").observe_one("s", 1, float("inf"))


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=[sys.argv[0]] + sys.argv[1:])
