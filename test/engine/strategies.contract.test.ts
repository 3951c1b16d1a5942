/**
 * The strategy contract test (ARCHITECTURE.md rule 2, evosax-style): EVERY registered strategy runs
 * here, including those registered later (bo, pibo, prob-*), because the list comes from
 * `registeredMethods()`.
 *
 * Each method runs 30 generations on a shifted sphere and a rotated ellipsoid, in d = 2 and d = 10,
 * with the default batch size λ = 4 + ⌊3 ln d⌋ and the default options, and we check at every step:
 * - the state is plain JSON (numbers finite, arrays, plain objects, strings, booleans, null) with a
 *   `version`, the right method/dim, mean (d) and cov (d×d);
 * - `ask` returns `count` finite points of length d and does not touch the generation counter;
 *   `tell` increments it by exactly one; count is the generation's size (λ, or what lq-CMA-ES
 *   asks for), as the service asks;
 * - inputs are never mutated: states and contexts are deep-frozen before each call (a write throws
 *   in strict-mode code) and deep-compared after it;
 * - a JSON round trip at every step continues identically: a second copy, initialised separately
 *   from the same seed (so this also checks reproducibility from the seed), passes its state through
 *   JSON.parse(JSON.stringify()) before every call, and its asked points must equal the first copy's
 *   exactly; a different seed gives different points.
 *
 * Budget: 30 generations for every method. GP-based methods (bo, pibo, prob-*) run d = 2 only,
 * with q = 3 (the paper's batch size, ALGORITHM.md §6) and fewer acquisition candidates / Monte Carlo
 * samples (BUDGET below): one of their generations costs a GP fit plus an acquisition
 * optimisation, and with the defaults d = 2 alone took ~40 s per (method, problem) for bo and pibo
 * (measured), minutes in CI for no extra contract coverage. The contract does not depend on the
 * dimension or on these option values; the methods' own tests cover d = 10 and the defaults.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy, registeredMethods, resolveOptions, STRATEGIES, type MethodName } from '../../src/engine/strategies/registry.js';
import type { OptionSpec, OptionValue } from '../../src/engine/strategies/options.js';
import { generationSize, type BaseState, type Observation } from '../../src/engine/strategies/types.js';
import { rotation } from '../helpers/numeric.js';

const GENERATIONS = 30;
type Budget = { dims: number[]; batchSize?: number; options?: Record<string, number> };
const GP_BUDGET: Budget = { dims: [2], batchSize: 3, options: { candidates: 100 } };
const BO_BUDGET: Budget = { dims: [2], batchSize: 3, options: { candidates: 100, mc_samples: 32 } };
const BUDGET: Partial<Record<MethodName, Budget>> = {
  bo: BO_BUDGET,
  pibo: BO_BUDGET,
  'prob-cmaes': GP_BUDGET,
  'prob-xnes': GP_BUDGET,
  'prob-snes': GP_BUDGET,
};
const DEFAULT_BUDGET: Budget = { dims: [2, 10] };

type Problem = { name: string; f: (x: number[]) => number };
function problems(d: number): Problem[] {
  const R = rotation(d, 17);
  const c = Array.from({ length: d }, (_, i) => 0.5 - i / (2 * d)); // optimum away from the prior mean
  return [
    { name: 'sphere', f: (x) => x.reduce((s, xi, i) => s + (xi - c[i]) ** 2, 0) },
    {
      name: 'rotated ellipsoid',
      f: (x) =>
        R.reduce((s, row, i) => {
          const r = row.reduce((t, rij, j) => t + rij * (x[j] - c[j]), 0);
          return s + 10 ** ((3 * i) / Math.max(d - 1, 1)) * r * r;
        }, 0),
    },
  ];
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/** Plain JSON with finite numbers only: no typed arrays, class instances, undefined, NaN or ±∞. */
function assertPlainFiniteJson(v: unknown, path = 'state'): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`${path} = ${v} is not finite`);
    return;
  }
  if (Array.isArray(v)) return v.forEach((e, i) => assertPlainFiniteJson(e, `${path}[${i}]`));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, e] of Object.entries(v as object)) assertPlainFiniteJson(e, `${path}.${k}`);
    return;
  }
  throw new Error(`${path} is not plain JSON (${typeof v} ${Object.prototype.toString.call(v)})`);
}

function checkState(s: BaseState, method: MethodName, d: number): void {
  assertPlainFiniteJson(s);
  expect(typeof s.version).toBe('number');
  expect(s.method).toBe(method);
  expect(s.dim).toBe(d);
  expect(s.mean).toHaveLength(d);
  expect(s.cov).toHaveLength(d);
  for (const row of s.cov) expect(row).toHaveLength(d);
}

const roundTrip = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Calls fn on deep-frozen inputs and checks they are unchanged afterwards. */
function pure<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
  const before = structuredClone(args);
  deepFreeze(args);
  const out = fn(...args);
  expect(args).toStrictEqual(before);
  return out;
}

describe.each(registeredMethods())('strategy contract: %s', (method) => {
  const strategy = getStrategy(method);
  const { dims, batchSize, options = {} } = BUDGET[method] ?? DEFAULT_BUDGET;
  const cases = dims.flatMap((d) => problems(d).map((p) => ({ d, p })));

  it.each(cases)('d = $d, $p.name: 30 generations, pure, JSON round trip, reproducible', async ({ d, p }) => {
    const lambda = batchSize ?? 4 + Math.floor(3 * Math.log(d));
    const spec = { dim: d, batchSize: lambda, options: resolveOptions(method, d, options), box: null };
    const seed = 1234 + d;
    // The Rng argument is a mutable cursor that init consumes; only the spec is an input to keep.
    let a = pure((sp: typeof spec) => strategy.init(sp, Rng.fromSeed(seed)), spec);
    let b = roundTrip(strategy.init(structuredClone(spec), Rng.fromSeed(seed)));
    const other = strategy.ask(strategy.init(structuredClone(spec), Rng.fromSeed(seed + 1)), { history: [], pending: [] }, lambda);
    checkState(a, method, d);
    expect(a.generation).toBe(0);

    const history: Observation[] = [];
    for (let g = 0; g < GENERATIONS; g++) {
      const count = generationSize(a);
      expect(count).toBeGreaterThanOrEqual(1);
      // λ, or the ProbNES start phase's stencil of 2d + 1 points (ALGORITHM.md §29).
      expect(count).toBeLessThanOrEqual(Math.max(lambda, 2 * d + 1));
      const askA = pure(strategy.ask, a, { history: structuredClone(history), pending: [] }, count);
      const askB = strategy.ask(roundTrip(b), { history: structuredClone(history), pending: [] }, count);
      expect(askA.points).toHaveLength(count);
      for (const x of askA.points) {
        expect(x).toHaveLength(d);
        expect(x.every(Number.isFinite)).toBe(true);
      }
      expect(askB.points).toEqual(askA.points);
      if (g === 0) expect(other.points).not.toEqual(askA.points);
      expect(askA.state.generation).toBe(a.generation);
      checkState(askA.state, method, d);

      const batch = askA.points.map((x) => ({ x: x.slice(), y: p.f(x) }));
      history.push(...structuredClone(batch));
      const next = pure(strategy.tell, askA.state, { batch: structuredClone(batch), history: structuredClone(history) });
      b = strategy.tell(roundTrip(askB.state), { batch: structuredClone(batch), history: structuredClone(history) });
      expect(next.generation).toBe(a.generation + 1);
      checkState(next, method, d);
      expect(JSON.stringify(b)).toBe(JSON.stringify(next));
      a = next;
      // Let the test runner's RPC through: the GP methods keep the event loop busy for seconds.
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(a.generation).toBe(GENERATIONS);
  });
});

/** Whether a value is one the option's spec accepts (the API's rule, written out independently). */
function accepts(spec: OptionSpec, v: OptionValue): boolean {
  switch (spec.kind) {
    case 'number':
      return typeof v === 'number' && (spec.exclusiveMin ? v > spec.min : v >= spec.min) && v <= spec.max && (!spec.integer || Number.isInteger(v));
    case 'enum':
      return typeof v === 'string' && spec.values.includes(v);
    case 'boolean':
      return typeof v === 'boolean';
  }
}

describe.each(registeredMethods())('descriptor: %s', (method) => {
  const descriptor = STRATEGIES[method];

  it('is registered under its own name', () => {
    expect(descriptor.name).toBe(method);
    expect(getStrategy(method)).toBe(descriptor);
  });

  it.each([
    [2, 'default'],
    [10, 'paper'],
  ])('d = %i, profile %s: every default is a declared option with an accepted value', (d, profile) => {
    const defaults = descriptor.defaults(d, profile);
    for (const [key, value] of Object.entries(defaults)) {
      const spec = descriptor.options[key];
      expect(spec, `default ${key} is not a declared option`).toBeDefined();
      expect(accepts(spec!, value), `default ${key} = ${String(value)}`).toBe(true);
    }
  });

  it('writes states of its declared version and enforces its minimum batch', () => {
    const spec = (batchSize: number) => ({ dim: 2, batchSize, options: resolveOptions(method, 2), box: null });
    expect(descriptor.init(spec(descriptor.minBatch), Rng.fromSeed(1)).version).toBe(descriptor.stateVersion);
    expect(() => descriptor.init(spec(descriptor.minBatch - 1), Rng.fromSeed(1))).toThrow(/batch size/);
  });
});
