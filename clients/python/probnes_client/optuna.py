"""An Optuna sampler whose search space is searched by a ProbNES Server study.

    import optuna
    from probnes_client.optuna import ProbnesSampler

    study = optuna.create_study(sampler=ProbnesSampler("http://127.0.0.1:8080", method="prob-cmaes"))
    study.optimize(objective, n_trials=60, n_jobs=4)

Everything else is Optuna's: `study.optimize` (threads with n_jobs), the pruners, the storage (in
memory or RDB), enqueued trials. How the two meet (the project's docs/optuna.md has the details):

- One server study per Optuna study, created once and never replaced or extended (a second study would
  lose what the first learnt and leave its trials behind), so its space has to be known when it is made.
  The first trials are sampled independently (startup) until at least `startup_trials` (default 1) have
  finished (COMPLETE or PRUNED) and every choice of every categorical parameter the ended trials used
  (COMPLETE, PRUNED or FAIL; nested ones too, a child categorical being seen once its branch is taken)
  has been taken by one of them, or `max_startup_trials` (default 20) trials have ended, when the study
  is made with what was seen and an UntakenChoicesWarning names the choices never taken. While a choice
  is untaken, a startup trial's categorical parameters take untaken choices first (else, when an untaken
  choice remains under some branch, a choice that led to it, the least taken); its numbers come from the
  independent sampler. Its parameters are every searchable distribution those trials used (the union,
  so a parameter only some of them had is in it; a name seen with two different distributions is left
  out): FloatDistribution and IntDistribution (log or linear, with or without a step), and
  CategoricalDistribution when the server's method takes categorical parameters. Its id and space are
  kept in the Optuna study's system attributes (`probnes:study`), so processes sharing an Optuna
  storage share it too.
- Define-by-run branches become conditional parameters (the project's docs/conditional.md): a
  parameter X that only some of those trials used is made conditional on a categorical parameter P
  when every trial with X had P and the values of P in the trials with X are none of those in the
  trials with P but without X (P the parameter used by the fewest trials among those that qualify,
  the nearest parent); X is then active for exactly the values of P seen with it. The server hands
  out the active parameters only. A branch that hinges on a number (not on a categorical choice) is
  not discovered: a parameter only it uses stays outside the space.
- Each trial's relative search space is that fixed space. A parameter outside it (first seen after the
  server study was made, or a single value) is drawn by the independent sampler (RandomSampler by
  default) for the rest of the Optuna study, with one ParameterOutsideSpaceWarning per name saying how
  to have it searched. A parameter of the space that the trial never asks for (a
  define-by-run branch not taken) simply leaves the server's value for it unused; the result is
  reported for the server trial the point came from, whose parameters the server keeps.
- `sample_relative` asks the server for one point, leased to a client id of its own per Optuna trial
  (so n_jobs threads never share a lease), and records the server's trial id on the Optuna trial.
- Several objectives (optuna.create_study(directions=[...])) become the server study's `objectives`
  (named by Optuna's metric_names when set, else value_0, value_1, ...), and `constraints_func` (Optuna's
  samplers' convention: a function of the FrozenTrial returning floats, feasible when <= 0) its
  `constraints`. The number of constraints is read off the first finished trial's values, which Optuna has
  the sampler compute (after_trial) before it marks the trial finished: the server study is created only
  once it is known, never in the wrong shape.
- The trials sampled before the server study exists, and any later one the server did not hand out, are
  told to it by their parameters when they have every parameter of its space, so the server's front and
  best hold every result.
- `after_trial` reports the outcome: COMPLETE as an observation of its value (`values` for several
  objectives, with `constraints`); PRUNED as an observation of its last intermediate value with "stopped": true; FAIL as a failed trial whose
  reason is the exception's type and message. A trial whose values are not the ones the server
  handed out (enqueued or fixed values) is reported by its parameters instead, as an external
  observation, and the handed-out trial is abandoned.
- An unreachable or failing server (connection errors, timeouts, 5xx, 429) is retried for up to
  `retry_seconds`; then `on_server_error="fail"` fails the Optuna trial (ServerUnavailable, raised at
  its first suggest call, so Optuna records the trial FAIL and no trial stays RUNNING) and
  `"fallback"` samples the trial with the independent sampler and resumes the server when it answers.
  Reports that could not be delivered are kept and sent when the server answers again.
"""
from __future__ import annotations

import json
import random
import re
import sys
import threading
import time
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from . import Client, ConflictError, NotFoundError, ProbNESError

__all__ = ["ProbnesSampler", "ProbnesPruner", "ServerUnavailable", "ServerFallbackWarning", "ParameterOutsideSpaceWarning",
           "UntakenChoicesWarning"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
# Names the server refuses although _NAME matches them (every JavaScript object has them; docs/security.md).
_RESERVED = frozenset(["__proto__", "prototype", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                       "toLocaleString", "toString", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
                       "__lookupSetter__"])
_TRIAL_ATTR = "probnes:trial"  # {"study": server study id, "trial_id": n, "client_id": ..., "parameters": {...}, "names": {...}}
_STUDY_ATTR = "probnes:study"  # {"id", "space": {name: distribution json}, "names": {server: optuna}, "objectives": M, "constraints": K}
_DEFAULT_METHOD = "prob-cmaes"
_ENDED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)  # trials whose parameters are all known
_CONSTRAINTS_KEY = "constraints"  # where Optuna's samplers keep constraints_func's values (optuna.samplers._base)
# The server keeps a failure reason of up to 2,000 characters; 500 keep the exception readable in lists.
FAILURE_REASON_CHARS = 500
_SURROGATE = re.compile("[\ud800-\udfff]")


class ServerUnavailable(ProbNESError):
    """The server did not answer within retry_seconds (on_server_error="fail"): the Optuna trial fails with it."""

    def __init__(self, detail: str, cause: Optional[ProbNESError] = None):
        super().__init__(getattr(cause, "status", None), "server_unavailable", detail)

    def __str__(self) -> str:
        return self.detail


class ServerFallbackWarning(UserWarning):
    """The server did not answer: trials are sampled by the independent sampler until it does (on_server_error="fallback")."""


class ParameterOutsideSpaceWarning(UserWarning):
    """A parameter is not in the server study's space and is sampled by the independent sampler (once per name)."""


class UntakenChoicesWarning(UserWarning):
    """The server study was made after max_startup_trials although some categorical choices were never taken:
    parameters only their branches use are outside its space."""


def _choice_ok(v: Any) -> bool:
    return isinstance(v, (str, bool, int, float)) and not (isinstance(v, float) and v != v)


def failure_reason(trial_number: int, error: Optional[BaseException] = None, message: Optional[str] = None) -> str:
    """The server trial's failure reason: the exception's type and message, at most FAILURE_REASON_CHARS
    characters, never empty, without lone surrogates (the server refuses them)."""
    if error is not None:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    elif message:
        text = message
    else:
        text = f"Optuna trial {trial_number} ended FAIL"
    text = _SURROGATE.sub("\ufffd", text).strip() or f"Optuna trial {trial_number} ended FAIL"
    return text if len(text) <= FAILURE_REASON_CHARS else text[:FAILURE_REASON_CHARS - 1] + "…"


def _optuna_failure(trial: FrozenTrial) -> Tuple[Optional[BaseException], Optional[str]]:
    """Why Optuna failed a trial, as far as after_trial can see it.

    Optuna 2 kept the text in system_attrs["fail_reason"]; Optuna 3 passes neither the exception nor
    the text to after_trial, which study.optimize calls (through _tell_with_warning) while its
    _run_trial still holds the exception in its local `func_err`, and a non-numeric return value in
    _tell_with_warning's `values_conversion_failure_message`. Those frames are read here; with
    study.tell() called directly there is nothing to read, and the reason says only that it failed."""
    stored = trial.system_attrs.get("fail_reason")
    if isinstance(stored, str) and stored:
        return None, stored
    frame = sys._getframe(1)
    for _ in range(12):
        if frame is None:
            break
        local = frame.f_locals
        if frame.f_code.co_name == "_tell_with_warning":
            m = local.get("values_conversion_failure_message")
            if isinstance(m, str) and m:
                return None, m
        if frame.f_code.co_name == "_run_trial":
            err = local.get("func_err")
            if isinstance(err, BaseException):
                return err, None
            break
        frame = frame.f_back
    return None, None


class ProbnesSampler(BaseSampler):
    """Optuna sampler backed by a ProbNES Server study (see the module's docstring and docs/optuna.md).

    url, api_key: the server. method: the server study's; None: prob-cmaes, or for several objectives or
    constraints the first of the server's methods that handles them. batch_size, options, seed: the server
    study's (its defaults when None). constraints_func: Optuna's (feasible when every value is <= 0), kept in
    the trial's "constraints" system attribute and reported. reference_point: the server study's, for
    several objectives (in their units and directions). priors: per-parameter priors by Optuna parameter name, as the server takes them ({"mean",
    "std"} in the parameter's scale, ln for log ones; {"probabilities"} for a categorical one).
    stopping: the server study's stopping rule ({"rule": "median", "min_steps": …, "warmup_trials": …};
    docs/early-stopping.md), used by ProbnesPruner; None: no rule. lease_seconds: how long a handed-out
    point waits for its result (default one day: Optuna does not heartbeat). allow_repeats: let the
    server hand out a configuration again (noisy objectives). independent_sampler: for the parameters
    outside the server study's space (default RandomSampler(seed)). startup_trials: the fewest finished
    trials (COMPLETE or PRUNED) before the server study is created; their parameters make its space.
    max_startup_trials: the most ended trials before it is created although some categorical choice was
    never taken (startup goes on until every choice has been taken; module docstring); startup_trials when larger.
    on_server_error: "fail" or "fallback" (module docstring). retry_seconds: how long one call is retried.
    timeout: seconds one HTTP request may take. recheck_seconds: in fallback, how often the server is
    tried again. study_name: prefix of the server study's name. client: a Client to use instead of
    url/api_key (its own retry settings then apply). copy_intermediate: copy a trial's intermediate
    values to the server after it ends (one request per value).
    """

    def __init__(self, url: Optional[str] = None, method: Optional[str] = None, *, api_key: Optional[str] = None,
                 batch_size: Optional[int] = None, options: Optional[Mapping[str, Any]] = None, seed: Optional[int] = None,
                 priors: Optional[Mapping[str, Mapping[str, Any]]] = None, lease_seconds: int = 86400,
                 allow_repeats: bool = False, independent_sampler: Optional[BaseSampler] = None,
                 study_name: str = "optuna", client: Optional[Client] = None, copy_intermediate: bool = True,
                 stopping: Optional[Mapping[str, Any]] = None, startup_trials: int = 1, max_startup_trials: int = 20,
                 on_server_error: str = "fail", retry_seconds: float = 30.0, timeout: float = 10.0,
                 recheck_seconds: float = 30.0,
                 constraints_func: Optional[Callable[[FrozenTrial], Sequence[float]]] = None,
                 reference_point: Optional[Sequence[float]] = None):
        if client is None and url is None:
            raise ValueError("give the server's url (or a Client)")
        if on_server_error not in ("fail", "fallback"):
            raise ValueError('on_server_error must be "fail" or "fallback"')
        if startup_trials < 1:
            raise ValueError("startup_trials must be at least 1 (the server study's space comes from finished trials)")
        # Bounded by time, not count: retry_seconds is the user's promise of how long a trial may wait.
        self.client = client or Client(url, api_key=api_key, timeout=timeout, max_retries=10_000, retry_seconds=retry_seconds)
        # One attempt, no retries: how a fallback sampler checks whether the server is back without
        # making a trial wait retry_seconds again.
        self._probe = Client(self.client.base_url, api_key=self.client.api_key, timeout=min(timeout, self.client.timeout), max_retries=0)
        self.method = method
        self.constraints_func = constraints_func
        self.reference_point = [float(v) for v in reference_point] if reference_point is not None else None
        self.batch_size = batch_size
        self.options = dict(options or {})
        self.seed = seed
        self.priors = dict(priors or {})
        self.stopping = dict(stopping) if stopping is not None else None
        self.lease_seconds = lease_seconds
        self.allow_repeats = allow_repeats
        self.study_name = study_name
        self.copy_intermediate = copy_intermediate
        self.startup_trials = startup_trials
        self.max_startup_trials = max_startup_trials
        self.on_server_error = on_server_error
        self.recheck_seconds = recheck_seconds
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._rng = random.Random(seed)  # the startup trials' choices among untaken ones
        self._lock = threading.RLock()
        self._entries: Dict[Tuple[int, int], Dict[str, Any]] = {}  # (id(storage), Optuna study id) → server study
        self._categorical_ok: Optional[bool] = None
        self._warned: set = set()
        self._unavailable: Dict[int, str] = {}  # Optuna trial id → why the server gave it no point ("fail")
        self._fallback_trials: set = set()  # Optuna trial ids sampled independently during an outage
        self._down_until: Optional[float] = None  # fallback: no call to the server before this (monotonic)
        self._outbox: List[Tuple[str, Callable[[Client], Any]]] = []  # reports the server has not had yet
        self._flushing = threading.Lock()  # one thread sends the outbox at a time, in order
        self._told_steps: Dict[int, set] = {}  # Optuna trial id → steps ProbnesPruner reported to the server

    # -- Optuna's sampler interface --

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()
        self._rng = random.Random()

    def infer_relative_search_space(self, study: "optuna.Study", trial: FrozenTrial) -> Dict[str, BaseDistribution]:
        entry = self._entry(study)
        if entry is not None:
            return dict(entry["space"])
        return self._startup_space(study)

    def sample_relative(self, study: "optuna.Study", trial: FrozenTrial, search_space: Dict[str, BaseDistribution]) -> Dict[str, Any]:
        if not search_space:
            return {}
        client_id = f"optuna-{study._study_id}-{trial.number}"
        try:
            self._flush()
            entry = self._entry(study) or self._create_entry(study, search_space)
            if entry is None:
                return {}
            got = self._call(lambda c: c.suggest(entry["id"], 1, client_id))
        except ProbNESError as err:
            return self._server_failed(study, trial, client_id, err)
        if not got["trials"]:
            return {}  # converged or completed: the independent sampler takes over
        t = got["trials"][0]
        params: Dict[str, Any] = {}
        for server_name, value in t["parameters"].items():
            name = entry["names"][server_name]
            params[name] = self._to_optuna(entry["space"][name], value)
        study._storage.set_trial_system_attr(trial._trial_id, _TRIAL_ATTR, {
            "study": entry["id"], "trial_id": t["trial_id"], "client_id": client_id, "parameters": params,
            "names": {v: k for k, v in entry["names"].items()},
        })
        # Only the parameters of this trial's relative space (a study made by another process may differ).
        return {k: v for k, v in params.items() if k in search_space}

    def sample_independent(self, study: "optuna.Study", trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution) -> Any:
        reason = self._unavailable.get(trial._trial_id)
        if reason is not None:
            # Raised inside the objective's suggest call: Optuna fails the trial with this message (and
            # honours study.optimize's catch=), instead of an exception out of study.ask() that would
            # stop study.optimize with the trial left RUNNING.
            raise ServerUnavailable(reason)
        entry = self._entry(study)
        if entry is None and isinstance(param_distribution, CategoricalDistribution) and not param_distribution.single():
            picked = self._startup_choice(study, trial, param_name, param_distribution)
            if picked is not None:
                return picked[0]
        if entry is not None and param_name not in entry["space"] and not param_distribution.single():
            with self._lock:
                first = param_name not in self._warned
                self._warned.add(param_name)
            if first:
                warnings.warn(
                    f"probnes: parameter {param_name!r} is not in the server study's space ({', '.join(sorted(entry['space']))}), "
                    f"which is never extended: it is sampled by {type(self._independent).__name__} in every trial of this Optuna "
                    f"study. No trial before the server study was created used it (a branch the startup trials did not reach: "
                    f"one that hinges on a number rather than on a suggest_categorical choice, or a choice left untaken within "
                    f"max_startup_trials={max(self.max_startup_trials, self.startup_trials)}), or one used it with another "
                    f"distribution. To have it searched by the server, start a new Optuna study whose startup reaches it: "
                    f"study.enqueue_trial() a point of its branch before optimize, raise startup_trials, or choose the branch "
                    f"with suggest_categorical.",
                    ParameterOutsideSpaceWarning, stacklevel=4)  # the objective's suggest call
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: "optuna.Study", trial: FrozenTrial, state: TrialState, values: Optional[Sequence[float]]) -> None:
        constraints = self._constraints_after_trial(study, trial, state)
        self._independent.after_trial(study, trial, state, values)
        with self._lock:
            self._unavailable.pop(trial._trial_id, None)
            self._fallback_trials.discard(trial._trial_id)
            told = self._told_steps.pop(trial._trial_id, set())
        info = trial.system_attrs.get(_TRIAL_ATTR)
        if not info:
            # Sampled without the server (a startup trial finishing after the study was made, a converged
            # study, an outage in fallback mode): told by its parameters, so the server's front and model have it.
            entry = self._entry(study)
            if entry is not None:
                self._tell_by_parameters(entry, trial, state, values, constraints)
            return
        sid, tid, client_id = info["study"], info["trial_id"], info["client_id"]
        handed: Dict[str, Any] = info["parameters"]
        entry = self._entry(study)
        shape = _shape(entry, study)
        # A parameter the trial never asked for (a branch of a define-by-run objective not taken) left
        # the server's value unused: it stands, and the result is the handed-out trial's.
        same = all(trial.params[k] == v for k, v in handed.items() if k in trial.params)
        sends: List[Tuple[str, Callable[[Client], Any]]] = []
        if not same:
            # Enqueued or fixed values replaced the server's point: abandon it, report what ran.
            sends.append((sid, lambda c: c.abandon_trial(sid, tid, client_id)))
            fields, _ = _result(shape, values, constraints, trial.number) if state == TrialState.COMPLETE else (None, None)
            if fields is not None:
                if entry is not None and entry.get("conditions"):
                    # The parameters active at the values that ran (an enqueued parent may switch branches).
                    named = _active_named(entry, {**handed, **trial.params})
                else:
                    named = {info["names"][k]: trial.params.get(k, v) for k, v in handed.items()}
                if named is not None:
                    sends.append((sid, lambda c: c.observe(sid, [dict(fields, parameters=named)])))
        else:
            if self.copy_intermediate and state in (TrialState.COMPLETE, TrialState.PRUNED):
                for step, v in sorted(trial.intermediate_values.items()):
                    if _finite(v) and step not in told:  # ProbnesPruner already sent those it asked about
                        sends.append((sid, lambda c, s=int(step), x=float(v): c.report(sid, tid, s, x)))
            reason: Optional[str] = None
            if state == TrialState.COMPLETE:
                fields, reason = _result(shape, values, constraints, trial.number)
                if fields is not None:
                    sends.append((sid, lambda c: c.observe(sid, [dict(fields, trial_id=tid)])))
            elif state == TrialState.PRUNED and trial.intermediate_values:
                last = trial.intermediate_values[max(trial.intermediate_values)]
                fields, reason = _result(shape, [last], constraints, trial.number)
                if fields is not None:
                    sends.append((sid, lambda c: c.observe(sid, [dict(fields, trial_id=tid, stopped=True)])))
                elif not _finite(last):
                    reason = f"pruned at a non-finite value {last}"
            elif state == TrialState.PRUNED:
                reason = "pruned before any intermediate value"
            else:
                reason = failure_reason(trial.number, *_optuna_failure(trial))
            if reason is not None:
                sends.append((sid, lambda c: c.fail_trial(sid, tid, reason, client_id)))
        self._deliver(sends)

    def _constraints_after_trial(self, study: "optuna.Study", trial: FrozenTrial, state: TrialState) -> Optional[List[float]]:
        """constraints_func's values for a COMPLETE or PRUNED trial, kept where Optuna's own samplers keep them
        (the trial's system attribute "constraints", a tuple; None when the function raised), as Optuna's
        _process_constraints_after_trial does, so Optuna's tools read them as they read NSGA-II's."""
        if self.constraints_func is None or state not in (TrialState.COMPLETE, TrialState.PRUNED):
            return None
        stored: Optional[Tuple[float, ...]] = None
        try:
            got = self.constraints_func(trial)
            if not isinstance(got, (tuple, list)):
                warnings.warn(f"Constraints should be a sequence of floats but got {type(got).__name__}.")
            stored = tuple(float(c) for c in got)
            if any(c != c for c in stored):
                stored = None
                raise ValueError("Constraint values cannot be NaN.")
        except BaseException as err:
            # The exception ends study.optimize, as with Optuna's samplers; the server trial must not stay ACTIVE.
            info = trial.system_attrs.get(_TRIAL_ATTR)
            if info:
                sid, tid, cid = info["study"], info["trial_id"], info["client_id"]
                why = failure_reason(trial.number, err)
                self._deliver([(sid, lambda c: c.fail_trial(sid, tid, f"constraints_func: {why}", cid))])
            raise
        finally:
            study._storage.set_trial_system_attr(trial._trial_id, _CONSTRAINTS_KEY, stored)
        return list(stored)

    # -- the server study --

    def _key(self, study: "optuna.Study") -> Tuple[int, int]:
        return (id(study._storage), study._study_id)

    def _entry(self, study: "optuna.Study") -> Optional[Dict[str, Any]]:
        """The Optuna study's server study, from this sampler's memory or the Optuna storage."""
        key = self._key(study)
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        stored = study._storage.get_study_system_attrs(study._study_id).get(_STUDY_ATTR)
        if not stored:
            return None
        entry = _entry_from_json(stored)
        with self._lock:
            return self._entries.setdefault(key, entry)

    def _startup_space(self, study: "optuna.Study") -> Dict[str, BaseDistribution]:
        """The union of the searchable distributions of the finished trials, once startup is over: at least
        startup_trials finished, and every choice of the categorical parameters the ended trials used taken
        by one of them (or max_startup_trials ended). Empty before: the trial is sampled independently."""
        ended = study.get_trials(deepcopy=False, states=_ENDED)
        finished = [t for t in ended if t.state != TrialState.FAIL]
        if len(finished) < self.startup_trials:
            return {}
        if len(ended) < self.max_startup_trials and _untaken_choices(ended):
            return {}
        seen, conflicting = _distributions(finished)
        space: Dict[str, BaseDistribution] = {}
        for name, d in seen.items():
            if name in conflicting or d.single():
                continue
            if isinstance(d, (FloatDistribution, IntDistribution)):
                space[name] = d  # a step becomes the server parameter's step (_create)
            elif isinstance(d, CategoricalDistribution) and self._categorical_ok is not False and all(_choice_ok(c) for c in d.choices):
                space[name] = d
        return space

    def _startup_choice(self, study: "optuna.Study", trial: FrozenTrial, name: str,
                        d: CategoricalDistribution) -> Optional[Tuple[Any]]:
        """A startup trial's choice for a categorical parameter while some choice is untaken: one no other
        trial (ended or running) took; else, when an untaken choice of another categorical parameter remains,
        the least taken of the choices under which that parameter was seen. None: the independent sampler's."""
        others = [t for t in study.get_trials(deepcopy=False, states=_ENDED + (TrialState.RUNNING,)) if t._trial_id != trial._trial_id]
        same = [t for t in others if t.distributions.get(name) == d]
        counts = [sum(1 for t in same if _same_choice(t.params[name], c)) for c in d.choices]
        candidates = [i for i, n in enumerate(counts) if n == 0]
        if not candidates:
            pending = {q for q, _ in _untaken_choices(others)} - {name}
            if not pending:
                return None
            leads = [i for i, c in enumerate(d.choices)
                     if any(_same_choice(t.params[name], c) and pending & set(t.params) for t in same)]
            if not leads:
                return None
            fewest = min(counts[i] for i in leads)
            candidates = [i for i in leads if counts[i] == fewest]
        with self._lock:
            return (d.choices[self._rng.choice(candidates)],)

    def _create_entry(self, study: "optuna.Study", space: Dict[str, BaseDistribution]) -> Optional[Dict[str, Any]]:
        with self._lock:  # n_jobs threads: one of them creates, the others wait and use it
            entry = self._entry(study)
            if entry is not None:
                return entry
            # The trials finished so far, taken before the study exists: each finished its after_trial with no
            # server study to tell, and a trial finishing from here on is told by its own after_trial.
            finished = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            constraints = self._constraint_count(finished)
            if constraints is None:
                return None  # constraints_func has not given a value yet: the study's shape is not known
            entry = self._create(study, space, self._server_names(space), _infer_conditions(study, space), constraints)
            if entry is None:
                return None
            # Processes sharing an Optuna storage may race here (the storage has no compare-and-set):
            # the study whose id is stored wins and a study created meanwhile by another is completed,
            # so it is not left open.
            stored = study._storage.get_study_system_attrs(study._study_id).get(_STUDY_ATTR)
            if stored and stored.get("id") != entry["id"]:
                self._close_duplicate(entry["id"], stored["id"])
                entry = _entry_from_json(stored)
            else:
                study._storage.set_study_system_attr(study._study_id, _STUDY_ATTR, _entry_to_json(entry))
                ended = study.get_trials(deepcopy=False, states=_ENDED)
                untaken = _untaken_choices(ended)
                if untaken:
                    shown = ", ".join(f"{n}={c!r}" for n, c in untaken)
                    warnings.warn(
                        f"probnes: the server study was created after {len(ended)} startup trials (max_startup_trials) "
                        f"although no trial took {shown}: a parameter only those branches would ask for is outside its space, "
                        f"which is never extended, and is sampled by {type(self._independent).__name__}. To have it "
                        f"searched by the server, start a new Optuna study with a larger max_startup_trials, or "
                        f"study.enqueue_trial() one point per missing choice before optimize.",
                        UntakenChoicesWarning, stacklevel=2)
                # Tell the server what was evaluated before it had a study, so its front and model hold every result.
                for t in finished:
                    if _TRIAL_ATTR not in t.system_attrs:
                        self._tell_by_parameters(entry, t, t.state, t.values, t.system_attrs.get(_CONSTRAINTS_KEY))
            self._entries[self._key(study)] = entry
            return entry

    def _method_for(self, objectives: int, constraints: int) -> str:
        """The sampler's method; by default prob-cmaes, or, for several objectives or constraints, the first of the
        server's methods (GET /v1/methods, default first) that handles them, prob-cmaes when it does."""
        if self.method is not None:
            return self.method
        if objectives == 1 and constraints == 0:
            return _DEFAULT_METHOD
        try:
            methods = self._call(lambda c: c.list_methods())["methods"]
        except ProbNESError:
            return _DEFAULT_METHOD  # the creation's answer will say what is wrong
        able = [m["name"] for m in methods
                if (objectives == 1 or m.get("multi_objective")) and (constraints == 0 or m.get("constraints"))]
        return _DEFAULT_METHOD if not able or _DEFAULT_METHOD in able else able[0]

    def _constraint_count(self, finished: Sequence[FrozenTrial]) -> Optional[int]:
        """How many constraints the server study declares: 0 without constraints_func; else the number of
        values constraints_func gave for the first finished trial that has them (Optuna keeps them in its
        system attribute "constraints"), None while no trial has them (the study waits: a study created
        with the wrong number of constraints would refuse every result)."""
        if self.constraints_func is None:
            return 0
        for t in finished:
            got = t.system_attrs.get(_CONSTRAINTS_KEY)
            if got is not None:
                return len(got)
        return None

    def _close_duplicate(self, sid: str, kept: str) -> None:
        try:
            self._call(lambda c: c.update_study(sid, state="COMPLETED", metadata={"superseded_by": kept}))
        except ProbNESError:
            pass  # it has no trials: nothing is lost if it stays open

    # -- the server's availability --

    def _call(self, fn: Callable[[Client], Any]) -> Any:
        """One server call: retried for up to retry_seconds, except while a fallback sampler knows the
        server down, when it is tried once (at most every recheck_seconds) to see whether it is back."""
        down = self._down_until
        if down is not None and time.monotonic() < down:
            raise ServerUnavailable("the server did not answer a moment ago (retrying it every "
                                    f"{self.recheck_seconds:g} s)")
        try:
            result = fn(self._probe if down is not None else self.client)
        except ProbNESError as err:
            if err.transient and self.on_server_error == "fallback":
                with self._lock:
                    self._down_until = time.monotonic() + self.recheck_seconds
            raise
        if down is not None:
            with self._lock:
                if self._down_until is not None:
                    self._down_until = None
                    warnings.warn("probnes: the server answers again; its study resumes.", ServerFallbackWarning, stacklevel=3)
        return result

    def _server_failed(self, study: "optuna.Study", trial: FrozenTrial, client_id: str, err: ProbNESError) -> Dict[str, Any]:
        entry = self._entries.get(self._key(study))
        outage = err.transient and not isinstance(err, ServerUnavailable)
        if entry is not None and outage and getattr(err, "sent", True):
            # The suggestion may have been leased before its answer was lost: fail it once the server answers.
            sid, why = entry["id"], f"Optuna trial {trial.number} had no answer from the server ({err.detail})"
            self._queue([(sid, lambda c: _fail_leases(c, sid, client_id, why))])
        # A refusal (400, 401, 404: a wrong url, key or option, a deleted study) is no outage: falling
        # back would hide it, so it fails the trial in either mode.
        if self.on_server_error == "fail" or not (outage or isinstance(err, ServerUnavailable)):
            with self._lock:
                self._unavailable[trial._trial_id] = (
                    f"ProbNES server at {self.client.base_url} gave no point for Optuna trial {trial.number}: {err} "
                    f"(on_server_error=\"fail\"; retried for up to {self.client.retry_seconds} s)")
            return {}
        with self._lock:
            self._fallback_trials.add(trial._trial_id)
            first = "fallback" not in self._warned
            self._warned.add("fallback")
        if first or not isinstance(err, ServerUnavailable):
            warnings.warn(f"probnes: no point from the server ({err}); trial {trial.number} and those after it are sampled by "
                          f"{type(self._independent).__name__} until the server answers again.", ServerFallbackWarning, stacklevel=3)
        return {}

    def _tell_by_parameters(self, entry: Mapping[str, Any], trial: FrozenTrial, state: TrialState,
                            values: Optional[Sequence[float]], constraints: Optional[Sequence[float]]) -> None:
        """A COMPLETE trial the server did not hand out is told to the server study by its parameters, when it
        has every (active) parameter of the study's space with the same distribution."""
        if state != TrialState.COMPLETE:
            return
        named = self._named_params(entry, trial)
        fields, _ = _result(_shape(entry, None), values, constraints, trial.number)
        if named is None or fields is None:
            return
        sid = entry["id"]
        obs = dict(fields, parameters=named)
        self._deliver([(sid, lambda c: c.observe(sid, [obs]))])

    @staticmethod
    def _named_params(entry: Mapping[str, Any], trial: FrozenTrial) -> Optional[Dict[str, Any]]:
        """Server name → value of the trial's parameters in the study's space, or None when the trial lacks
        one (an active one, under conditions) or used another distribution for it."""
        if entry.get("conditions"):
            named = _active_named(entry, trial.params)
            if named is None or any(trial.distributions[name] != entry["space"][name] for name in (entry["names"][k] for k in named)):
                return None
            return named
        if any(name not in trial.params or trial.distributions[name] != d for name, d in entry["space"].items()):
            return None
        return {server: trial.params[name] for server, name in entry["names"].items()}

    def _deliver(self, sends: List[Tuple[str, Callable[[Client], Any]]]) -> None:
        """Send reports in order; those the server cannot take now wait in the outbox for its return."""
        self._queue(sends)
        try:
            self._flush()
        except ProbNESError:
            pass  # no answer: the reports wait in the outbox; the Optuna trial's own result is in Optuna's storage

    def _queue(self, sends: List[Tuple[str, Callable[[Client], Any]]]) -> None:
        with self._lock:
            self._outbox.extend(sends)

    def _flush(self) -> None:
        """Send the outbox, oldest first. A report the server refuses for good (the trial or study is
        finished or gone) is dropped; on no answer the rest stay for the next call."""
        if not self._outbox or not self._flushing.acquire(blocking=False):
            return  # nothing to send, or another thread is sending it (it sends what is added meanwhile too)
        try:
            while True:
                with self._lock:
                    if not self._outbox:
                        return
                    sid, send = self._outbox[0]
                try:
                    self._call(send)
                except (ConflictError, NotFoundError):
                    pass  # the server study was completed or deleted meanwhile, or the report was made: nothing left to tell it
                except ProbNESError as err:
                    if err.transient or isinstance(err, ServerUnavailable):
                        raise
                    warnings.warn(f"probnes: the server refused a report for study {sid}: {err}", RuntimeWarning, stacklevel=2)
                with self._lock:
                    self._outbox.pop(0)
        finally:
            self._flushing.release()

    def release(self, study: "optuna.Study") -> Dict[str, int]:
        """After the last study.optimize: send what the server has not had yet, abandon the points the
        server generated for trials that will not come (REQUESTED), and fail the leases of this Optuna
        study's trials that are no longer RUNNING. {"abandoned": n, "failed": m}. A study that goes on
        does not need it: the next trial takes a REQUESTED point."""
        entry = self._entry(study)
        if entry is None:
            return {"abandoned": 0, "failed": 0}
        self._flush()
        sid = entry["id"]
        running = {f"optuna-{study._study_id}-{t.number}" for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))}
        abandoned = failed = 0
        for t in list(self.client.iter_trials(sid, state="REQUESTED")):
            try:
                self.client.abandon_trial(sid, t["trial_id"])
                abandoned += 1
            except (ConflictError, NotFoundError):
                pass
        prefix = f"optuna-{study._study_id}-"
        for t in list(self.client.iter_trials(sid, state="ACTIVE")):
            cid = t.get("client_id") or ""
            if cid.startswith(prefix) and cid not in running:
                try:
                    self.client.fail_trial(sid, t["trial_id"], "its Optuna trial ended without a result", cid)
                    failed += 1
                except (ConflictError, NotFoundError):
                    pass
        return {"abandoned": abandoned, "failed": failed}

    @staticmethod
    def _server_names(space: Mapping[str, BaseDistribution]) -> Dict[str, str]:
        """Server parameter name → Optuna name (names the server would refuse become p0, p1, …)."""
        out: Dict[str, str] = {}
        for i, name in enumerate(sorted(space)):
            server = name if _NAME.match(name) and name not in _RESERVED else f"p{i}"
            while server in out:
                server = f"{server}_"
            out[server] = name
        return out

    def _create(self, study: "optuna.Study", space: Dict[str, BaseDistribution], names: Dict[str, str],
                conditions: Optional[Dict[str, Dict[str, Any]]] = None, constraints: int = 0) -> Optional[Dict[str, Any]]:
        # Only conditions whose parent is searched here (the categorical ones may have been left out).
        conditions = {x: c for x, c in (conditions or {}).items() if x in space and c["parent"] in space}
        server_of = {name: server for server, name in names.items()}
        params: List[Dict[str, Any]] = []
        for server, name in names.items():
            d = space[name]
            if isinstance(d, CategoricalDistribution):
                p: Dict[str, Any] = {"name": server, "type": "categorical", "choices": list(d.choices)}
            else:
                p = {"name": server, "type": "int" if isinstance(d, IntDistribution) else "float",
                     "scale": "log" if d.log else "linear", "bounds": [d.low, d.high]}
                # Optuna's grid low + k·step is the server's (Optuna has already moved high onto it). An
                # int's step 1 is the server's default. The server hands out the grid's decimals (0.3);
                # values Optuna computed in binary (0.30000000000000004, from enqueued or independently
                # sampled trials) are taken as those grid values when told.
                if d.step is not None and not (isinstance(d, IntDistribution) and d.step == 1):
                    p["step"] = d.step
            if name in self.priors:
                p["prior"] = dict(self.priors[name])
            if name in conditions:
                p["condition"] = {"parent": server_of[conditions[name]["parent"]], "values": list(conditions[name]["values"])}
            params.append(p)
        directions = ["maximize" if d == StudyDirection.MAXIMIZE else "minimize" for d in study.directions]
        objective_names = _objective_names(study)
        spec: Dict[str, Any] = {
            "name": f"{self.study_name}-{study.study_name}"[:200],
            "parameters": params, "method": self._method_for(len(directions), constraints), "options": self.options,
            "lease_seconds": self.lease_seconds, "allow_repeats": self.allow_repeats,
            "metadata": {"optuna_study": study.study_name, "optuna_parameters": names},
        }
        if len(directions) == 1 and objective_names is None:
            spec["direction"] = directions[0]  # what every server version takes
        else:
            names_ = objective_names or [f"value_{i}" for i in range(len(directions))]
            spec["objectives"] = [{"name": n, "direction": d} for n, d in zip(names_, directions)]
        if constraints > 0:
            spec["constraints"] = [{"name": f"constraint_{i}"} for i in range(constraints)]
        if self.reference_point is not None:
            spec["reference_point"] = list(self.reference_point)
        if self.batch_size is not None:
            spec["batch_size"] = self.batch_size
        if self.seed is not None:
            spec["seed"] = self.seed
        if self.stopping is not None:
            spec["stopping"] = self.stopping
        try:
            created = self._call(lambda c: c.create_study(spec))
        except ProbNESError as err:
            if err.status == 400 and any(isinstance(space[n], CategoricalDistribution) for n in names.values()):
                # The server (or this method) does not take categorical parameters: search the others.
                self._categorical_ok = False
                rest = {k: d for k, d in space.items() if not isinstance(d, CategoricalDistribution)}
                return self._create(study, rest, self._server_names(rest), None, constraints) if len(rest) > 0 else None
            raise
        if any(isinstance(space[n], CategoricalDistribution) for n in names.values()):
            self._categorical_ok = True
        entry: Dict[str, Any] = {"id": created["id"], "names": names, "space": {n: space[n] for n in names.values()},
                                 "objectives": len(directions), "constraints": constraints}
        if conditions:
            entry["conditions"] = conditions
        return entry

    @staticmethod
    def _to_optuna(d: BaseDistribution, value: Any) -> Any:
        if isinstance(d, IntDistribution):
            return int(round(value))
        if isinstance(d, FloatDistribution):
            return min(max(float(value), d.low), d.high)
        if isinstance(d, CategoricalDistribution):
            for c in d.choices:
                if c == value and type(c) is type(value) or (c == value and not isinstance(c, bool) and not isinstance(value, bool)):
                    return c
            raise ValueError(f"the server handed out {value!r}, not one of the choices {d.choices!r}")
        return value


class ProbnesPruner(optuna.pruners.BasePruner):
    """An Optuna pruner that asks the server study's stopping rule (ProbnesSampler(stopping=...)).

        sampler = ProbnesSampler(url, stopping={"rule": "median", "min_steps": 5, "warmup_trials": 5})
        study = optuna.create_study(sampler=sampler, pruner=ProbnesPruner(sampler))

    trial.should_prune() reports the trial's latest intermediate value to the server and answers its
    should_stop. A trial the server did not hand out (the first ones, independent or fallback ones) and
    a server that does not answer are never pruned: the rule needs the server's trial, and an outage
    must not cut a trial short."""

    def __init__(self, sampler: ProbnesSampler):
        self.sampler = sampler

    def prune(self, study: "optuna.Study", trial: FrozenTrial) -> bool:
        info = trial.system_attrs.get(_TRIAL_ATTR)
        if not info or not trial.intermediate_values:
            return False
        step = max(trial.intermediate_values)
        value = trial.intermediate_values[step]
        if not _finite(value):
            return False
        try:
            answer = self.sampler._call(lambda c: c.report(info["study"], info["trial_id"], int(step), float(value)))
        except ProbNESError:
            return False
        with self.sampler._lock:
            self.sampler._told_steps.setdefault(trial._trial_id, set()).add(step)
        return bool(answer.get("should_stop"))


def _entry_to_json(entry: Mapping[str, Any]) -> Dict[str, Any]:
    out = {"id": entry["id"], "names": dict(entry["names"]),
           "space": {k: optuna.distributions.distribution_to_json(d) for k, d in entry["space"].items()},
           "objectives": entry.get("objectives", 1), "constraints": entry.get("constraints", 0)}
    if entry.get("conditions"):
        out["conditions"] = {k: {"parent": c["parent"], "values": list(c["values"])} for k, c in entry["conditions"].items()}
    return out


def _entry_from_json(stored: Mapping[str, Any]) -> Dict[str, Any]:
    entry = {"id": stored["id"], "names": dict(stored["names"]),
             "space": {k: optuna.distributions.json_to_distribution(d) for k, d in stored["space"].items()},
             # Absent from the entries of earlier versions, which made single-objective studies without constraints.
             "objectives": int(stored.get("objectives", 1)), "constraints": int(stored.get("constraints", 0))}
    if stored.get("conditions"):  # absent from the entries of earlier versions: no conditions
        entry["conditions"] = {k: {"parent": c["parent"], "values": list(c["values"])} for k, c in stored["conditions"].items()}
    return entry


def _same_choice(a: Any, b: Any) -> bool:
    """Equal as the server matches choices: by value and JSON type (True is not 1, 1 is 1.0)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool) and isinstance(a, str) == isinstance(b, str)


def _distributions(trials: Sequence[FrozenTrial]) -> Tuple[Dict[str, BaseDistribution], set]:
    """Each parameter's distribution as the trials first used it, in the order first seen, and the names some
    trial used with another distribution."""
    seen: Dict[str, BaseDistribution] = {}
    conflicting: set = set()
    for t in trials:
        for name, d in t.distributions.items():
            if name in seen and seen[name] != d:
                conflicting.add(name)
            seen.setdefault(name, d)
    return seen, conflicting


def _untaken_choices(trials: Sequence[FrozenTrial]) -> List[Tuple[str, Any]]:
    """(name, choice) for each choice of a categorical parameter the trials used that none of them took, in
    the order the parameters were first seen. A name used with two distributions, or with a single choice,
    is left out (it is not searched by the server, whose branches are what startup is for)."""
    dists, conflicting = _distributions(trials)
    out: List[Tuple[str, Any]] = []
    for name, d in dists.items():
        if name in conflicting or not isinstance(d, CategoricalDistribution) or d.single():
            continue
        taken = [t.params[name] for t in trials if name in t.params]
        out.extend((name, c) for c in d.choices if not any(_same_choice(v, c) for v in taken))
    return out


def _infer_conditions(study: "optuna.Study", space: Mapping[str, BaseDistribution]) -> Dict[str, Dict[str, Any]]:
    """Conditions read off the finished trials' define-by-run branches (the module's docstring): Optuna
    name → {"parent": Optuna name, "values": [...]}. A parameter every trial used, or one no categorical
    parameter separates, stays unconditional. A parent is used by strictly more trials than its child,
    so the conditions have no cycle."""
    finished = [t.params for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED))]
    out: Dict[str, Dict[str, Any]] = {}
    for x in space:
        with_x = [p for p in finished if x in p]
        if not with_x or len(with_x) == len(finished):
            continue
        best: Optional[Tuple[int, str, List[Any]]] = None
        for parent, d in space.items():
            if parent == x or not isinstance(d, CategoricalDistribution) or not all(parent in p for p in with_x):
                continue
            seen_with = [p[parent] for p in with_x]
            seen_without = [p[parent] for p in finished if parent in p and x not in p]
            if not seen_without or any(_same_choice(a, b) for a in seen_with for b in seen_without):
                continue
            values: List[Any] = []
            for v in seen_with:
                if not any(_same_choice(v, w) for w in values):
                    values.append(v)
            used = sum(1 for p in finished if parent in p)
            if best is None or used < best[0]:
                best = (used, parent, values)
        if best is not None:
            out[x] = {"parent": best[1], "values": best[2]}
    return out


def _active_named(entry: Mapping[str, Any], params: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """Server name → value of the parameters active at `params` (Optuna names) under the entry's
    conditions, or None when an active one has no value."""
    conditions = entry.get("conditions") or {}
    active: Dict[str, bool] = {}

    def is_active(name: str, depth: int = 0) -> bool:
        if name not in active:
            c = conditions.get(name)
            active[name] = c is None or (depth < len(conditions) + 1 and is_active(c["parent"], depth + 1)
                                         and c["parent"] in params and any(_same_choice(params[c["parent"]], v) for v in c["values"]))
        return active[name]

    out: Dict[str, Any] = {}
    for server, name in entry["names"].items():
        if not is_active(name):
            continue
        if name not in params:
            return None
        out[server] = params[name]
    return out


def _fail_leases(client: Client, sid: str, client_id: str, reason: str) -> None:
    """Fail the trials leased to client_id (a suggestion whose answer was lost), if any."""
    for t in list(client.iter_trials(sid, state="ACTIVE")):
        if t.get("client_id") == client_id:
            try:
                client.fail_trial(sid, t["trial_id"], reason, client_id)
            except (ConflictError, NotFoundError):
                pass


def _finite(v: Any) -> bool:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return f == f and f not in (float("inf"), float("-inf"))


def _shape(entry: Optional[Mapping[str, Any]], study: Optional["optuna.Study"]) -> Dict[str, int]:
    """How many objectives and constraints the server study declares (entries written before the bridge
    knew several objectives have one objective and no constraint)."""
    if entry is not None:
        objectives = entry.get("objectives", 1)
    else:
        objectives = len(study.directions) if study is not None else 1
    return {"objectives": int(objectives), "constraints": int((entry or {}).get("constraints") or 0)}


def _result(shape: Mapping[str, int], values: Optional[Sequence[float]],
            constraints: Optional[Sequence[float]], number: int) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """An Optuna trial's outcome as an observation's fields for the server study's shape, or None and the
    reason the server trial fails instead: `value` for one objective (what every server version takes),
    `values` for several, `constraints` when the study declares them."""
    m, k = shape["objectives"], shape["constraints"]
    if not values or len(values) != m or not all(_finite(v) for v in values):
        shown = values[0] if values and len(values) == 1 else (list(values) if values else None)
        return None, f"Optuna trial {number} returned {shown}"
    fields: Dict[str, Any] = {"value": float(values[0])} if m == 1 else {"values": [float(v) for v in values]}
    if k > 0 or constraints is not None:
        if constraints is None:
            return None, f"Optuna trial {number} has no constraint values (constraints_func gave none) and the server study declares {k}"
        if len(constraints) != k:
            return None, (f"constraints_func returned {len(constraints)} value(s) for Optuna trial {number}; "
                          f"the server study declares {k} constraint(s)")
        if not all(_finite(c) for c in constraints):
            return None, f"constraints_func returned {list(constraints)} for Optuna trial {number} (the server takes finite numbers)"
        fields["constraints"] = [float(c) for c in constraints]
    return fields, None


def _objective_names(study: "optuna.Study") -> Optional[List[str]]:
    """The objectives' names on the server: Optuna's metric_names (Optuna >= 3.4, study.set_metric_names) when
    set and every one is a name the server takes, unique; else None (value_0, value_1, …)."""
    try:
        names = getattr(study, "metric_names", None)
    except Exception:  # a storage without them
        names = None
    if not names or len(names) != len(study.directions):
        return None
    names = [str(n) for n in names]
    if len(set(names)) != len(names) or not all(_NAME.match(n) and n not in _RESERVED for n in names):
        return None
    return names
