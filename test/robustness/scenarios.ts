/**
 * The numerically hostile studies every method must survive. Each is a small
 * study (d = 2 or 3) whose objective or geometry stresses one part of the pipeline: the
 * standardisation of y, the GP fit, the ranking of the evolution strategies, the projection onto
 * the bounds and the transforms.
 */
import { expect } from 'vitest';
import { methodFacts, STRATEGIES, type MethodName } from '../../src/engine/index.js';
import type { Params, Scenario } from './harness.js';

const sphere = (p: Params, centre: Params = {}) => Object.entries(p).reduce((s, [k, v]) => s + (v - (centre[k] ?? 0)) ** 2, 0);

const box2: Scenario['parameters'] = [
  { name: 'x', bounds: [-5, 5] },
  { name: 'y', bounds: [-5, 5] },
];

/** Options that only set how much work a step does: left at the harness's cheap values. */
const COST_OPTIONS = new Set(['candidates', 'mc_samples', 'gradient_samples', 'gp_restarts']);

/**
 * Every option of the method at an extreme the API accepts (its descriptor, so a new option is
 * covered without touching this file): numbers at their maximum or just above/at their minimum,
 * enums at their first or last value, booleans true or false. The cost options stay cheap.
 */
export function extremeOptions(method: MethodName, which: 'max' | 'min' | 'alt'): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const [key, spec] of Object.entries(STRATEGIES[method].options)) {
    if (COST_OPTIONS.has(key)) continue;
    if (spec.kind === 'number') out[key] = which === 'max' ? spec.max : spec.exclusiveMin ? spec.min + 1e-6 * (spec.max - spec.min) : spec.min;
    else if (spec.kind === 'enum') out[key] = which === 'alt' ? spec.values[spec.values.length - 1]! : spec.values[0]!;
    else out[key] = which !== 'alt';
  }
  // A sampled gradient (an `alt` enum) draws gradient_samples points: its minimum keeps it cheap.
  if ('gradient_samples' in STRATEGIES[method].options) out.gradient_samples = 10;
  return out;
}

/** Hostile objective values: constant, spread over 1e12 and beyond, 1e-12 differences, repeats. */
export const VALUE_SCENARIOS: Scenario[] = [
  {
    // Every value equal: ranks are all ties, the standardised targets are 0/0, the GP sees no signal.
    name: 'constant',
    parameters: box2,
    objective: () => 3.7,
    finally: (_handed, method, generations) => {
      // The ProbNES methods hand out μ first in every natural-gradient generation (default profile);
      // with no signal the mean stalls, so the same point is suggested and reported again and again.
      // Those are the generations of batch_size 3 after Powell's start phase (ALGORITHM.md §29: its
      // generations are the stencil of 2d + 1 = 5, then one result each; on a constant objective it
      // ends early, its trust region shrinking to ρ_end).
      if (methodFacts(method).family !== 'probnes') return;
      const natural = generations.findIndex((g, i) => i > 0 && g.size === 3);
      expect(natural, generations.map((g) => g.size).join(' ')).toBeGreaterThan(0);
      expect(generations.slice(natural).every((g) => g.size === 3), generations.map((g) => g.size).join(' ')).toBe(true);
      const means = generations.slice(natural).map((g) => `${g.handed[0]!.x},${g.handed[0]!.y}`);
      expect(means.length, 'natural-gradient generations').toBeGreaterThanOrEqual(4);
      expect(new Set(means.slice(1)).size, means.join(' ')).toBe(1);
    },
  },
  {
    // A constant objective over an int and a log-scaled parameter.
    name: 'constant-int-log',
    parameters: [
      { name: 'n', type: 'int', bounds: [1, 64] },
      { name: 'lr', scale: 'log', bounds: [1e-6, 1e-1] },
    ],
    objective: () => -42,
  },
  {
    // Values spread over 13 orders of magnitude: f = exp(30·x) on x ∈ [0, 1] spans 1 … 1.07e13.
    name: 'spread-exp',
    parameters: [
      { name: 'x', bounds: [0, 1] },
      { name: 'y', bounds: [-1, 1] },
    ],
    objective: (p) => Math.exp(30 * p.x!) + p.y! ** 2,
  },
  {
    // A cliff: 1e12·(1 + sphere) on one half-plane, 1e-6·sphere on the other.
    name: 'spread-cliff',
    parameters: box2,
    objective: (p) => (p.x! > 0 ? 1e12 * (1 + sphere(p)) : 1e-6 * sphere(p)),
  },
  {
    // Values spread over 1e12 with a log-scaled parameter: f = (lr·1e6)² for lr ∈ [1e-9, 1e-3].
    name: 'spread-log',
    parameters: [
      { name: 'lr', scale: 'log', bounds: [1e-9, 1e-3] },
      { name: 'x', bounds: [-1, 1] },
    ],
    objective: (p) => (p.lr! * 1e6) ** 2 + p.x! ** 2,
  },
  {
    // Finite values near the top of the double range: squares of deviations overflow.
    name: 'huge-1e200',
    parameters: box2,
    objective: (p) => 1e200 * sphere(p, { x: 2, y: 0 }),
  },
  {
    // The whole double range: ±1.7e308 on either side of x = 0 (the spread itself overflows).
    name: 'extreme-range',
    parameters: box2,
    objective: (p) => (p.x! > 0 ? 1.7e308 : -1.7e308),
  },
  {
    // Subnormal values: 1e-310·sphere (every value below the smallest normal double, 2.2e-308).
    name: 'subnormal',
    parameters: box2,
    objective: (p) => 1e-310 * sphere(p),
  },
  {
    // Differences of 1e-12 on top of 1: f = 1 + 1e-12·sphere (about 1e4 ulps of 1 across the box).
    name: 'tiny-differences',
    parameters: box2,
    objective: (p) => 1 + 1e-12 * sphere(p, { x: 1, y: -2 }),
  },
  {
    // The same external point reported with the same value five times per generation, on top of
    // the suggested trials: duplicated inputs in every GP and ES history.
    name: 'repeated-external',
    parameters: box2,
    objective: (p) => sphere(p, { x: 1, y: 1 }),
    extra: () => Array.from({ length: 5 }, () => ({ parameters: { x: 0.5, y: -0.25 }, value: 1.8125 })),
  },
  {
    // The same external point reported again and again with different values (a noisy
    // evaluation): duplicated inputs with conflicting outputs.
    name: 'repeated-external-conflicting',
    parameters: box2,
    objective: (p) => sphere(p, { x: -1, y: 2 }),
    extra: (g) => [0, 1, 2, 3].map((k) => ({ parameters: { x: 2, y: 2 }, value: 9 + ((g + k) % 3) })),
  },
  {
    // Two int parameters with two values each: at most four distinct points, so suggestions
    // repeat exactly and the mean stalls between them.
    name: 'repeated-int-grid',
    parameters: [
      { name: 'a', type: 'int', bounds: [0, 1] },
      { name: 'b', type: 'int', bounds: [0, 1] },
    ],
    objective: (p) => p.a! + 2 * p.b!,
    finally: (handed) => {
      // Pigeonhole: more points than distinct values, so the scenario really repeats points.
      expect(new Set(handed.map((h) => `${h.a},${h.b}`)).size).toBeLessThanOrEqual(4);
      expect(handed.length).toBeGreaterThan(4);
    },
  },
];

/** Hostile geometry: priors far away or mostly cut off, extreme scales and options, odd batches. */
export const GEOMETRY_SCENARIOS: Scenario[] = [
  {
    // The prior sits in one corner of a wide box (std 1), the optimum in the opposite corner, 1800
    // prior standard deviations away.
    name: 'prior-far',
    parameters: [
      { name: 'x', bounds: [-1000, 1000], prior: { mean: 900, std: 1 } },
      { name: 'y', bounds: [-1000, 1000], prior: { mean: 900, std: 1 } },
    ],
    objective: (p) => sphere(p, { x: -900, y: -900 }),
  },
  {
    // No bounds at all, the optimum 1e4 prior standard deviations from the prior mean.
    name: 'prior-far-unbounded',
    parameters: [
      { name: 'x', prior: { mean: 0, std: 1 } },
      { name: 'y', prior: { mean: 0, std: 1 } },
    ],
    objective: (p) => sphere(p, { x: 1e4, y: -1e4 }),
  },
  {
    // A box of ±0.05 prior std around the prior mean holds ≈ 0.4% of each parameter's prior mass
    // (2Φ(0.05) − 1 ≈ 0.0399), so ≈ 0.0016% of the joint mass: almost every draw is projected
    // onto the box's faces and corners, where many suggestions coincide.
    name: 'bounds-cut-prior',
    parameters: [
      { name: 'x', bounds: [-0.5, 0.5], prior: { mean: 0, std: 10 } },
      { name: 'y', bounds: [-0.5, 0.5], prior: { mean: 0, std: 10 } },
    ],
    objective: (p) => sphere(p, { x: 0.3, y: -0.1 }),
  },
  {
    // The same with an int and a log-scaled parameter: the box keeps < 1% of the prior mass.
    name: 'bounds-cut-prior-int-log',
    parameters: [
      { name: 'n', type: 'int', bounds: [10, 12], prior: { mean: 11, std: 100 } },
      { name: 'lr', scale: 'log', bounds: [1e-3, 1.1e-3], prior: { mean: Math.log(1.05e-3), std: 5 } },
      { name: 'x', bounds: [0.99, 1], prior: { mean: 0.995, std: 1 } },
    ],
    objective: (p) => (p.n! - 11) ** 2 + (p.lr! * 1e3 - 1.02) ** 2 + p.x!,
  },
  ...(['max', 'min', 'alt'] as const).map((which): Scenario => ({
    // Options at their extremes, on values spread over 1e12 with a mostly cut-off prior.
    name: `options-${which}`,
    parameters: [
      { name: 'x', bounds: [-0.5, 0.5], prior: { mean: 0, std: 20 } },
      { name: 'y', bounds: [-5, 5] },
    ],
    objective: (p) => (p.x! > 0 ? 1e12 : 1) * (1 + sphere(p, { x: 0.1, y: 1 })),
    options: (method) => extremeOptions(method, which),
  })),
  {
    // Prior scales near the accepted limits (std ≈ 1e±150; validation refuses beyond 1e±154) and a
    // log parameter between 1e-300 and 1e-290: the transforms and the reported covariance span
    // 600 orders of magnitude.
    name: 'extreme-prior-scales',
    parameters: [
      { name: 'big', prior: { mean: 0, std: 1e150 } },
      { name: 'small', prior: { mean: 1, std: 1e-150 } },
      { name: 'lx', scale: 'log', bounds: [1e-300, 1e-290] },
    ],
    objective: (p) => Math.abs(p.big! / 1e150) + (p.small! - 1) * 1e150 + Math.log(p.lx!),
  },
  {
    // One point per generation: the documented 400 (/batch_size) for the rank-based methods, a
    // study like any other for the rest (ProbNES hands out μ every other generation then).
    name: 'batch-1',
    parameters: box2,
    objective: (p) => sphere(p, { x: 3, y: 3 }),
    batchSize: 1,
  },
  {
    // Seven points per request for a batch of three: four extras per generation, conditioned on
    // the pending points, over an int grid of six points that forces exact repeats.
    name: 'extras-int-grid',
    parameters: [
      { name: 'a', type: 'int', bounds: [0, 1] },
      { name: 'b', type: 'int', bounds: [0, 2] },
    ],
    objective: (p) => p.a! * 1e12 + p.b!,
    count: 7,
  },
  {
    // A joint prior with correlation 0.999 (its Cholesky factor is far from diagonal, so the box
    // is not a box in internal coordinates) whose box keeps < 1% of the prior mass: projection
    // onto the bounds moves points across the prior's thin direction.
    name: 'correlated-prior-cut',
    parameters: [
      { name: 'x', bounds: [-0.2, 0.2] },
      { name: 'y', bounds: [-0.2, 0.2] },
    ],
    prior: { mean: [0, 0], covariance: [[100, 99.9], [99.9, 100]] },
    objective: (p) => sphere(p, { x: 0.15, y: -0.15 }),
  },
  {
    // d = 5 with int, log and float parameters, spread values and a prior mostly cut off.
    name: 'mixed-5d-cut-spread',
    parameters: [
      { name: 'a', type: 'int', bounds: [0, 3], prior: { mean: 1, std: 50 } },
      { name: 'b', type: 'int', scale: 'log', bounds: [1, 4], prior: { mean: 0.5, std: 20 } },
      { name: 'lr', scale: 'log', bounds: [1e-7, 1e-1], prior: { mean: Math.log(1e-4), std: 100 } },
      { name: 'x', bounds: [-1e-3, 1e-3], prior: { mean: 0, std: 1 } },
      { name: 'y', bounds: [-1e6, 1e6], prior: { mean: 5e5, std: 1e3 } },
    ],
    objective: (p) => Math.exp(25 * (p.a! + Math.log(p.b!))) * (1 + p.x! ** 2) + (p.lr! * 1e7) ** 2 + 1e-6 * Math.abs(p.y!),
  },
];

export const SCENARIOS: Scenario[] = [...VALUE_SCENARIOS, ...GEOMETRY_SCENARIOS];
