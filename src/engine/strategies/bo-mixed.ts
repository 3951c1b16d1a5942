/**
 * BO and πBO on a mixed space (ALGORITHM.md §6, §27): the study has categorical parameters
 * (InitSpec.categories), so a point is [u, c], u the d_c continuous internal coordinates and c one
 * choice index per categorical parameter. Everything else is bo-core.ts's BO: the same priors, the
 * same standardised y, the same greedy batch expected improvement; only the inputs and the search
 * over candidates change.
 *
 * GP inputs. φ(x) = [(u − lower)/(upper − lower), one-hot(c)]: the box-normalised continuous part of
 * bo-core.ts and the one-hot encoding of each choice, so the ARD RBF kernel on φ is the product of
 * the RBF kernel and the overlap kernel of gp/mixed-kernel.ts (one lengthscale per choice). BO's
 * lengthscale prior (Gamma(3, 6), mode 1/3) applies to the one-hot columns as to the unit box.
 *
 * Acquisition over the choices, by sampling and enumeration: the candidates pair bo-core's
 * continuous candidates with choices drawn uniformly (the uniform ones) or the incumbent's choices
 * with each parameter redrawn with probability 1/m (the local ones, m categorical parameters); when
 * the product of the K_j is at most the number of candidates, every combination of choices is
 * also scored at the incumbent's continuous part. The best few are refined by projected L-BFGS in u
 * with their choices held fixed (no refinement without continuous parameters). πBO's prior factor
 * is N(u; 0, I) times the choices' prior probabilities: log π = −½‖u‖² + Σ_j log p_j(c_j).
 *
 * Conditional coordinates (InitSpec.conditions, ALGORITHM.md §30): φ imputes the inactive ones, a
 * continuous column to the unit-box value of the prior mean u = 0 and a one-hot block to zeros, for
 * the training points, the pending points and every candidate alike, so the GP and the acquisition
 * (and its refinement, whose gradient along an inactive column is then zero) ignore them.
 *
 * Initial design: prior draws, u ~ N(0, I) clipped to the box and c_j ~ the prior p_j, until two
 * observations exist. State: as bo-core.ts (BaseState.mean, cov over u: the best point's u and
 * I), plus `categorical`, the choices' prior p_j, which never changes (BO has no search
 * distribution); dim counts every coordinate.
 */
import { InvalidInputError } from '../errors.js';
import { fromRows } from '../linalg/index.js';
import { Rng } from '../random/index.js';
import { boPriors, buildModel, fitGp, type GpModel } from '../gp/index.js';
import { oneHot } from '../gp/mixed-kernel.js';
import { fixBatch, logEiFromPosterior, logQEiGain, type BaseSamples } from '../acquisition/ei.js';
import { pointPosterior } from '../acquisition/posterior.js';
import { maximizeInBox } from '../acquisition/optimize.js';
import { mixedLayout, sampleChoices } from '../distributions/categorical.js';
import { activeMask, checkConditions, impute } from '../distributions/conditional.js';
import type { AskContext, AskResult, InitSpec, Observation, TellContext } from './types.js';
import type { MethodName } from './methods.js';
import { standardise } from './probnes-data.js';
import { checkedOptions, type OptionSpecs } from './options.js';
import { BO_STATE_VERSION, bestIndex, boParams, drawCandidates, plainHyper, recommendation, type BoState, type Box } from './bo-core.js';

const REFINE = { starts: 5, maxIterations: 50 };
const REFINE_MC = { starts: 2, maxIterations: 25 };
/** Candidates whose Monte Carlo gain is computed in the later greedy steps (see selectBatch). */
const MC_SCORED = 64;

/** The layout of a mixed BO state: continuous coordinates, then the choices. */
interface Layout {
  dc: number;
  K: number[];
}

export function initBoMixed(method: MethodName, spec: InitSpec, rng: Rng, specs: OptionSpecs): BoState {
  const params = boParams(method, checkedOptions(method, specs, spec.options));
  const q = spec.categories ?? [];
  const dc = spec.dim - q.length;
  if (!Number.isInteger(spec.dim) || dc < 0 || q.length === 0) throw new InvalidInputError(`${method}: a mixed space needs categories and dim ≥ their number`);
  if (!Number.isInteger(spec.batchSize) || spec.batchSize < 1) throw new InvalidInputError(`${method}: batch size must be a positive integer`);
  if (q.some((p) => p.length < 1 || !p.every((v) => Number.isFinite(v) && v >= 0))) throw new InvalidInputError(`${method}: category priors must be non-empty lists of probabilities`);
  const half = params.boxStd;
  const box: Box = spec.box
    ? { lower: spec.box.lower.slice(0, dc), upper: spec.box.upper.slice(0, dc) }
    : { lower: new Array<number>(dc).fill(-half), upper: new Array<number>(dc).fill(half) };
  if (box.lower.length !== dc || box.upper.length !== dc || box.lower.some((l, j) => !(l < box.upper[j]!))) {
    throw new InvalidInputError('BO needs a box with lower < upper in every continuous dimension');
  }
  return {
    version: BO_STATE_VERSION, method, dim: spec.dim, batchSize: spec.batchSize, generation: 0, rng: rng.state(),
    params, mean: new Array<number>(dc).fill(0), cov: Array.from({ length: dc }, (_, i) => Array.from({ length: dc }, (_, j) => (i === j ? 1 : 0))),
    categorical: q.map((p) => [...p]), box, hyper: null,
    ...(spec.conditions?.length ? { conditions: checkConditions(spec.conditions, dc, q.map((p) => p.length)) } : {}),
    diagnostics: { integral_mean: null, integral_std: null, n_active: null },
  };
}

const choicesOf = (x: readonly number[], L: Layout) => x.slice(L.dc).map((c) => Math.round(c));
const unitOf = (box: Box, x: readonly number[], dc: number) => Array.from({ length: dc }, (_, j) => (x[j]! - box.lower[j]!) / (box.upper[j]! - box.lower[j]!));

/** φ(x) for a mixed internal point. */
function encode(state: BoState, L: Layout, x: readonly number[]): number[] {
  return imputed(state, L, [...unitOf(state.box, x, L.dc), ...oneHot(choicesOf(x, L), L.K)], choicesOf(x, L));
}

/** φ with the inactive coordinates imputed (the unit-box value of u = 0; one-hot zeros), given the choices c. */
function imputed(state: BoState, L: Layout, f: number[], c: readonly number[]): number[] {
  if (!state.conditions) return f;
  const active = activeMask(state.conditions, [...new Array<number>(L.dc).fill(0), ...c]);
  return impute(f, active, L.dc, L.K, unitOf(state.box, new Array<number>(L.dc).fill(0), L.dc));
}

function trainingData(state: BoState, L: Layout, history: Observation[]) {
  return { X: history.map((o) => encode(state, L, o.x)), y: standardise(history.map((o) => o.y)).yTilde };
}

/** A candidate: unit-box continuous part and choices. */
interface Candidate {
  v: Float64Array;
  c: number[];
}

function candidates(state: BoState, L: Layout, rng: Rng, incumbent: Candidate): Candidate[] {
  const n = state.params.candidates;
  const nLocal = Math.round(n * 0.1);
  const conts = drawCandidates(rng, L.dc, n, Array.from(incumbent.v));
  const uniformChoice = () => L.K.map((k) => Math.floor(rng.uniform() * k));
  const out = conts.map((v, i) => {
    if (i >= nLocal) return { v, c: uniformChoice() };
    const c = incumbent.c.map((ci, j) => (rng.uniform() < 1 / L.K.length ? Math.floor(rng.uniform() * L.K[j]!) : ci));
    return { v, c };
  });
  // Enumeration: every combination of choices at the incumbent's continuous part, when affordable.
  const combos = L.K.reduce((a, k) => a * k, 1);
  if (combos <= n) {
    for (let k = 0; k < combos; k++) {
      let r = k;
      out.push({ v: Float64Array.from(incumbent.v), c: L.K.map((kj) => { const ci = r % kj; r = Math.floor(r / kj); return ci; }) });
    }
  }
  return out;
}

const phi = (state: BoState, L: Layout, v: ArrayLike<number>, c: number[]) => Float64Array.from(imputed(state, L, [...Array.from(v), ...oneHot(c, L.K)], c));

/** log π up to a constant: −½‖u‖² over the continuous part plus the choices' log prior probabilities. */
function logPrior(state: BoState, v: ArrayLike<number>, c: number[]): { value: number; grad: Float64Array } {
  const grad = new Float64Array(v.length);
  let value = 0;
  for (let j = 0; j < v.length; j++) {
    const w = state.box.upper[j]! - state.box.lower[j]!;
    const u = state.box.lower[j]! + v[j]! * w;
    value -= 0.5 * u * u;
    grad[j] = -u * w;
  }
  c.forEach((ci, j) => (value += Math.log(state.categorical![j]![ci]!)));
  return { value, grad };
}

/** Greedy batch (bo-core.ts's, over mixed candidates): each pick maximises the gain given the points before it. */
function selectBatch(state: BoState, L: Layout, model: GpModel, rng: Rng, pending: number[][], count: number, incumbent: Candidate, best: number, w: number): Candidate[] {
  const base: BaseSamples = Array.from({ length: state.params.mcSamples }, () => rng.normals(pending.length + count));
  const cands = candidates(state, L, rng, incumbent);
  const prior = (v: ArrayLike<number>, c: number[]) => (w === 0 ? 0 : w * logPrior(state, v, c).value);
  const fixed: number[][] = pending.map((x) => encode(state, L, x));
  const chosen: Candidate[] = [];
  // Single-point scores depend on neither the picks nor the pending points: computed once.
  const single = Float64Array.from(cands, (cd) => logEiFromPosterior(pointPosterior(model, phi(state, L, cd.v, cd.c)), best).value + prior(cd.v, cd.c));
  for (let k = 0; k < count; k++) {
    const fb = fixed.length > 0 ? fixBatch(model, fixed, base, fixed.map((x) => pointPosterior(model, x))) : null;
    const score = (v: ArrayLike<number>, c: number[]) => {
      const x = phi(state, L, v, c);
      const post = pointPosterior(model, x);
      return (fb ? logQEiGain(model, fb, x, post, best, base) : logEiFromPosterior(post, best).value) + prior(v, c);
    };
    // The Monte Carlo gain never exceeds the single-point EI (bo-core.ts PRUNE_MARGIN): it is computed
    // only for the candidates whose single-point score is among the best MC_SCORED.
    let values = single;
    if (fb) {
      const top = new Set(Array.from(single.keys()).sort((a, b) => single[b]! - single[a]!).slice(0, MC_SCORED));
      values = Float64Array.from(cands, (cd, i) => (top.has(i) ? score(cd.v, cd.c) : -Infinity));
    }
    const order = Array.from(values.keys()).filter((i) => Number.isFinite(values[i]!)).sort((a, b) => values[b]! - values[a]!);
    let pick: Candidate = order.length > 0 ? cands[order[0]!]! : cands[0]!;
    let pickValue = order.length > 0 ? values[order[0]!]! : -Infinity;
    if (L.dc > 0) {
      const opts = fb ? REFINE_MC : REFINE;
      // Refine the best few, each with its choices held fixed (distinct choice sets first).
      const seen = new Set<string>();
      const starts = order.filter((i) => { const key = cands[i]!.c.join(','); if (seen.has(key)) return false; seen.add(key); return true; }).slice(0, opts.starts);
      for (const i of starts) {
        const c = cands[i]!.c;
        const sc = (v: Float64Array) => score(v, c);
        const res = maximizeInBox(sc, null, [cands[i]!.v], Float64Array.of(values[i]!), { starts: 1, maxIterations: opts.maxIterations });
        if (res.value > pickValue) {
          pick = { v: res.x, c };
          pickValue = res.value;
        }
      }
    }
    fixed.push(Array.from(phi(state, L, pick.v, pick.c)));
    chosen.push(pick);
  }
  return chosen;
}

const clipU = (box: Box, u: number[]) => u.map((v, j) => Math.min(box.upper[j]!, Math.max(box.lower[j]!, v)));
const toPoint = (state: BoState, cd: Candidate): number[] => [...cd.v].map((v, j) => state.box.lower[j]! + v * (state.box.upper[j]! - state.box.lower[j]!)).concat(cd.c);

function fit(state: BoState, L: Layout, history: Observation[]): GpModel {
  const { X, y } = trainingData(state, L, history);
  return fitGp(X, y, { priors: boPriors(), warmStart: state.hyper }).model;
}

export function askBoMixed(state: BoState, ctx: AskContext, count: number): AskResult<BoState> {
  const L = mixedLayout(state);
  const rng = Rng.fromState(state.rng);
  const history = ctx.history;
  if (count <= 0) return { points: [], state };
  if (history.length < 2) {
    const points = Array.from({ length: count }, () => [...clipU(state.box, Array.from(rng.normals(L.dc))), ...sampleChoices(rng, state.categorical!)]);
    return { points, state: { ...state, rng: rng.state() } };
  }
  const { X, y } = trainingData(state, L, history);
  const D = L.dc + L.K.reduce((a, k) => a + k, 0);
  const model = state.hyper && state.hyper.lengthscales.length === D ? buildModel(fromRows(X), y, state.hyper) : fit(state, L, history);
  const bi = bestIndex(history);
  const beta = state.params.beta;
  const w = beta === 0 ? 0 : beta / Math.max(1, state.generation);
  // On a conditional space the incumbent's inactive choices are 0 whatever the point held, so that the
  // local candidates (and everything after them) depend on the active coordinates only.
  const c = choicesOf(history[bi]!.x, L);
  const mask = state.conditions ? activeMask(state.conditions, history[bi]!.x) : null;
  const incumbent = { v: Float64Array.from(X[bi]!.slice(0, L.dc)), c: mask ? c.map((ci, j) => (mask[L.dc + j] ? ci : 0)) : c };
  const picks = selectBatch(state, L, model, rng, ctx.pending, count, incumbent, y[bi]!, w);
  return {
    points: picks.map((cd) => toPoint(state, cd)),
    state: { ...state, rng: rng.state(), hyper: plainHyper(model.hyper) },
  };
}

export function tellBoMixed(state: BoState, ctx: TellContext): BoState {
  const L = mixedLayout(state);
  const history = ctx.history;
  const next: BoState = { ...state, generation: state.generation + 1 };
  if (history.length === 0) return next;
  next.mean = history[bestIndex(history)]!.x.slice(0, L.dc);
  if (history.length < 2) return next;
  const model = fit(state, L, history);
  next.hyper = plainHyper(model.hyper);
  // The model's best evaluated configuration, choices included: `mean` holds only the continuous
  // part, and the choices' prior p_j (which never changes) would name the prior's mode instead.
  next.recommended = recommendation(model, history);
  next.diagnostics = { integral_mean: null, integral_std: null, n_active: history.length };
  return next;
}
