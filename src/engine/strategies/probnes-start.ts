/**
 * The start phase of the ProbNES methods (docs/ALGORITHM.md §29): Powell's model drives the first
 * params.startPhaseLength evaluations, the natural-gradient search (probnes-core.ts) the rest.
 *
 * - Generation 0 is Powell's 2d + 1 stencil μ₀, μ₀ ± Δ₀e_i along the prior's axes (internal coordinates,
 *   where the prior is N(0, I): Δ₀ = one prior standard deviation), handed out as one batch: several
 *   workers evaluate it at once and nothing in it depends on another of its results.
 * - Then each generation is one result (state.generationSize = 1): the model's next point (powell-iteration.ts),
 *   computed from every result reported so far. A worker that asks for one trial at a time therefore gets
 *   Powell's sequence. Workers asking while the model's point is out get points that serve the model
 *   instead of waiting: its next steps as if the pending points had come back at its predictions (the
 *   "kriging believer"), then, when it has none left, the batch-BQ selection from ν (centred at the best
 *   point, conditioned on every pending point); their results join the model's set.
 * - The natural-gradient update (the loop of probnes-core.ts: GP, BQ gradient, μ and Σ) is told the
 *   phase's results q = batch_size at a time, and μ is then moved to the best point so far: Σ and the GP
 *   adapt during the phase, ν stays centred where the model is.
 * - The phase ends when it has used params.startPhaseLength evaluations or Powell's iteration converged
 *   (ρ = ρ_end): the update is told what it has not been told, μ moves to the best point, and from the next
 *   generation on the method is the natural-gradient search, unchanged (hand-over: μ at the best point;
 *   Σ and the GP from everything evaluated).
 */
import { InvalidInputError } from '../errors.js';
import { fromRows, symEig } from '../linalg/index.js';
import { Rng } from '../random/index.js';
import { boxOfBounds, clampToBounds, limitCovToBounds } from './bounds.js';
import { identityRows } from './es-utils.js';
import { bestPoint, initPowell, powellNext, powellObserve, powellStencil, type PowellState } from './powell-iteration.js';
import { quadValue, type Box } from './powell-model.js';
import { rebuildModel, sampleFrom, selectBatch } from './probnes-bq.js';
import type { ProbnesState, StartState } from './probnes-state.js';
import type { AskContext, AskResult, TellContext } from './types.js';

/** Δ₀ (Powell's RHOBEG) in prior standard deviations, and ρ_end (RHOEND). */
export const START_DELTA = 1;
const START_RHO_END = 1e-7;

/** The start state of a fresh study, or null when the phase is off (or has no evaluation to run). */
export function initStart(d: number, length: number, points: number, far: 'newuoa' | 'bobyqa'): StartState | null {
  if (length <= 0) return null;
  return { powell: initPowell(d, START_DELTA, START_RHO_END, 10, points, far), seen: 0, untold: [], stencilAsked: 0, modelAsked: false };
}

/** The size of the phase's generation 0 (the stencil) and of every later one (one result). */
export function startGenerationSize(state: ProbnesState): number {
  return state.generation === 0 ? 2 * state.dim + 1 : 1;
}

/**
 * `n` points from ν given every pending point: the batch-BQ selection of §5 with the GP of the last
 * natural-gradient update, or i.i.d. draws before there is one (or with acquisition "none"). The
 * natural-gradient ask's own selection (probnes-core.ts), and the points that serve the model here.
 * `admissible` (AskContext) thins the candidate pool of batch BQ (selectBatch); plain draws ignore it.
 */
export function batchFromNu(state: ProbnesState, pending: number[][], n: number, rng: Rng, admissible?: (u: number[]) => boolean): number[][] {
  if (n <= 0) return [];
  const p = state.params;
  if (p.acquisition === 'batch-bq' && state.gp !== null) {
    const model = rebuildModel(state.gp.hyper, state.gp.X, state.gp.negYTilde, null, state.gp.knownNoise ?? null);
    return selectBatch(model, state.mean, state.cov, pending, n, p.candidates, rng, { size: p.candidatePool, selection: p.poolSelection }, admissible);
  }
  return sampleFrom(state.mean, state.cov, n, rng);
}

/**
 * ask during the phase: the stencil's next points, then the model's point and serving points. When
 * Powell's iteration has converged (or its set determines no model) there is no model point: serving
 * points only, and the next tell ends the phase.
 */
export function askStart(state: ProbnesState, ctx: AskContext, count: number): AskResult<ProbnesState> {
  const start = structuredClone(state.start!);
  const rng = Rng.fromState(state.rng);
  const box = boxOfBounds(state.bounds);
  const points: number[][] = [];
  if (count > 0 && state.generation === 0) {
    const stencil = powellStencil(state.mean, START_DELTA, box).map((x) => (state.bounds ? clampToBounds(x, state.bounds) : x));
    const take = stencil.slice(start.stencilAsked, start.stencilAsked + count);
    start.stencilAsked += take.length;
    points.push(...take);
  } else if (count > 0 && !start.modelAsked) {
    start.modelAsked = true;
    const x = powellNext(start.powell, box);
    if (x) points.push(x);
  }
  // Workers asking while the model's point is out (params.startPhaseExtras, §29): the model's next points as
  // if the pending ones had come back as predicted, when the phase is the main search; batch BQ from ν for
  // the rest (the stencil's extras, a model with no step left, or a phase that is a short prelude).
  if (state.generation > 0 && state.params.startPhaseExtras === 'model') points.push(...believedModelPoints(start.powell, [...ctx.pending, ...points], count - points.length, box));
  points.push(...batchFromNu(state, [...ctx.pending.map((x) => x.slice()), ...points], count - points.length, rng, ctx.admissible));
  return { points, state: { ...state, rng: rng.state(), start } };
}

/**
 * The model's points for workers that ask while other points are out: every pending point joins a copy of
 * Powell's set at the model's own prediction there (the "kriging believer" of batch Bayesian optimisation,
 * Ginsbourger, Le Riche & Carraro 2010), and the copy's next steps are handed out; the copy is then
 * dropped (the real results replace the beliefs when they come). Fewer than n when the copy has no step left.
 */
function believedModelPoints(powell: PowellState, pending: readonly number[][], n: number, box: Box | null): number[][] {
  if (n <= 0 || !powell.model) return [];
  const pw = structuredClone(powell);
  for (const x of pending) if (pw.model) powellObserve(pw, x, quadValue(pw.model, x));
  const out: number[][] = [];
  const taken = (x: number[]) => [...pending, ...out].some((p) => p.every((v, i) => Math.abs(v - x[i]!) <= 1e-12 * (1 + Math.abs(v))));
  while (out.length < n) {
    const x = powellNext(pw, box);
    if (!x || !pw.model || taken(x)) break;
    out.push(x);
    powellObserve(pw, x, quadValue(pw.model, x));
  }
  return out;
}

/**
 * tell during the phase: every result not yet seen joins Powell's set (the model's own point through
 * its ratio test); q at a time, and at the end of the phase, they go to the natural-gradient update.
 * `naturalTell` is probnes-core.ts's tell of a state without a start phase.
 */
export function tellStart(state: ProbnesState, ctx: TellContext, naturalTell: (s: ProbnesState, c: TellContext) => ProbnesState): ProbnesState {
  const start = structuredClone(state.start!);
  // The history lists every result in completion order and only grows; a shorter one (never seen from
  // the loop) is read from its start again rather than skipped.
  const seen = start.seen <= ctx.history.length ? start.seen : 0;
  const fresh = ctx.history.slice(seen);
  for (const o of fresh) powellObserve(start.powell, o.x, o.y);
  start.seen = seen + fresh.length;
  start.untold.push(...fresh.map((o) => ({ ...o, x: o.x.slice() })));
  start.modelAsked = false;
  // The end: the phase's evaluations used, Powell's iteration converged, or (never seen on a stencil's
  // results) a set that determines no model after the stencil.
  const ends = start.seen >= state.params.startPhaseLength || start.powell.converged || (state.generation > 0 && start.powell.model === null);
  let next: ProbnesState = { ...state, start };
  if (ends || state.generation === 0 || start.untold.length >= state.batchSize) next = syncNatural(next, ctx, naturalTell);
  else next = { ...next, generation: state.generation + 1, meanAsked: false };
  if (ends) return finish(next);
  return { ...next, generationSize: startGenerationSize(next) };
}

/** The natural-gradient update told the untold results; μ to the best point so far (in the box). */
function syncNatural(state: ProbnesState, ctx: TellContext, naturalTell: (s: ProbnesState, c: TellContext) => ProbnesState): ProbnesState {
  const start = state.start!;
  const told = naturalTell({ ...state, start: null }, { batch: start.untold, history: ctx.history });
  const mean = state.params.startPhaseMean === 'best' ? bestMean(state, start.powell) : told.mean;
  return { ...told, mean, start: { ...start, untold: [] } };
}

function bestMean(state: ProbnesState, powell: PowellState): number[] {
  if (powell.points.length === 0) return state.mean.slice();
  const x = bestPoint(powell).x.slice();
  return state.bounds ? clampToBounds(x, state.bounds) : x;
}

/** The phase is over: the natural-gradient search from here on (its own generation size). */
function finish(state: ProbnesState): ProbnesState {
  const { generationSize: _dropped, ...base } = state;
  const rest = state.params.startPhaseTrail && state.start ? { ...base, trail: { powell: state.start.powell, seen: state.start.seen } } : base;
  const floor = state.params.startPhaseCovFloor;
  if (state.params.startPhaseHandover === 'search') return { ...rest, start: null, ...(floor ? { cov: inBox(state, floorCov(state.cov, floor)) } : {}) };
  return { ...rest, start: null, cov: priorCovInBox(state) };
}

/** The prior's Σ (N(0, I) in internal coordinates), no wider than the box: the hand-over's and a restart's (§33). */
export function priorCovInBox(state: ProbnesState): number[][] {
  return inBox(state, identityRows(state.dim));
}

/** The largest eigenvalue of Σ (0 for none positive). */
export function largestVariance(cov: number[][]): number {
  return symEig(fromRows(cov)).values.reduce((a, b) => Math.max(a, b), 0);
}

/** Σ scaled by one factor until its largest eigenvalue is at least `floor` (never shrunk). */
function floorCov(cov: number[][], floor: number): number[][] {
  const top = largestVariance(cov);
  const c = top > 0 && top < floor ? floor / top : 1;
  return cov.map((row) => row.map((v) => v * c));
}

/** A hand-over's Σ no wider than the box (§22), as the search keeps it. */
function inBox(state: ProbnesState, cov: number[][]): number[][] {
  return state.bounds && state.params.covInBounds ? limitCovToBounds(cov, state.bounds) : cov;
}

const isNums = (v: unknown, n: number): boolean => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * A stored start state is what this engine writes (an imported document may hold anything): sizes fixed
 * by d (at most 2d + 1 points of d coordinates, a d × d Hessian), at most startPhaseLength untold
 * results, finite numbers. Throws InvalidInputError otherwise.
 */
export function checkStartState(state: ProbnesState): void {
  const s = state.start as unknown;
  if (s === null) return;
  const d = state.dim;
  const bad = (what: string) => new InvalidInputError(`the stored ProbNES start phase ${what}`);
  if (s === undefined || typeof s !== 'object') throw bad('is missing (version 3 states hold start: null or the phase)');
  const st = s as StartState;
  if (state.params.startPhase !== 'powell') throw bad('runs although params.startPhase is off');
  const pw = st.powell as PowellState | undefined;
  if (!pw || typeof pw !== 'object' || pw.d !== d || pw.m !== state.params.startPhasePoints) throw bad(`must be Powell's iteration in ${d} dimensions with ${state.params.startPhasePoints} points`);
  if (!Array.isArray(pw.points) || pw.points.length > pw.m || !pw.points.every((p) => p && isNums(p.x, d) && typeof p.y === 'number' && Number.isFinite(p.y))) throw bad(`must hold at most ${pw.m} points of ${d} finite coordinates and a finite value`);
  if (pw.model !== null && !(pw.model && isNums(pw.model.centre, d) && isNums(pw.model.g, d) && Array.isArray(pw.model.H) && pw.model.H.length === d && pw.model.H.every((r) => isNums(r, d)) && Number.isFinite(pw.model.c))) throw bad('model must be a quadratic in d dimensions');
  if (![pw.delta, pw.rho, pw.rhoEnd, pw.deltaMax].every((v) => typeof v === 'number' && v > 0 && Number.isFinite(v))) throw bad('radii must be positive numbers');
  if (!Number.isInteger(pw.improve) || pw.improve < -1 || pw.improve >= pw.m || !Array.isArray(pw.errors) || pw.errors.length > 3 || !Number.isInteger(pw.floorFails) || typeof pw.converged !== 'boolean' || (pw.far !== undefined && pw.far !== 'newuoa')) throw bad('iteration state is malformed');
  if (pw.pending !== null && !(pw.pending && isNums(pw.pending.x, d))) throw bad('pending point must have d coordinates');
  if (!Number.isInteger(st.seen) || st.seen < 0 || !Number.isInteger(st.stencilAsked) || st.stencilAsked < 0 || typeof st.modelAsked !== 'boolean') throw bad('counters are malformed');
  if (!Array.isArray(st.untold) || st.untold.length > Math.max(state.params.startPhaseLength, 2 * d + 1) + state.batchSize || !st.untold.every((o) => o && isNums(o.x, d) && Number.isFinite(o.y))) throw bad('untold results are malformed');
}
