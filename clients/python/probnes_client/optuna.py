"""An Optuna sampler whose relative search space is searched by a ProbNES Server study.

    import optuna
    from probnes_client.optuna import ProbnesSampler

    study = optuna.create_study(sampler=ProbnesSampler("http://127.0.0.1:8080", method="prob-cmaes"))
    study.optimize(objective, n_trials=60, n_jobs=4)

Everything else is Optuna's: `study.optimize` (threads with n_jobs), the pruners, the storage (in
memory or RDB), enqueued trials. How the two meet:

- The relative search space is the intersection of the distributions of the completed trials
  (Optuna's IntersectionSearchSpace, as CmaEsSampler uses it): FloatDistribution and IntDistribution
  (log or linear, with or without a step), and CategoricalDistribution when the server's method
  takes categorical parameters. For each such space one server study is created (parameters with
  their bounds, scales and steps, the study's direction, the chosen method and options); its id is
  kept in the Optuna study's system attributes, so processes sharing an Optuna storage share it too.
- Every other parameter (a conditional one, a single value, everything in the first trial, whose
  space is still empty) is drawn by the independent sampler (RandomSampler by default).
- `sample_relative` asks the server for one point, leased to a client id of its own per Optuna trial
  (so n_jobs threads never share a lease), and records the server's trial id on the Optuna trial.
- `after_trial` reports the outcome: COMPLETE as an observation of its value; PRUNED as an
  observation of its last intermediate value with "stopped": true (the server counts it as a
  completed observation of that value; see docs/early-stopping.md); FAIL as a failed trial. The
  intermediate values are copied to the server first, so its dashboard shows the curves. A trial
  whose parameters are not the ones the server handed out (enqueued or fixed values) is reported
  by its parameters instead, as an external observation, and the handed-out trial is abandoned.
- When the server hands out nothing (its distribution converged, or the study completed), the
  trial's parameters come from the independent sampler.
"""
from __future__ import annotations

import json
import re
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from . import Client, ConflictError, NotFoundError, ProbNESError

__all__ = ["ProbnesSampler"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
# Names the server refuses although _NAME matches them (every JavaScript object has them; docs/security.md).
_RESERVED = frozenset(["__proto__", "prototype", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                       "toLocaleString", "toString", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
                       "__lookupSetter__"])
_TRIAL_ATTR = "probnes:trial"  # {"study": server study id, "trial_id": n, "client_id": ..., "parameters": {...}}
_STUDY_ATTR = "probnes:study:"  # + search-space signature → server study id


def _signature(space: Mapping[str, BaseDistribution]) -> str:
    return json.dumps({k: optuna.distributions.distribution_to_json(d) for k, d in sorted(space.items())}, sort_keys=True)


def _choice_ok(v: Any) -> bool:
    return isinstance(v, (str, bool, int, float)) and not (isinstance(v, float) and v != v)


class ProbnesSampler(BaseSampler):
    """Optuna sampler backed by a ProbNES Server study (see the module's docstring).

    url, api_key: the server. method, batch_size, options, seed: the server study's (its defaults when
    None). priors: per-parameter priors by Optuna parameter name, as the server takes them ({"mean",
    "std"} in the parameter's scale, ln for log ones; {"probabilities"} for a categorical one).
    lease_seconds: how long a handed-out point waits for its result (default one day: Optuna does not
    heartbeat). allow_repeats: let the server hand out a configuration again (noisy objectives).
    independent_sampler: for the parameters outside the relative space (default RandomSampler(seed)).
    study_name: prefix of the server studies' names. client: a Client to use instead of url/api_key.
    """

    def __init__(self, url: Optional[str] = None, method: str = "prob-cmaes", *, api_key: Optional[str] = None,
                 batch_size: Optional[int] = None, options: Optional[Mapping[str, Any]] = None, seed: Optional[int] = None,
                 priors: Optional[Mapping[str, Mapping[str, Any]]] = None, lease_seconds: int = 86400,
                 allow_repeats: bool = False, independent_sampler: Optional[BaseSampler] = None,
                 study_name: str = "optuna", client: Optional[Client] = None, copy_intermediate: bool = True):
        if client is None and url is None:
            raise ValueError("give the server's url (or a Client)")
        self.client = client or Client(url, api_key=api_key)
        self.method = method
        self.batch_size = batch_size
        self.options = dict(options or {})
        self.seed = seed
        self.priors = dict(priors or {})
        self.lease_seconds = lease_seconds
        self.allow_repeats = allow_repeats
        self.study_name = study_name
        self.copy_intermediate = copy_intermediate
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._search_space = optuna.samplers.IntersectionSearchSpace()
        self._lock = threading.Lock()
        # Per search-space signature: the server study id, and which parameters it has (categoricals may be left out).
        self._studies: Dict[str, Dict[str, Any]] = {}
        self._categorical_ok: Optional[bool] = None

    # -- Optuna's sampler interface --

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study: "optuna.Study", trial: FrozenTrial) -> Dict[str, BaseDistribution]:
        space: Dict[str, BaseDistribution] = {}
        for name, d in self._search_space.calculate(study).items():
            if d.single():
                continue
            if isinstance(d, (FloatDistribution, IntDistribution)):
                space[name] = d  # a step becomes the server parameter's step (_create)
            elif isinstance(d, CategoricalDistribution) and self._categorical_ok is not False and all(_choice_ok(c) for c in d.choices):
                space[name] = d
        return space

    def sample_relative(self, study: "optuna.Study", trial: FrozenTrial, search_space: Dict[str, BaseDistribution]) -> Dict[str, Any]:
        self._raise_error_if_multi_objective(study)
        if not search_space:
            return {}
        entry = self._server_study(study, search_space)
        if entry is None:
            return {}
        client_id = f"optuna-{study._study_id}-{trial.number}"
        got = self.client.suggest(entry["id"], 1, client_id)
        if not got["trials"]:
            return {}  # converged or completed: the independent sampler takes over
        t = got["trials"][0]
        params: Dict[str, Any] = {}
        for server_name, value in t["parameters"].items():
            name = entry["names"][server_name]
            params[name] = self._to_optuna(search_space[name], value)
        study._storage.set_trial_system_attr(trial._trial_id, _TRIAL_ATTR, {
            "study": entry["id"], "trial_id": t["trial_id"], "client_id": client_id, "parameters": params,
            "names": {v: k for k, v in entry["names"].items()},
        })
        return params

    def sample_independent(self, study: "optuna.Study", trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution) -> Any:
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: "optuna.Study", trial: FrozenTrial, state: TrialState, values: Optional[Sequence[float]]) -> None:
        self._independent.after_trial(study, trial, state, values)
        info = trial.system_attrs.get(_TRIAL_ATTR)
        if not info:
            return
        sid, tid, client_id = info["study"], info["trial_id"], info["client_id"]
        try:
            same = all(trial.params.get(k) == v for k, v in info["parameters"].items())
            if not same:
                # Enqueued or fixed values replaced the server's point: abandon it, report what ran.
                self.client.abandon_trial(sid, tid, client_id)
                if state == TrialState.COMPLETE and values and _finite(values[0]):
                    named = {info["names"][k]: trial.params[k] for k in info["parameters"] if k in trial.params}
                    if len(named) == len(info["parameters"]):
                        self.client.observe(sid, [{"parameters": named, "value": float(values[0])}])
                return
            if self.copy_intermediate and state in (TrialState.COMPLETE, TrialState.PRUNED):
                for step, v in sorted(trial.intermediate_values.items()):
                    if _finite(v):
                        self.client.report(sid, tid, int(step), float(v))
            if state == TrialState.COMPLETE and values and _finite(values[0]):
                self.client.observe(sid, [{"trial_id": tid, "value": float(values[0])}])
            elif state == TrialState.PRUNED and trial.intermediate_values:
                last = trial.intermediate_values[max(trial.intermediate_values)]
                if _finite(last):
                    self.client.observe(sid, [{"trial_id": tid, "value": float(last), "stopped": True}])
                else:
                    self.client.fail_trial(sid, tid, f"pruned at a non-finite value {last}", client_id)
            else:
                reason = "pruned before any intermediate value" if state == TrialState.PRUNED else f"Optuna trial {trial.number} ended {state.name}"
                self.client.fail_trial(sid, tid, reason, client_id)
        except (ConflictError, NotFoundError):
            pass  # the server study was completed or deleted meanwhile: nothing left to tell it

    # -- the server study of a search space --

    def _server_study(self, study: "optuna.Study", space: Dict[str, BaseDistribution]) -> Optional[Dict[str, Any]]:
        key = _signature(space)
        with self._lock:
            entry = self._studies.get(key)
            if entry is not None:
                return entry
            attrs = study._storage.get_study_system_attrs(study._study_id)
            names = self._server_names(space)
            known = attrs.get(_STUDY_ATTR + key)
            if known:
                entry = {"id": known, "names": names}
            else:
                entry = self._create(study, space, names)
                if entry is None:
                    return None
                study._storage.set_study_system_attr(study._study_id, _STUDY_ATTR + key, entry["id"])
            self._studies[key] = entry
            return entry

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

    def _create(self, study: "optuna.Study", space: Dict[str, BaseDistribution], names: Dict[str, str]) -> Optional[Dict[str, Any]]:
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
            params.append(p)
        spec: Dict[str, Any] = {
            "name": f"{self.study_name}-{study.study_name}"[:200],
            "direction": "maximize" if study.direction == StudyDirection.MAXIMIZE else "minimize",
            "parameters": params, "method": self.method, "options": self.options,
            "lease_seconds": self.lease_seconds, "allow_repeats": self.allow_repeats,
            "metadata": {"optuna_study": study.study_name, "optuna_parameters": names},
        }
        if self.batch_size is not None:
            spec["batch_size"] = self.batch_size
        if self.seed is not None:
            spec["seed"] = self.seed
        try:
            created = self.client.create_study(spec)
        except ProbNESError as err:
            if err.status == 400 and any(isinstance(space[n], CategoricalDistribution) for n in names.values()):
                # The server (or this method) does not take categorical parameters: search the others.
                self._categorical_ok = False
                rest = {k: d for k, d in space.items() if not isinstance(d, CategoricalDistribution)}
                return self._create(study, rest, self._server_names(rest)) if len(rest) > 0 else None
            raise
        if any(isinstance(space[n], CategoricalDistribution) for n in names.values()):
            self._categorical_ok = True
        return {"id": created["id"], "names": names}

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


def _finite(v: Any) -> bool:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return f == f and f not in (float("inf"), float("-inf"))
