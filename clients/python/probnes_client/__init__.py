"""ProbNES Server client: the /v1 HTTP API with the Python standard library only.

    from probnes_client import Client
    c = Client("http://127.0.0.1:8080", api_key=None)
    study = c.create_study({"name": "demo", "parameters": [{"name": "x", "bounds": [-5, 5]}]})
    result = c.optimize(lambda p: (p["x"] - 1) ** 2, study["id"], budget=40, workers=4)

Errors are raised as ProbNESError subclasses built from the server's application/problem+json
(`status`, `code`, `detail`, `errors`, `request_id`). Transient failures (connection errors, 429
with its Retry-After, 5xx) are retried with exponential backoff, up to max_retries times and, with
retry_seconds, for at most that long. Retrying is safe for every route
but creation: a repeated suggestions GET returns the trials the client already holds, a repeated
identical observation is a no-op, and heartbeat/fail/abandon are idempotent. Study creation and
import are retried only when the server certainly did not act (connection refused, 429).
"""
from __future__ import annotations

import email.utils
import json
import math
import random
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

__all__ = [
    "Client", "ProbNESError", "ConnectionFailed", "BadRequestError", "UnauthorizedError", "ForbiddenError",
    "NotFoundError", "ConflictError", "PayloadTooLargeError", "RateLimitedError", "ServerError",
    "UnavailableError", "OptimizeResult", "Progress", "prior_from_points", "prior_from_study", "ParamValue", "TrialHandle",
    "observation",
]

Json = Dict[str, Any]
#: A parameter's value: a number, or one of a categorical parameter's choices (str, int, float or bool).
ParamValue = Union[float, int, str, bool]


def prior_from_points(points: List[Mapping[str, float]], weights: Optional[List[float]] = None) -> Json:
    """A study's `prior` fitted to points believed plausible (user units, keyed by parameter name)."""
    prior: Json = {"from_points": [dict(p) for p in points]}
    if weights is not None:
        prior["weights"] = list(weights)
    return prior


# The server's batch_size when a specification gives none, and its largest.
_SERVER_DEFAULT_BATCH = 3
_MAX_BATCH = 100


def _ranks_generation(method: Optional[str], methods: Sequence[Mapping[str, Any]]) -> bool:
    """Whether `method` (the server's default when None) ranks a generation and updates from its batch_size
    results only, by the server's list of methods (GET /v1/methods, `ranks_generation`): points handed out
    beyond the generation are lost to it. The others learn from every result."""
    name = method if method is not None else next((m["name"] for m in methods if m.get("default")), None)
    return any(m["name"] == name and m.get("ranks_generation") for m in methods)


class BatchSizeWarning(UserWarning):
    """optimize() runs more workers than the batch_size of a study that ranks its generations (see batch_warning)."""


def batch_for_workers(spec: Mapping[str, Any], workers: int, methods: Sequence[Mapping[str, Any]]) -> Json:
    """A study specification to create for `workers` workers, given the server's methods (Client.list_methods()).

    For a method that ranks a generation (`ranks_generation`) without a batch_size of its own:
    batch_size = workers (at most the server's 100) when that is more than the server's default 3, so
    every worker has a point of the generation instead of an extra whose result the update never uses.
    ProbNES (the default method) learns from every result and, with asynchronous workers, did better with
    the default batch_size than with batch_size = workers, so its specification is left as it is; so is
    a batch_size the caller chose. (The project's docs/parallel-workers.md has the figures.)
    """
    out = dict(spec)
    if "batch_size" not in out and workers > _SERVER_DEFAULT_BATCH and _ranks_generation(out.get("method"), methods):
        out["batch_size"] = min(workers, _MAX_BATCH)
    return out


def batch_warning(study: Mapping[str, Any], workers: int, methods: Sequence[Mapping[str, Any]]) -> Optional[str]:
    """The warning optimize() gives once when a study of a method that ranks a generation (by the server's `methods`)
    has a batch_size below workers."""
    batch, method = study["batch_size"], study.get("method")
    if batch >= workers or not _ranks_generation(method, methods):
        return None
    return (f"probnes-client: study {study['id']} ({method}) has batch_size {batch} but optimize() runs {workers} workers: "
            f"the workers beyond the generation get extras from the same search distribution, and {method} updates from "
            f"batch_size results only, so the extras' evaluations are wasted. Create the study with batch_size >= {workers} "
            f"(optimize() does when it creates the study), or run {batch} workers.")


def prior_from_study(study_id: str, top_fraction: float = 0.1, include_observations: bool = False, alpha: float = 0.1) -> Json:
    """A study's `prior` warm-started from an earlier study of the same tenant (WS-CMA-ES on its best top_fraction)."""
    return {"from_study": {"study_id": study_id, "top_fraction": top_fraction, "alpha": alpha,
                           "include_observations": include_observations}}


# ---- errors -------------------------------------------------------------------------------------

class ProbNESError(Exception):
    """An error answer (problem+json) or a failed connection (status None)."""

    def __init__(self, status: Optional[int], code: str, detail: str, problem: Optional[Json] = None,
                 retry_after: Optional[float] = None):
        super().__init__(f"{status or 'no response'} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.problem = problem or {}
        self.errors: List[Json] = list(self.problem.get("errors") or [])
        self.request_id: Optional[str] = self.problem.get("request_id")
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Worth retrying: no response, rate limited, or a server-side failure."""
        return self.status is None or self.status == 429 or self.status >= 500


class ConnectionFailed(ProbNESError):
    """No HTTP answer: refused, reset, timed out, DNS failure."""

    def __init__(self, detail: str, sent: bool):
        super().__init__(None, "connection_failed", detail)
        # False only when the request certainly never reached the server (connection refused).
        self.sent = sent


class BadRequestError(ProbNESError): pass  # 400: `errors` lists every issue
class UnauthorizedError(ProbNESError): pass  # 401: missing or invalid API key
class ForbiddenError(ProbNESError): pass  # 403
class NotFoundError(ProbNESError): pass  # 404: study_not_found, trial_not_found, route_not_found
class ConflictError(ProbNESError): pass  # 409: trial_already_completed, trial_not_active, lease_not_held
class PayloadTooLargeError(ProbNESError): pass  # 413
class RateLimitedError(ProbNESError): pass  # 429: honour retry_after
class ServerError(ProbNESError): pass  # 5xx
class UnavailableError(ServerError): pass  # 503: engine_error, concurrent_update, not_ready

_BY_STATUS = {400: BadRequestError, 401: UnauthorizedError, 403: ForbiddenError, 404: NotFoundError,
              409: ConflictError, 413: PayloadTooLargeError, 429: RateLimitedError, 503: UnavailableError}


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_from(status: int, body: bytes, headers: Mapping[str, str]) -> ProbNESError:
    try:
        problem = json.loads(body.decode("utf-8")) if body else {}
        if not isinstance(problem, dict):
            problem = {}
    except ValueError:
        problem = {}
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ProbNESError)
    code = problem.get("code") or ("internal_error" if status >= 500 else "http_error")
    detail = problem.get("detail") or body[:200].decode("utf-8", "replace") or f"HTTP {status}"
    return cls(status, code, detail, problem, _retry_after(headers.get("retry-after")))


# ---- the client ---------------------------------------------------------------------------------

class Client:
    """One server. Thread-safe: each call opens its own connection (urllib), so workers share it."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, timeout: float = 60.0,
                 max_retries: int = 5, backoff: float = 0.2, max_backoff: float = 10.0,
                 user_agent: str = "probnes-python-client/0.1", retry_seconds: Optional[float] = None):
        self.base_url = base_url.rstrip("/")
        # Bound on one call's retrying, in seconds from its first attempt (None: max_retries alone bounds it).
        # A retry whose wait (backoff or Retry-After) would end past it is not made: the error is raised.
        self.retry_seconds = retry_seconds
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.user_agent = user_agent

    # -- transport --

    def _once(self, method: str, path: str, query: Optional[Mapping[str, Any]], body: Any) -> tuple:
        url = self.base_url + path
        q = {k: v for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        headers = {"accept": "application/json", "user-agent": self.user_agent}
        data = None
        if body is not None:
            # allow_nan=False: the server accepts finite numbers only; fail here with a clear message.
            data = json.dumps(body, allow_nan=False).encode("utf-8")
            headers["content-type"] = "application/json"
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return res.status, res.read(), {k.lower(): v for k, v in res.headers.items()}
        except urllib.error.HTTPError as e:
            raw = e.read()
            raise _error_from(e.code, raw, {k.lower(): v for k, v in e.headers.items()}) from None
        except urllib.error.URLError as e:
            refused = isinstance(e.reason, ConnectionRefusedError)
            raise ConnectionFailed(f"{method} {url}: {e.reason}", sent=not refused) from None
        except (ConnectionError, TimeoutError, OSError) as e:
            raise ConnectionFailed(f"{method} {url}: {e}", sent=not isinstance(e, ConnectionRefusedError)) from None

    def _delay(self, attempt: int, err: ProbNESError) -> float:
        if err.retry_after is not None:
            return min(err.retry_after, 60.0)
        # Full jitter keeps many workers from retrying in lockstep.
        return random.uniform(0, min(self.max_backoff, self.backoff * 2 ** attempt))

    def request(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None, body: Any = None,
                idempotent: bool = True, raw: bool = False) -> Any:
        """One API call with retries; returns parsed JSON (None for 204), or text with raw=True."""
        attempt = 0
        started = time.monotonic()
        while True:
            try:
                status, data, headers = self._once(method, path, query, body)
                if raw:
                    return data.decode("utf-8")
                return json.loads(data.decode("utf-8")) if status != 204 and data else None
            except ProbNESError as err:
                certainly_not_acted = err.status == 429 or (isinstance(err, ConnectionFailed) and not err.sent)
                retryable = err.transient and (idempotent or certainly_not_acted)
                if not retryable or attempt >= self.max_retries:
                    raise
                delay = self._delay(attempt, err)
                if self.retry_seconds is not None and time.monotonic() - started + delay > self.retry_seconds:
                    raise
                time.sleep(delay)
                attempt += 1

    # -- studies --

    def create_study(self, spec: Json) -> Json:
        return self.request("POST", "/v1/studies", body=spec, idempotent=False)

    def list_studies(self, page_size: Optional[int] = None, page_token: Optional[str] = None) -> Json:
        return self.request("GET", "/v1/studies", {"page_size": page_size, "page_token": page_token})

    def iter_studies(self, page_size: int = 100) -> Iterator[Json]:
        token = None
        while True:
            page = self.list_studies(page_size, token)
            yield from page["studies"]
            token = page.get("next_page_token")
            if not token:
                return

    def get_study(self, study_id: str) -> Json:
        return self.request("GET", f"/v1/studies/{_q(study_id)}")

    def update_study(self, study_id: str, **fields: Any) -> Json:
        """name=, metadata=, state= ('ACTIVE' | 'PAUSED' | 'COMPLETED')."""
        return self.request("PATCH", f"/v1/studies/{_q(study_id)}", body=fields)

    def delete_study(self, study_id: str) -> None:
        self.request("DELETE", f"/v1/studies/{_q(study_id)}")

    # -- the loop --

    def suggest(self, study_id: str, count: int = 1, client_id: Optional[str] = None) -> Json:
        """{'trials': [...], 'reason': None | 'study_completed' | 'study_paused' | 'max_trials_reached' | 'converged', ...,
        'budget': None | {'max_trials', 'completed', 'leased', 'requested', 'leases': [{'trial_id', 'client_id',
        'lease_expires_at'}, ...]}}: with max_trials_reached, `budget` names the leases that hold the rest of
        max_trials (docs/limits.md)."""
        return self.request("GET", f"/v1/studies/{_q(study_id)}/suggestions", {"count": count, "client_id": client_id})

    def observe(self, study_id: str, observations: List[Json]) -> Json:
        """Atomic batch: [{'trial_id': 12, 'value': 0.7}, {'parameters': {...}, 'value': 0.9}]."""
        return self.request("POST", f"/v1/studies/{_q(study_id)}/observations", body={"observations": observations})

    def observe_one(self, study_id: str, trial_id: int, value: Optional[float] = None, stderr: Optional[float] = None,
                    stopped: bool = False, *, values: Optional[Sequence[float]] = None,
                    constraints: Optional[Sequence[float]] = None, infeasible: bool = False) -> Json:
        """One result: `value` (one objective), or `values` (one per objective, in the study's order), with
        `constraints` (one per declared constraint; feasible when every one is <= 0) when the study declares
        them; or infeasible=True: the point could not be evaluated (no value). stopped=True: the evaluation
        was stopped early and `value` is its last intermediate value. The server checks the counts and
        answers a 400 naming the field (BadRequestError)."""
        return self.observe(study_id, [observation(trial_id, value, values=values, constraints=constraints,
                                                   infeasible=infeasible, stderr=stderr, stopped=stopped)])

    # -- early stopping --

    def report(self, study_id: str, trial_id: int, step: int, value: float) -> Json:
        """A running trial's value at `step`: {'should_stop': bool, 'reason': ..., 'detail': ..., 'median': ...}.

        One value per step: repeating a report is answered again; another value for the step is a ConflictError.
        """
        return self.request("POST", f"/v1/studies/{_q(study_id)}/trials/{int(trial_id)}/intermediate", body={"step": int(step), "value": value})

    def list_intermediate_values(self, study_id: str, page_size: Optional[int] = None, page_token: Optional[str] = None) -> Json:
        """One page of the curves: at most `page_size` values (server default 1000, at most 10000) in
        (trial id, step) order; a curve longer than the rest of the page continues on the next page,
        which then starts with the same trial_id. {'trials': [...], 'next_page_token': str | None}"""
        return self.request("GET", f"/v1/studies/{_q(study_id)}/intermediate_values", _opt(page_size=page_size, page_token=page_token))

    def intermediate_values(self, study_id: str, page_size: int = 10000) -> Json:
        """Every curve: {'trials': [{'trial_id': n, 'intermediate_values': [{'step': s, 'value': v}, ...]}, ...],
        'next_page_token': None}. The server answers in pages (each O(page) for it); they are followed
        here, and a curve split across two pages is joined again."""
        trials: List[Json] = []
        token: Optional[str] = None
        while True:
            page = self.list_intermediate_values(study_id, page_size, token)
            for curve in page["trials"]:
                if trials and trials[-1]["trial_id"] == curve["trial_id"]:
                    trials[-1]["intermediate_values"].extend(curve["intermediate_values"])
                else:
                    trials.append(curve)
            token = page.get("next_page_token")
            if not token:
                return {"trials": trials, "next_page_token": None}

    def trial_handle(self, study_id: str, trial: Union[int, Mapping[str, Any]], client_id: Optional[str] = None) -> "TrialHandle":
        """A handle on one trial (a trial resource, or its id) for a worker: report(), complete(), stop(), fail()."""
        return TrialHandle(self, study_id, trial, client_id)

    # -- trials --

    def list_trials(self, study_id: str, state: Optional[str] = None, page_size: Optional[int] = None,
                    page_token: Optional[str] = None) -> Json:
        return self.request("GET", f"/v1/studies/{_q(study_id)}/trials",
                            {"state": state, "page_size": page_size, "page_token": page_token})

    def iter_trials(self, study_id: str, state: Optional[str] = None, page_size: int = 500) -> Iterator[Json]:
        token = None
        while True:
            page = self.list_trials(study_id, state, page_size, token)
            yield from page["trials"]
            token = page.get("next_page_token")
            if not token:
                return

    def get_trial(self, study_id: str, trial_id: int) -> Json:
        return self.request("GET", f"/v1/studies/{_q(study_id)}/trials/{int(trial_id)}")

    def heartbeat(self, study_id: str, trial_id: int, client_id: Optional[str] = None) -> Json:
        return self.request("POST", f"/v1/studies/{_q(study_id)}/trials/{int(trial_id)}/heartbeat", body=_opt(client_id=client_id))

    def fail_trial(self, study_id: str, trial_id: int, reason: str, client_id: Optional[str] = None) -> Json:
        return self.request("POST", f"/v1/studies/{_q(study_id)}/trials/{int(trial_id)}/fail", body=_opt(reason=reason, client_id=client_id))

    def abandon_trial(self, study_id: str, trial_id: int, client_id: Optional[str] = None) -> Json:
        return self.request("POST", f"/v1/studies/{_q(study_id)}/trials/{int(trial_id)}/abandon", body=_opt(client_id=client_id))

    # -- results --

    def best(self, study_id: str) -> Json:
        """The best feasible trial (`observed`); for several objectives there is none (`observed` is None) and
        `front` gives the front's size and hypervolume ({"size", "hypervolume"}; front() has its trials)."""
        return self.request("GET", f"/v1/studies/{_q(study_id)}/best")

    # -- several objectives: the front --

    def front_page(self, study_id: str, page_size: Optional[int] = None, page_token: Optional[str] = None) -> Json:
        """One page of the Pareto front of the feasible COMPLETED trials, ordered by the first objective's loss,
        with the reference point ({"value", "derived"}), the front's hypervolume against it, evaluation_count
        and feasible_count. For one objective the front is the best trial."""
        return self.request("GET", f"/v1/studies/{_q(study_id)}/front", _opt(page_size=page_size, page_token=page_token))

    def iter_front(self, study_id: str, page_size: int = 500) -> Iterator[Json]:
        """The front's trials, following every page."""
        for page in _pages(lambda token: self.front_page(study_id, page_size, token)):
            yield from page["trials"]

    def front(self, study_id: str, page_size: int = 500) -> Json:
        """The whole front: the first page's answer with the trials of every page (next_page_token None).
        Which trials are on it is the server's decision, from their losses: the client never compares values."""
        return _merged(lambda token: self.front_page(study_id, page_size, token), "trials")

    def front_history_page(self, study_id: str, page_size: Optional[int] = None, page_token: Optional[str] = None) -> Json:
        """One page of the front's history: after each COMPLETED trial in completion order, the hypervolume of the
        front so far against one reference point, and the front's size:
        {"reference_point": {...}, "points": [{"index", "trial_id", "hypervolume", "front_size"}], "next_page_token"}
        (index: results so far, from 1)."""
        return self.request("GET", f"/v1/studies/{_q(study_id)}/front/history", _opt(page_size=page_size, page_token=page_token))

    def iter_front_history(self, study_id: str, page_size: int = 1000) -> Iterator[Json]:
        """The history's points, following every page."""
        for page in _pages(lambda token: self.front_history_page(study_id, page_size, token)):
            yield from page["points"]

    def front_history(self, study_id: str, page_size: int = 1000) -> Json:
        """The whole history of the front: the first page's answer with the points of every page."""
        return _merged(lambda token: self.front_history_page(study_id, page_size, token), "points")

    def history(self, study_id: str, stride: Optional[int] = None) -> Json:
        """The whole history: the server answers it in pages, followed and merged here; `stride`
        downsamples the evaluations, keeping every best-so-far step."""
        return _merged(lambda token: self.request("GET", f"/v1/studies/{_q(study_id)}/history", query=_opt(page_size=10000, stride=stride, page_token=token)),
                       "evaluations", "generations")

    def distribution(self, study_id: str) -> Json:
        return self.request("GET", f"/v1/studies/{_q(study_id)}/distribution")

    def export_study(self, study_id: str) -> Json:
        return self.request("GET", f"/v1/studies/{_q(study_id)}/export")

    def import_study(self, document: Json) -> Json:
        return self.request("POST", "/v1/studies/import", body=document, idempotent=False)

    # -- operations --

    def list_methods(self) -> Json:
        """The methods the server runs and what a client needs to know about each (whether it ranks a generation,
        keeps a search distribution, fits a model; its smallest batch_size), the default first: {"methods": [...]}."""
        return self.request("GET", "/v1/methods")

    def healthz(self) -> Json:
        return self.request("GET", "/healthz")

    def readyz(self) -> Json:
        return self.request("GET", "/readyz")

    def metrics(self) -> str:
        return self.request("GET", "/metrics", raw=True)

    # -- parallel optimisation --

    def _methods_or_none(self) -> List[Json]:
        """The server's methods; none from a server older than GET /v1/methods."""
        try:
            return list(self.list_methods()["methods"])
        except NotFoundError:
            return []

    def optimize(self, objective: Callable[[Dict[str, ParamValue]], Any], study: Union[str, Mapping[str, Any]], budget: int,
                 workers: int = 4, client_prefix: str = "worker", heartbeat_seconds: Optional[float] = None,
                 progress: Any = None) -> "OptimizeResult":
        """Evaluate up to `budget` points with `workers` threads, each with its own client id.

        `study` is a study id, or a specification to create first: for a method that ranks a generation
        (`ranks_generation` in GET /v1/methods) without a batch_size it gets batch_size = workers when that
        is above the default (batch_for_workers). A study of such a method whose batch_size is below
        `workers` gets one BatchSizeWarning (warnings.warn) naming both.

        The objective returns a number (one objective), a list or tuple of numbers (several objectives, in the
        study's order), or a dict of the observation's fields: {"values": [...], "constraints": [...]} or
        {"infeasible": True} for a point that cannot be evaluated. For several objectives Progress.best stays
        None (there is no single best: the result's `best` gives the front's size and hypervolume, front() its trials).

        Each worker: suggest (one point) → objective(parameters) → observe. An objective that raises,
        or returns a non-finite value, marks the trial FAILED with the reason (it still uses budget,
        so an always-failing objective ends). With `heartbeat_seconds`, a long evaluation keeps its
        lease alive. `progress`: a callable taking a Progress, or True to print a line per result.
        Stops early when the server hands out no more points (study completed, paused, max_trials).
        """
        if budget < 0 or workers < 1:
            raise ValueError("budget must be >= 0 and workers >= 1")
        # The server's methods are asked for only when the batch_size could change or be warned about.
        methods: Optional[List[Json]] = None
        if isinstance(study, str):
            found = self.get_study(study)
        else:
            if "batch_size" not in study and workers > _SERVER_DEFAULT_BATCH:
                methods = self._methods_or_none()
            found = self.create_study(batch_for_workers(study, workers, methods or []))
        if found["batch_size"] < workers and methods is None:
            methods = self._methods_or_none()
        message = batch_warning(found, workers, methods or [])
        if message:
            warnings.warn(message, BatchSizeWarning, stacklevel=2)
        return _Optimizer(self, objective, found, budget, workers, client_prefix, heartbeat_seconds, progress).run()


class TrialHandle:
    """One trial as its worker uses it: report intermediate values, then complete, stop or fail it.

        for trial in client.suggest(sid, 1, "w1")["trials"]:
            t = client.trial_handle(sid, trial, "w1")
            for epoch in range(50):
                loss = train_one_epoch(t.parameters)
                if t.report(epoch, loss):      # True: the study's stopping rule says stop
                    t.stop(loss)
                    break
            else:
                t.complete(loss)
    """

    def __init__(self, client: "Client", study_id: str, trial: Union[int, Mapping[str, Any]], client_id: Optional[str] = None):
        self.client, self.study_id, self.client_id = client, study_id, client_id
        self.trial_id = int(trial if isinstance(trial, int) else trial["trial_id"])
        self.parameters: Dict[str, ParamValue] = {} if isinstance(trial, int) else dict(trial["parameters"])
        self.last: Optional[Json] = None  # the last report's answer

    def report(self, step: int, value: float) -> bool:
        """Report `value` at `step`; True when the trial should stop (the answer is in .last)."""
        self.last = self.client.report(self.study_id, self.trial_id, step, value)
        return bool(self.last["should_stop"])

    def complete(self, value: Optional[float] = None, stderr: Optional[float] = None, *,
                 values: Optional[Sequence[float]] = None, constraints: Optional[Sequence[float]] = None) -> Json:
        """The result: `value` (one objective) or `values` (several), with `constraints` when the study declares them."""
        return self.client.observe_one(self.study_id, self.trial_id, value, stderr, values=values, constraints=constraints)

    def infeasible(self) -> Json:
        """The point cannot be evaluated (diverged, out of memory): COMPLETED with no value; the methods move away from it."""
        return self.client.observe_one(self.study_id, self.trial_id, infeasible=True)

    def stop(self, value: float) -> Json:
        """Report the trial stopped early with its last value (COMPLETED, counted as an observation of it)."""
        return self.client.observe_one(self.study_id, self.trial_id, value, stopped=True)

    def fail(self, reason: str) -> Json:
        return self.client.fail_trial(self.study_id, self.trial_id, reason, self.client_id)


def observation(trial_id: Optional[int] = None, value: Optional[float] = None, *, values: Optional[Sequence[float]] = None,
                constraints: Optional[Sequence[float]] = None, infeasible: bool = False, stderr: Optional[float] = None,
                stopped: bool = False, parameters: Optional[Mapping[str, ParamValue]] = None) -> Json:
    """One entry of observe()'s batch: for a handed-out trial (trial_id) or a point evaluated elsewhere
    (parameters), with `value` (one objective) or `values` (several, in the study's order), `constraints`
    when the study declares them, or infeasible=True (no value: the point could not be evaluated).
    Only the fields given are sent; the server checks their counts against the study."""
    if (trial_id is None) == (parameters is None):
        raise ValueError("give trial_id or parameters")
    obs: Json = {"trial_id": trial_id} if trial_id is not None else {"parameters": dict(parameters or {})}
    if value is not None:
        obs["value"] = value
    if values is not None:
        obs["values"] = [float(v) for v in values]
    if constraints is not None:
        obs["constraints"] = [float(c) for c in constraints]
    if infeasible:
        obs["infeasible"] = True
    if stderr is not None:
        obs["stderr"] = stderr
    if stopped:
        obs["stopped"] = True
    return obs


def _q(s: str) -> str:
    return urllib.parse.quote(str(s), safe="")


def _opt(**kw: Any) -> Json:
    return {k: v for k, v in kw.items() if v is not None}


def _pages(fetch: Callable[[Optional[str]], Json]) -> Iterator[Json]:
    """Every page of a listing: fetch(None), then fetch(next_page_token) until it is null."""
    token: Optional[str] = None
    while True:
        page = fetch(token)
        yield page
        token = page.get("next_page_token")
        if not token:
            return


def _merged(fetch: Callable[[Optional[str]], Json], *keys: str) -> Json:
    """The first page with the lists `keys` of every page appended (next_page_token None)."""
    merged: Optional[Json] = None
    for page in _pages(fetch):
        if merged is None:
            merged = page
        else:
            for k in keys:
                merged[k].extend(page[k])
    assert merged is not None
    merged["next_page_token"] = None
    return merged


# ---- optimize() ---------------------------------------------------------------------------------

@dataclass
class Progress:
    done: int  # results reported (completed + failed) so far in this run
    budget: int
    client_id: str
    trial_id: int
    value: Optional[float]  # None when the evaluation failed, was infeasible, or has several objectives
    best: Optional[float]  # best feasible value reported in this run so far (by the server's loss: lower is better)
    elapsed: float
    values: Optional[List[float]] = None  # the objectives' values (several objectives; [value] for one)
    infeasible: bool = False  # the objective reported the point infeasible (no value)


@dataclass
class OptimizeResult:
    study_id: str
    completed: int
    failed: int
    stopped_reason: Optional[str]  # None: budget used; else the server's reason
    best: Json  # GET /best at the end
    elapsed: float
    by_client: Dict[str, int] = field(default_factory=dict)


class _Optimizer:
    def __init__(self, client: Client, objective, study: Json, budget, workers, prefix, heartbeat_seconds, progress):
        self.c, self.objective, self.study_id = client, objective, study["id"]
        self.budget, self.workers, self.prefix = budget, workers, prefix
        self.heartbeat_seconds = heartbeat_seconds
        self.progress = _printer if progress is True else progress
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reserved = self.completed = self.failed = 0
        self.by_client: Dict[str, int] = {}
        self.stopped_reason: Optional[str] = None
        self.best: Optional[float] = None
        self.best_loss: Optional[float] = None  # the server orients it: lower is better, whatever the direction
        self.inflight = 0  # workers asking for or evaluating a point right now
        self.t0 = time.monotonic()

    def run(self) -> OptimizeResult:
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=self.prefix) as pool:
            futures = [pool.submit(self._worker, f"{self.prefix}-{i}") for i in range(self.workers)]
            errors = [f.exception() for f in futures]
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return OptimizeResult(self.study_id, self.completed, self.failed, self.stopped_reason, self.c.best(self.study_id),
                              time.monotonic() - self.t0, dict(self.by_client))

    def _reserve(self) -> bool:
        with self.lock:
            if self.stop.is_set() or self.reserved >= self.budget:
                return False
            self.reserved += 1
            return True

    def _release(self) -> None:
        with self.lock:
            self.reserved -= 1

    def _worker(self, client_id: str) -> None:
        try:
            while self._reserve():
                with self.lock:
                    results_before = self.completed + self.failed
                    # Busy from the ask on: the server counts a point against max_trials from the moment
                    # it hands it out, before this thread has it.
                    self.inflight += 1
                try:
                    got = self.c.suggest(self.study_id, 1, client_id)
                    if got["trials"]:
                        self._evaluate(client_id, got["trials"][0])
                        continue
                finally:
                    with self.lock:
                        self.inflight -= 1
                self._release()
                reason = got.get("reason") or "no_trials"
                with self.lock:
                    # Another worker is asking or evaluating, or a point failed while we asked (its
                    # slot was freed after the server counted it): its outcome may free a slot.
                    others_busy = self.inflight > 0 or self.completed + self.failed != results_before
                if reason == "max_trials_reached" and others_busy and not self.stop.is_set():
                    time.sleep(0.05)
                    continue
                with self.lock:
                    self.stopped_reason = self.stopped_reason or reason
                self.stop.set()
                return
        except BaseException:
            self.stop.set()  # a permanent error: the other workers finish their current point and stop
            raise

    def _evaluate(self, client_id: str, trial: Json) -> None:
        tid = trial["trial_id"]
        beat = _Heartbeat(self.c, self.study_id, tid, client_id, self.heartbeat_seconds)
        result: Optional[Json] = None
        reason: Optional[str] = None
        try:
            result, reason = _result_fields(self.objective(dict(trial["parameters"])))
        except Exception as e:  # the objective's failure is the trial's, not the run's
            reason = f"{type(e).__name__}: {e}"[:2000]
        finally:
            beat.cancel()
        value: Optional[float] = None
        values: Optional[List[float]] = None
        if result is None:
            self.c.fail_trial(self.study_id, tid, reason or "failed", client_id)
            state, loss = None, None
        else:
            answer = self.c.observe(self.study_id, [dict(result, trial_id=tid)])
            told = answer["trials"][0]
            state, loss = answer.get("study_state"), told.get("loss")
            value, values = result.get("value"), told.get("values") or result.get("values")
            if told.get("feasible") is False:
                loss = None  # the best counts feasible trials only (the server's word, from the constraints)
        with self.lock:
            if result is None:
                self.failed += 1
            else:
                self.completed += 1
                # loss is None for several objectives (no single best: the server's front) and infeasible points.
                if loss is not None and (self.best_loss is None or loss < self.best_loss):
                    self.best, self.best_loss = value, loss
            self.by_client[client_id] = self.by_client.get(client_id, 0) + 1
            event = Progress(self.completed + self.failed, self.budget, client_id, tid, value, self.best, time.monotonic() - self.t0,
                             values, bool(result and result.get("infeasible")))
            if state == "COMPLETED":
                self.stopped_reason = self.stopped_reason or "study_completed"
                self.stop.set()
        if self.progress:
            self.progress(event)


def _finite_number(v: Any) -> bool:
    """A finite number (numpy's scalars included; not a bool, not a string)."""
    if isinstance(v, (bool, str, bytes)):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _result_fields(result: Any) -> "tuple[Optional[Json], Optional[str]]":
    """An objective's return value as an observation's fields, or None and why it cannot be one.

    A number is `value`; a list or tuple of numbers is `values` (several objectives, in the study's order); a
    mapping passes its `value`, `values`, `constraints`, `infeasible` and `stderr` on as they are (the server
    checks them against the study). A non-finite number fails the trial, as a crash does."""
    if isinstance(result, Mapping):
        fields = {k: result[k] for k in ("value", "values", "constraints", "infeasible", "stderr") if k in result and result[k] is not None}
        unknown = sorted(set(result) - {"value", "values", "constraints", "infeasible", "stderr"})
        if unknown:
            return None, f"objective returned unknown fields {unknown}"
        if fields.get("infeasible") is True:
            return {"infeasible": True}, None
        fields.pop("infeasible", None)
    elif isinstance(result, (list, tuple)):
        fields = {"values": list(result)}
    else:
        try:
            fields = {"value": float(result)}
        except (TypeError, ValueError):
            return None, f"objective returned {type(result).__name__}"
    for key in ("value", "stderr"):
        if key in fields:
            if not _finite_number(fields[key]):
                return None, f"objective returned {fields[key]}" if key == "value" else f"objective returned stderr {fields[key]}"
            fields[key] = float(fields[key])
    for key in ("values", "constraints"):
        if key in fields:
            seq = fields[key]
            if not isinstance(seq, (list, tuple)) or not all(_finite_number(v) for v in seq):
                return None, f"objective returned {key} {seq}"
            fields[key] = [float(v) for v in seq]
    return fields, None


class _Heartbeat:
    """Extends a trial's lease every `seconds` while its evaluation runs (best effort)."""

    def __init__(self, client: Client, study_id: str, trial_id: int, client_id: str, seconds: Optional[float]):
        self.done = threading.Event()
        if seconds:
            self.thread = threading.Thread(target=self._run, args=(client, study_id, trial_id, client_id, seconds), daemon=True)
            self.thread.start()

    def _run(self, client, study_id, trial_id, client_id, seconds):
        while not self.done.wait(seconds):
            try:
                client.heartbeat(study_id, trial_id, client_id)
            except ProbNESError:
                pass  # the result is still accepted after the lease expires; a lost beat is not fatal

    def cancel(self) -> None:
        self.done.set()


_print_lock = threading.Lock()


def _printer(p: Progress) -> None:
    if p.value is not None:
        v = f"{p.value:.6g}"
    elif p.values is not None:
        v = "(" + ", ".join(f"{x:.6g}" for x in p.values) + ")"
    elif p.infeasible:
        v = "infeasible"
    else:
        v = "FAILED"
    b = "–" if p.best is None else f"{p.best:.6g}"
    line = f"[{p.done}/{p.budget}] {p.client_id} trial {p.trial_id}: {v}  best {b}  ({p.elapsed:.1f}s)\n"
    # One write of the whole line, under a lock: print() writes the text and the newline separately,
    # so workers finishing together interleaved them ("… (0.7s)[58/60] …" on one line).
    with _print_lock:
        sys.stderr.write(line)
        sys.stderr.flush()
