/**
 * Helpers shared by the baseline evolution strategies (CMA-ES, XNES, SNES, random search):
 * validation of a told batch, rank orders, the NES utilities of ALGORITHM.md §6, and the guards
 * that keep non-finite numbers out of a state (ALGORITHM.md §8).
 *
 * Glossary: d = dimension, λ = batch size, a point is number[] of length d, y its value (minimised).
 */
import { InvalidInputError, NonFiniteError } from '../errors.js';
import type { Diagnostics, Observation } from './types.js';
import type { Options } from './options.js';
import type { BaseState, StoredState } from './types.js';

export const NO_DIAGNOSTICS: Diagnostics = { integral_mean: null, integral_std: null, n_active: null };

/** Throws unless the told batch is non-empty, of dimension d and finite (§8: NaN never enters the state). */
export function checkBatch(batch: readonly Observation[], d: number, method: string): void {
  if (!Array.isArray(batch) || batch.length === 0) throw new InvalidInputError(`${method}: tell needs at least one observation`);
  for (const [k, o] of batch.entries()) {
    if (!Array.isArray(o.x) || o.x.length !== d) throw new InvalidInputError(`${method}: batch[${k}].x must have length ${d}`);
    if (!o.x.every(Number.isFinite)) throw new InvalidInputError(`${method}: batch[${k}].x is not finite`);
    if (!Number.isFinite(o.y)) throw new InvalidInputError(`${method}: batch[${k}].y = ${o.y} is not finite`);
  }
}

/** Throws unless `count` is a non-negative integer. */
export function checkCount(count: number, method: string): void {
  if (!Number.isInteger(count) || count < 0) throw new InvalidInputError(`${method}: ask count must be a non-negative integer, got ${count}`);
}

/**
 * The same point up to rounding: a point the engine asked for comes back as the domain stored it (re-encoded
 * from user units), so an exact comparison could miss it. Relative tolerance 1e-9 on `a`'s coordinates.
 */
export function samePoint(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) <= 1e-9 * (1 + Math.abs(v)));
}

/** Batch indices sorted best (smallest y) first; ties keep the asked order (Array.sort is stable). */
export function orderBestFirst(batch: readonly Observation[]): number[] {
  return batch.map((_, i) => i).sort((a, b) => batch[a].y - batch[b].y);
}

/**
 * NES fitness shaping (ALGORITHM.md §6; Wierstra et al. 2014, eq. (7)): for rank r = 0 (worst) …
 * λ−1 (best), u_r = max(0, ln(λ/2 + 1) − ln(λ − r)), normalised to sum 1, minus 1/λ. The result
 * sums to 0, so adding a constant to f changes nothing. Returned indexed by rank (worst first).
 */
export function nesUtilitiesByRank(lambda: number): number[] {
  if (!Number.isInteger(lambda) || lambda < 1) throw new InvalidInputError(`NES utilities need λ ≥ 1, got ${lambda}`);
  const raw = Array.from({ length: lambda }, (_, r) => Math.max(0, Math.log(lambda / 2 + 1) - Math.log(lambda - r)));
  const total = raw.reduce((s, v) => s + v, 0);
  return raw.map((v) => v / total - 1 / lambda);
}

/** The utility of each batch entry (indexed like the batch): the best point gets the largest. */
export function nesUtilities(batch: readonly Observation[]): number[] {
  const lambda = batch.length;
  const byRank = nesUtilitiesByRank(lambda);
  const out = new Array<number>(lambda).fill(0);
  // orderBestFirst()[j] has rank λ−1−j (rank 0 is the worst).
  orderBestFirst(batch).forEach((idx, j) => (out[idx] = byRank[lambda - 1 - j]));
  return out;
}

/** Throws a typed error when an update produced a non-finite number (overflow in exp, expm, …). */
export function assertFinite(values: ArrayLike<number>, what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new NonFiniteError(`${what} became non-finite`);
  }
}

export function assertFiniteRows(rows: readonly (readonly number[])[], what: string): void {
  for (const r of rows) assertFinite(r, what);
}

/** A numeric option, or the fallback when absent; bad types or non-positive values are input errors. */
export function positiveOption(options: Options, key: string, fallback: number): number {
  const v = options[key] ?? fallback;
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) throw new InvalidInputError(`option ${key} must be a positive number, got ${String(v)}`);
  return v;
}

export function checkDim(dim: number, batchSize: number, method: string, minBatch = 1): void {
  if (!Number.isInteger(dim) || dim < 1) throw new InvalidInputError(`${method}: dim must be a positive integer, got ${dim}`);
  if (!Number.isInteger(batchSize) || batchSize < minBatch) {
    throw new InvalidInputError(`${method}: batch size must be an integer ≥ ${minBatch}, got ${batchSize}`);
  }
}

export function zerosVec(d: number): number[] {
  return new Array<number>(d).fill(0);
}

export function identityRows(d: number, scale = 1): number[][] {
  return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? scale : 0)));
}

/**
 * The migration of a strategy whose change at version 2 was its parameters: a version-1 state kept
 * the options and read them by name (with the same fallbacks as `params` now applies), version 2
 * keeps `params`, resolved from them once. Fields a later version added come from `added`, the
 * values that keep an older state's behaviour (XNES and SNES version 3: `bounds` null).
 */
export function migrateOptionsState<S extends BaseState>(method: string, current: number, stored: StoredState, params: (options: Options) => S['params'], added: Partial<S> = {}): S {
  if (stored.version === current) return stored as unknown as S;
  if (stored.version === 1) {
    const { options, ...rest } = stored as StoredState & { options?: Options };
    return { ...added, ...(rest as unknown as Omit<S, 'params'>), version: current, params: params(options ?? {}) } as S;
  }
  // Versions between 1 and the current one differ from it only by the fields in `added`.
  if (typeof stored.version === 'number' && stored.version > 1 && stored.version < current) return { ...added, ...(stored as unknown as S), version: current };
  throw new InvalidInputError(`${method} reads engine states of versions 1 to ${current}, not ${String(stored.version)}`);
}

/** XNES's and SNES's parameters, resolved once at init: the step sizes η_μ and η_Σ (η_σ, η_M). */
export interface NesParams {
  readonly etaMean: number;
  readonly etaCov: number;
}

/** The parameters for `options` (learning_rate_mean defaults to 1, learning_rate_cov to the method's default for d). */
export function nesParams(options: Options, etaCovDefault: number): NesParams {
  return Object.freeze({ etaMean: positiveOption(options, 'learning_rate_mean', 1), etaCov: positiveOption(options, 'learning_rate_cov', etaCovDefault) });
}
