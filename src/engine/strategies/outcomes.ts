/**
 * Several objectives, constraints and infeasible points for every method (ALGORITHM.md §32): a
 * wrapper around a strategy that, before the method's ask, tell or estimate, replaces each
 * observation's value y by the generation's scalar target (multi/targets.ts) and hands the method
 * nothing else. The method itself is unchanged: it minimises y as it always does.
 *
 * Glossary: M objectives, K constraints (BaseState.outcomes); t = state.generation, the generation
 * the call belongs to (ask and tell of one generation see the same t, tell increments it after);
 * w_t the generation's weights on the simplex.
 *
 * - w_t is drawn from a generator seeded by (outcomes.seed, t), not from the state's own generator:
 *   the method's draws are those it would make anyway, and every ask and the tell of generation t
 *   score the history alike. outcomes.seed is derived at init from the method's initial generator
 *   state (a hash of its words), so it costs the method no draw either.
 * - A state without `outcomes` (one objective, no constraint) whose history holds no infeasible
 *   point passes through untouched: same objects, same `packed`, byte for byte the method's own call.
 * - Scalarised calls drop `packed` (its y are the domain's placeholders): the method reads the
 *   rescored history.
 * - estimate: a prediction of a random scalarisation means nothing to a user, so for M > 1 it is null
 *   (and so are the diagnostics' integral_mean and integral_std); for M = 1 (constraints or infeasible
 *   points) the method's own, on the penalised values.
 */
import { InvalidInputError } from '../errors.js';
import { feasibilityModel, PF_MIN, type FeasibilityModel } from './feasibility.js';
import { dominates, isFeasible } from '../multi/pareto.js';
import { simplexWeights } from '../multi/scalarize.js';
import { targetContext, targetOf, type TargetContext } from '../multi/targets.js';
import { Rng } from '../random/index.js';
import type { AskContext, BaseState, InitSpec, Observation, OutcomesState, StoredState, StrategyDescriptor, TellContext } from './types.js';
import { checkedOptions, type Options, type OptionSpecs } from './options.js';

/** The most objectives and constraints a state may declare (the API's limits are lower). */
const MAX_OBJECTIVES = 32;
const MAX_CONSTRAINTS = 256;

/** Bench-only switches of the decomposition (§32.5's experiments); the API accepts none of them. */
export const OUTCOME_BENCH_OPTIONS: OptionSpecs = {
  mo_members: { kind: 'number', min: 1, max: 16, integer: true, description: 'P search distributions, each with weights around its own anchor (1: one, weights uniform on the simplex).' },
  mo_alpha: { kind: 'number', min: 0, max: 1e4, description: 'α of the members\' Dirichlet(1 + α·a_p) weights.' },
  mo_penalty: { kind: 'enum', values: ['deb', 'additive'], description: 'Violators: Deb\'s order (max(s, ŷ) + CV/v̄) or the smooth s + CV/v̄.' },
  mo_norm: { kind: 'enum', values: ['feasible', 'front'], description: 'The objectives\' normalisation: the feasible range or the front\'s.' },
  mo_reference: { kind: 'enum', values: ['on', 'off'], description: 'With the front\'s normalisation, each objective\'s range up to the declared reference point (on) or the front\'s nadir (off).' },
  mo_restart: { kind: 'number', min: 0, max: 1000, integer: true, description: 'A member restarts from the prior after this many of its generations without a point on the front (0: never).' },
  mo_feasibility: { kind: 'enum', values: ['on', 'off'], description: 'The batch keeps the candidates with PF(u) ≥ 0.05 under the feasibility model (on) or every candidate (off, the default: on the truss it was ahead at 20·d and 50·d but 1.1 behind at 100·d, §32.5).' },
};
const MO_KEYS = Object.keys(OUTCOME_BENCH_OPTIONS);
/** P and α of the decomposition by default (§32.5). */
export const DEFAULT_MEMBERS = 8;
export const DEFAULT_ALPHA = 20;
/** A member's generations without a point on the front after which it restarts, by default (§32.5). */
export const DEFAULT_RESTART_AFTER = 2;

function checkCount(what: string, v: unknown, min: number, max: number): number {
  if (!(typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max)) throw new InvalidInputError(`${what} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  return v;
}

/** A declared reference point of M finite numbers, or null (none declared). */
function checkedReference(r: unknown, m: number): number[] | null {
  if (r === undefined || r === null) return null;
  if (!(Array.isArray(r) && r.length === m && r.every((v) => typeof v === 'number' && Number.isFinite(v)))) throw new InvalidInputError(`outcomes.reference must be ${m} finite numbers, got ${JSON.stringify(r)}`);
  return [...r];
}

function mix(h: number, w: number): number {
  h = Math.imul(h ^ (w | 0), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** A 32-bit seed from the method's initial generator state (murmur3's finaliser over its words). */
function seedOf(state: BaseState): number {
  let h = 0x2545f491;
  for (const w of state.rng.words) h = mix(h, w);
  return h;
}

/** The outcomes a state declares, or null for one objective and no constraint. */
export function outcomesOf(state: BaseState): OutcomesState | null {
  return state.outcomes ?? null;
}

/** Gamma(k, 1) for k ≥ 1 (Marsaglia & Tsang 2000, "A simple method for generating gamma variables"). */
function gamma(rng: Rng, k: number): number {
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const z = rng.normal();
    const v = (1 + c * z) ** 3;
    if (v <= 0) continue;
    const u = rng.uniformOpen();
    if (Math.log(u) < 0.5 * z * z + d - d * v + d * Math.log(v)) return d * v;
  }
}

/**
 * The weights of generation t for member p: uniform on the simplex (§32.2) with one member, else
 * Dirichlet(1 + α·a_p) around the member's anchor; from a generator of (seed, t, p) alone.
 */
export function generationWeights(o: OutcomesState, t: number, p = 0): number[] {
  const rng = Rng.fromSeed(p === 0 ? (o.seed ^ Math.imul(t + 1, 0x9e3779b1)) | 0 : mix(mix(o.seed, t + 1), p));
  const anchors = o.anchors;
  if (!anchors) return simplexWeights(rng, o.objectives);
  const g = anchors[p].map((a) => gamma(rng, 1 + (o.alpha ?? 0) * a));
  const total = g.reduce((a, b) => a + b, 0);
  return g.map((v) => v / total);
}

/**
 * P anchors spread over the simplex: for M = 2 evenly from (1, 0) to (0, 1); for M > 2 the M vertices,
 * the centre, the M points with weight 1/2 on one objective and the rest shared equally, then the edges'
 * midpoints (a lattice of Das & Dennis 1998 is too coarse or too large for a handful of members), then
 * these again.
 */
export function anchorsFor(m: number, P: number): number[][] {
  if (m === 2) return Array.from({ length: P }, (_, p) => (P === 1 ? [0.5, 0.5] : [1 - p / (P - 1), p / (P - 1)]));
  const unit = (i: number): number[] => Array.from({ length: m }, (_, j) => (j === i ? 1 : 0));
  const centre = Array<number>(m).fill(1 / m);
  const candidates: number[][] = [...Array.from({ length: m }, (_, i) => unit(i)), centre];
  for (let i = 0; i < m; i++) candidates.push(Array.from({ length: m }, (_, j) => (j === i ? 0.5 : 0.5 / (m - 1))));
  for (let i = 0; i < m; i++) for (let k = i + 1; k < m; k++) candidates.push(Array.from({ length: m }, (_, j) => (j === i || j === k ? 0.5 : 0)));
  return Array.from({ length: P }, (_, p) => candidates[p % candidates.length]);
}

function hasInfeasible(obs: readonly Observation[] | undefined): boolean {
  // A context without the list (callers that build one by hand) has nothing infeasible in it.
  if (!obs) return false;
  for (let j = 0; j < obs.length; j++) if (obs[j].infeasible) return true;
  return false;
}

/** Whether a call must rescore its observations (cheap: one pass over them without outcomes). */
function scalarises(state: BaseState, ...lists: (readonly Observation[] | undefined)[]): boolean {
  return state.outcomes !== undefined || lists.some(hasInfeasible);
}

/**
 * The batch's filter of §32.3 for the member asking with distribution ν = N(asker.mean, asker.cov):
 * PF(u) ≥ PF_MIN under the feasibility model of the history (multi/feasibility.ts), for a study with
 * mo_feasibility on that declares constraints or has an infeasible evaluation; undefined otherwise.
 * Off by default: on the truss it was not better at every budget (§32.5, "Feasibility model"). The model is fitted at
 * the first call, so a method that never asks (all but the ProbNES default profile's pool) costs
 * nothing; it is a function of the history and ν alone.
 */
function admissibleFor(state: BaseState, asker: BaseState, history: readonly Observation[]): AskContext['admissible'] {
  const o = state.outcomes;
  if (o?.feasibility !== 'on' || !(o.constraints > 0 || hasInfeasible(history))) return undefined;
  let model: FeasibilityModel | null = null;
  return (u) => (model ??= feasibilityModel(history, o.constraints, asker.mean, asker.cov)).pf(u) >= PF_MIN;
}

/** Generation t's target context over the evaluations (the history, or the batch when none is sent), for member p. */
export function generationContext(state: BaseState, evaluations: readonly Observation[], p = 0): TargetContext {
  const o = outcomesOf(state);
  const m = o?.objectives ?? 1;
  return targetContext(evaluations, { objectives: m, weights: m > 1 ? generationWeights(o!, state.generation, p) : null, normalise: o?.norm ?? 'feasible', penalty: o?.penalty ?? 'deb', reference: o?.reference ?? null });
}

function rescore(ctx: TargetContext, obs: readonly Observation[]): Observation[] {
  return obs.map((o, j) => {
    const { f: _f, c: _c, infeasible: _i, ...rest } = o;
    return { ...rest, y: targetOf(ctx, o, j) };
  });
}

function checkOutcomes(raw: unknown): OutcomesState {
  if (!raw || typeof raw !== 'object') throw new InvalidInputError('the stored state\'s outcomes must be an object');
  const o = raw as Record<string, unknown>;
  const objectives = checkCount('outcomes.objectives', o.objectives, 1, MAX_OBJECTIVES);
  const reference = checkedReference(o.reference, objectives);
  return {
    ...(o as unknown as OutcomesState),
    ...(reference ? { reference } : {}),
    objectives,
    constraints: checkCount('outcomes.constraints', o.constraints, 0, MAX_CONSTRAINTS),
    seed: checkCount('outcomes.seed', o.seed, -(2 ** 31), 2 ** 31 - 1),
  };
}

/** The member whose distribution hands out generation t's points. */
function memberOf(o: OutcomesState, t: number): number {
  return o.members ? t % (o.members.length + 1) : 0;
}

/**
 * Whether a generation's results put a point on the feasible front of the evaluations: a feasible
 * result that no feasible evaluation dominates (equal points do not dominate each other).
 */
export function onFront(batch: readonly Observation[], evaluations: readonly Observation[]): boolean {
  const feasible = (o: Observation): o is Observation & { f: number[] } => !o.infeasible && o.f !== undefined && (!o.c || isFeasible(o.c));
  const front = evaluations.filter(feasible);
  return batch.some((b) => feasible(b) && !front.some((e) => dominates(e.f, b.f)));
}

/**
 * After the tell of a generation whose points member p asked: count p's generations without a point
 * on the front, and after `restart.after` of them start p again from the method's state at init (the
 * prior), its generator reseeded. Its GP
 * sees every evaluation from its first tell on, so a restarted member is not the first start again:
 * its natural gradient from the wide prior reads the whole landscape of its scalarisation.
 */
function restartStalled<S extends BaseState>(state: S, p: number, contributed: boolean): S {
  const o = state.outcomes!;
  const r = o.restart!;
  const stalls = r.stalls.map((n, k) => (k !== p ? n : contributed ? 0 : n + 1));
  if (stalls[p] < r.after) return { ...state, outcomes: { ...o, restart: { ...r, stalls } } };
  stalls[p] = 0;
  const fresh = { ...r.template, rng: Rng.fromSeed(mix(mix(o.seed, 5000), r.count)).state(), generation: state.generation } as BaseState;
  const restart = { ...r, stalls, count: r.count + 1 };
  if (p === 0) return { ...(fresh as S), outcomes: { ...o, restart } };
  return { ...state, outcomes: { ...o, members: o.members!.map((m, k) => (k === p - 1 ? fresh : m)), restart } };
}

/**
 * `inner` with several objectives, constraints and infeasible points scalarised per generation.
 * `decompose`: the method keeps a search distribution, so that P members (bench option mo_members)
 * can each follow their own part of the front (§32.2's decomposition).
 */
export function withOutcomes<S extends BaseState>(inner: StrategyDescriptor<S>, decompose = false): StrategyDescriptor<S> {
  const benchOptions = decompose ? { ...inner.benchOptions, ...OUTCOME_BENCH_OPTIONS } : { ...inner.benchOptions, mo_norm: OUTCOME_BENCH_OPTIONS.mo_norm };
  const own = (options: Options): Options => Object.fromEntries(Object.entries(options).filter(([k]) => !MO_KEYS.includes(k)));
  return {
    ...inner,
    benchOptions,
    init(spec: InitSpec, rng: Rng): S {
      const mo = Object.fromEntries(Object.entries(spec.options).filter(([k]) => MO_KEYS.includes(k)));
      checkedOptions(inner.name, benchOptions, mo);
      // The defaults of §32.5's measurements: P = 8 members, α = 20, the front's normalisation.
      const P = decompose ? Number(mo.mo_members ?? DEFAULT_MEMBERS) : 1;
      const norm = (mo.mo_norm ?? (decompose ? 'front' : undefined)) as OutcomesState['norm'] | undefined;
      const objectives = spec.outcomes ? checkCount('outcomes.objectives', spec.outcomes.objectives, 1, MAX_OBJECTIVES) : 1;
      const constraints = spec.outcomes ? checkCount('outcomes.constraints', spec.outcomes.constraints, 0, MAX_CONSTRAINTS) : 0;
      const several = objectives > 1 && P > 1;
      // Members start without the start phase (§29): its Powell model keeps values a new scalarisation invalidates.
      const innerSpec = { ...spec, options: several ? { ...own(spec.options), start_phase: 'off' } : own(spec.options) };
      const state = inner.init(innerSpec, rng);
      // mo_feasibility on keeps outcomes even then: the filter needs them to be switched on (§32.4's channel).
      if (objectives === 1 && constraints === 0 && mo.mo_feasibility !== 'on') return state;
      const seed = seedOf(state);
      const reference = norm === 'front' && mo.mo_reference !== 'off' ? checkedReference(spec.outcomes?.reference, objectives) : null;
      const o: OutcomesState = {
        objectives,
        constraints,
        seed,
        ...(norm && objectives > 1 ? { norm } : {}),
        ...(reference ? { reference } : {}),
        ...(mo.mo_penalty === 'additive' ? { penalty: 'additive' as const } : {}),
        ...(mo.mo_feasibility === 'on' ? { feasibility: 'on' as const } : {}),
      };
      if (several) {
        o.anchors = anchorsFor(objectives, P);
        o.alpha = Number(mo.mo_alpha ?? DEFAULT_ALPHA);
        // The other members: their own generators; the prior mean is handed out once, by member 0.
        o.members = Array.from({ length: P - 1 }, (_, k) => ({ ...inner.init(innerSpec, Rng.fromSeed(mix(seed, 1000 + k))), meanAsked: true }) as BaseState);
        const after = Number(mo.mo_restart ?? DEFAULT_RESTART_AFTER);
        if (after > 0) o.restart = { after, template: state, stalls: new Array<number>(P).fill(0), count: 0 };
      }
      return { ...state, outcomes: o };
    },
    ask(state: S, ctx: AskContext, count: number) {
      if (!scalarises(state, ctx.history)) return inner.ask(state, ctx, count);
      // The batch's filter (§32.3) when there is one; a context without constraints or infeasible points is the rescored one alone.
      const filtered = (asker: BaseState, history: Observation[]): AskContext => {
        const admissible = admissibleFor(state, asker, ctx.history);
        return admissible ? { ...ctx, history, admissible } : { ...ctx, history };
      };
      const o = state.outcomes;
      if (!o?.members) return inner.ask(state, filtered(state, rescore(generationContext(state, ctx.history), ctx.history)), count);
      // Generation t's points come from member t mod P (member 0 is the state itself).
      const p = memberOf(o, state.generation);
      const history = rescore(generationContext(state, ctx.history, p), ctx.history);
      if (p === 0) {
        const asked = inner.ask(state, filtered(state, history), count);
        return { points: asked.points, state: asked.state };
      }
      const member = { ...(o.members[p - 1] as S), generation: state.generation };
      const asked = inner.ask(member, filtered(member, history), count);
      const members = o.members.map((m, k) => (k === p - 1 ? asked.state : m));
      return { points: asked.points, state: { ...state, outcomes: { ...o, members } } };
    },
    tell(state: S, ctx: TellContext): S {
      if (!scalarises(state, ctx.history, ctx.batch)) return inner.tell(state, ctx);
      const evaluations = ctx.history.length > 0 ? ctx.history : ctx.batch;
      const { packed: _packed, ...rest } = ctx;
      const tellMember = <T extends BaseState>(s: T, p: number): T => {
        const g = generationContext(state, evaluations, p);
        return inner.tell(s as unknown as S, { ...rest, batch: rescore(g, ctx.batch), history: rescore(g, ctx.history) }) as unknown as T;
      };
      const o = state.outcomes;
      const own = tellMember(state, 0);
      // E_ν[y] of one random scalarisation means nothing to a user, as its prediction does not (estimate below).
      const told = (o?.objectives ?? 1) > 1 ? { ...own, diagnostics: { ...own.diagnostics, integral_mean: null, integral_std: null } } : own;
      if (!o?.members) return told;
      const members = o.members.map((m, k) => tellMember({ ...m, generation: state.generation }, k + 1));
      const next = { ...told, outcomes: { ...o, members } };
      return o.restart ? restartStalled(next, memberOf(o, state.generation), onFront(ctx.batch, evaluations)) : next;
    },
    ...(inner.estimate
      ? {
          estimate(state: S, history: Observation[]) {
            if ((state.outcomes?.objectives ?? 1) > 1) return { predicted: null, predicted_std: null };
            if (!scalarises(state, history)) return inner.estimate!(state, history);
            return inner.estimate!(state, rescore(generationContext(state, history), history));
          },
        }
      : {}),
    migrate(stored: StoredState): S {
      const state = inner.migrate(stored);
      if (stored.outcomes === undefined) return state;
      return { ...state, outcomes: checkOutcomes(stored.outcomes) };
    },
  };
}
