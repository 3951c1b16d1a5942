/**
 * Conditional coordinates in the engine (distributions/conditional.ts, ALGORITHM.md §30): the
 * checks of InitSpec.conditions, which coordinates are active, and the GP methods' imputation.
 *
 * Evidence for the imputation: two histories that differ only in the values of inactive
 * coordinates must be the same data to a GP method, so the same seed gives the same state (ProbNES:
 * GP inputs, μ, Σ, q) and the same asked points (BO, πBO), bit for bit. Without imputation the
 * inactive values enter φ and everything downstream differs (checked: the same histories with the
 * conditions left out differ).
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy, METHOD_NAMES, resolveOptions, type MethodName } from '../../src/engine/strategies/registry.js';
import { activeMask, checkConditions, impute } from '../../src/engine/distributions/conditional.js';
import type { InitSpec, Observation } from '../../src/engine/strategies/types.js';

// Layout: u0 (always), u1 (active when c0 = 1), then c0 ∈ {0, 1, 2}, c1 ∈ {0, 1} (active when c0 = 2),
// u1 nested no further; a second level: none here, see activeMask's test.
const K = [3, 2];
const DC = 2;
const CONDITIONS = [
  { index: 1, parent: 2, values: [1] },
  { index: 3, parent: 2, values: [2] },
];

describe('checkConditions', () => {
  it.each([
    ['a parent that is not categorical', [{ index: 1, parent: 0, values: [0] }], 'another categorical coordinate'],
    ['a parent that is the coordinate', [{ index: 2, parent: 2, values: [0] }], 'another categorical coordinate'],
    ['a value the parent lacks', [{ index: 1, parent: 2, values: [3] }], 'choice indices'],
    ['no values', [{ index: 1, parent: 2, values: [] }], 'choice indices'],
    ['a coordinate twice', [{ index: 1, parent: 2, values: [1] }, { index: 1, parent: 3, values: [1] }], 'distinct'],
    ['a child before its parent', [{ index: 1, parent: 3, values: [1] }, { index: 3, parent: 2, values: [2] }], 'parents first'],
  ])('refuses %s', (_what, conditions, message) => {
    expect(() => checkConditions(conditions, DC, K)).toThrow(message);
  });

  it('accepts parents first and copies the values', () => {
    const given = [{ index: 3, parent: 2, values: [2] }, { index: 1, parent: 3, values: [1] }];
    const out = checkConditions(given, DC, K);
    expect(out).toEqual(given);
    expect(out[0]!.values).not.toBe(given[0]!.values);
  });
});

describe('activeMask', () => {
  it('follows the parents, to any depth', () => {
    const nested = [{ index: 3, parent: 2, values: [2] }, { index: 1, parent: 3, values: [1] }];
    expect(activeMask(nested, [0, 0, 2, 1])).toEqual([true, true, true, true]);
    expect(activeMask(nested, [0, 0, 2, 0])).toEqual([true, false, true, true]);
    // c1 = 1 but c1 itself is inactive: its child is inactive too.
    expect(activeMask(nested, [0, 0, 0, 1])).toEqual([true, false, true, false]);
  });

  it('imputes inactive continuous columns and zeroes inactive one-hot blocks', () => {
    const phi = [0.5, 0.7, 0, 0, 1, 1, 0];
    expect(impute(phi, [true, false, true, false], DC, K, [9, 8])).toEqual([0.5, 8, 0, 0, 1, 0, 0]);
    expect(impute(phi, [true, true, true, true], DC, K, [9, 8])).toBe(phi);
  });
});

const point = (u0: number, u1: number, c0: number, c1: number) => [u0, u1, c0, c1];
const f = (x: number[]) => (x[0]! - 0.5) ** 2 + (x[2] === 1 ? (x[1]! - 1) ** 2 : 0.5) + (x[2] === 2 ? 0.1 * x[3]! : 0);

/** A history, and its twin: the same points with other values in the inactive coordinates. */
function histories(): [Observation[], Observation[]] {
  const rng = Rng.fromSeed(4);
  const a: Observation[] = [];
  const b: Observation[] = [];
  for (let i = 0; i < 12; i++) {
    const c0 = i % 3, c1 = (i >> 1) % 2;
    const x = point(rng.normal(), rng.normal(), c0, c1);
    const twin = [...x];
    if (c0 !== 1) twin[1] = rng.normal() * 3; // u1 inactive
    if (c0 !== 2) twin[3] = 1 - c1; // c1 inactive
    a.push({ x, y: f(x) });
    b.push({ x: twin, y: f(x) });
  }
  return [a, b];
}

function spec(method: MethodName, conditions: boolean): InitSpec {
  const options = resolveOptions(method, DC + K.length, method === 'bo' || method === 'pibo' ? { candidates: 64, mc_samples: 16 } : {});
  return { dim: DC + K.length, batchSize: 3, options, box: { lower: [-3, -3, 0, 0], upper: [3, 3, 2, 1] }, categories: [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5]], ...(conditions ? { conditions: CONDITIONS } : {}) };
}

describe('the GP methods model f as independent of inactive coordinates', () => {
  it.each(['prob-cmaes', 'prob-xnes', 'prob-snes'] as MethodName[])('%s: the same update from either history', (method) => {
    const s = getStrategy(method);
    const [a, b] = histories();
    const run = (h: Observation[], withConditions: boolean) => s.tell(s.init(spec(method, withConditions), Rng.fromSeed(1)), { batch: h.slice(-3), history: h });
    const sa = run(a, true), sb = run(b, true);
    const gp = (st: object) => (st as { gp: { X: number[][] } }).gp.X;
    expect(gp(sa)).toEqual(gp(sb));
    expect(sa.mean).toEqual(sb.mean);
    expect(sa.cov).toEqual(sb.cov);
    expect(sa.categorical).toEqual(sb.categorical);
    // The inactive coordinate's column is the imputed constant 0 wherever u1 is inactive.
    a.forEach((o, k) => {
      const j = (sa as unknown as { gp: { activeIdx: number[] } }).gp.activeIdx.indexOf(k);
      if (j >= 0 && o.x[2] !== 1) expect(gp(sa)[j]![1]).toBe(0);
    });
    // Without the conditions the inactive values are data: the updates differ.
    expect(run(a, false).mean).not.toEqual(run(b, false).mean);
    expect(JSON.parse(JSON.stringify(sa))).toEqual(sa);
  });

  it.each(['bo', 'pibo'] as MethodName[])('%s: the same points asked after either history', (method) => {
    const s = getStrategy(method);
    const [a, b] = histories();
    const ask = (h: Observation[], withConditions: boolean) => s.ask(s.init(spec(method, withConditions), Rng.fromSeed(2)), { history: h, pending: [] }, 2).points;
    expect(ask(a, true)).toEqual(ask(b, true));
    expect(ask(a, false)).not.toEqual(ask(b, false));
  });

  it('estimates at the mean see the imputed point (prob-cmaes)', () => {
    const s = getStrategy('prob-cmaes');
    const [a] = histories();
    const st = s.tell(s.init(spec('prob-cmaes', true), Rng.fromSeed(1)), { batch: a.slice(-3), history: a });
    const e = s.estimate!(st, a);
    expect(Number.isFinite(e.predicted)).toBe(true);
  });
});

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

describe('the strategy contract on a conditional space', () => {
  // Every method that takes categorical parameters, hence conditional spaces.
  const METHODS = METHOD_NAMES.filter((m) => getStrategy(m).categorical === true);
  it('covers the evolution strategies with CatCMA\'s categorical part', () => {
    expect(METHODS).toEqual(expect.arrayContaining(['cmaes', 'xnes', 'snes']));
  });
  it.each(METHODS)('%s: frozen inputs, a JSON round trip at every step, the same points from the same seed', (method) => {
    const s = getStrategy(method);
    const run = (roundTrip: boolean) => {
      let state = s.init(deepFreeze(spec(method, true)), Rng.fromSeed(6));
      const history: Observation[] = [];
      const asked: number[][] = [];
      for (let g = 0; g < 4; g++) {
        if (roundTrip) state = JSON.parse(JSON.stringify(state));
        const a = s.ask(deepFreeze(state), deepFreeze({ history: [...history], pending: [] }), 3);
        state = a.state;
        for (const x of a.points) {
          expect(x).toHaveLength(DC + K.length);
          expect(x.every(Number.isFinite)).toBe(true);
          asked.push(x);
        }
        const batch = a.points.map((x) => ({ x: x.map((v, k) => (k < DC ? v : Math.round(v))), y: f(x.map((v, k) => (k < DC ? v : Math.round(v)))) }));
        history.push(...batch);
        if (roundTrip) state = JSON.parse(JSON.stringify(state));
        state = s.tell(deepFreeze(state), deepFreeze({ batch, history: [...history] }));
      }
      return asked;
    };
    expect(run(true)).toEqual(run(false));
  });
});
