/**
 * A stopped trial as the model sees it (src/domain/results/stopped.ts, ALGORITHM.md §31): the worse
 * of its last value and the median of the unstopped results completed before it.
 *
 * - ModelHistory against the definition computed by brute force (sort the prefix, take its median),
 *   in both directions, with forks that do not change the original;
 * - every method that reads values: a trial stopped with a low last value no longer pulls the search
 *   toward it. A study on f(x) = ‖x − a‖² runs three generations; in the third, the point farthest
 *   from a is stopped with a last value below every result so far (a curve cut short that looked
 *   good, or an intermediate metric on another scale). Told as a finished result, it draws each
 *   method's next distribution (BO and πBO: their incumbent) toward it; read as §31 says, it does not.
 */
import { describe, expect, it } from 'vitest';
import { ModelHistory, objectiveOf, type ModelTrial } from '../../src/domain/results/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy, resolveOptions, type MethodName } from '../../src/engine/strategies/registry.js';
import type { Observation } from '../../src/engine/strategies/types.js';

/** A trial of one objective: it has a value. */
type Valued = ModelTrial & { value: number };

const MIN = objectiveOf({ direction: 'minimize' });
const MAX = objectiveOf({ direction: 'maximize' });

/** The definition: engine value y (−value when maximising); a stopped one max(y, median of the earlier unstopped y). */
function byDefinition(trials: Valued[], maximise: boolean): number[] {
  const earlier: number[] = [];
  return trials.map((t) => {
    const y = maximise ? -t.value : t.value;
    if (!t.stopped) {
      earlier.push(y);
      return y;
    }
    if (earlier.length === 0) return y;
    const s = [...earlier].sort((a, b) => a - b);
    const n = s.length;
    const median = n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
    return Math.max(y, median);
  });
}

/** A small deterministic generator. */
function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('ModelHistory', () => {
  it('gives each trial the value of the definition, in both directions (random sequences, ties included)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = lcg(seed);
      const trials: Valued[] = Array.from({ length: 1 + Math.floor(rnd() * 60) }, (_, i) => ({
        point: rnd() < 0.1 ? null : [i],
        // Coarse values: ties between results, and between a stopped value and the median.
        value: Math.floor(rnd() * 12) - 4,
        stderr: rnd() < 0.2 ? 0.5 : null,
        stopped: rnd() < 0.35,
      }));
      for (const maximise of [false, true]) {
        const reader = new ModelHistory(maximise ? MAX : MIN);
        const got = trials.map((t) => reader.value(t));
        // (+ 0: −0 and 0 are the same value; max(−0, 0) may give either.)
        expect(got.map((v) => v + 0), `seed ${seed}`).toEqual(byDefinition(trials, maximise).map((v) => v + 0));
        // next(): the same values as observations, none for a trial without a point, the stderr kept.
        const obs = new ModelHistory(maximise ? MAX : MIN).all(trials);
        const withPoint = trials.flatMap((t, i) => (t.point ? [{ t, y: got[i]! }] : []));
        expect(obs.map((o) => o.y)).toEqual(withPoint.map((w) => w.y));
        expect(obs.map((o) => o.stderr ?? null)).toEqual(withPoint.map((w) => w.t.stderr));
      }
    }
  });

  it('a stopped trial with nothing before it keeps its value; one that is worse than the median keeps its own', () => {
    const r = new ModelHistory(MIN);
    expect(r.value({ value: -3, stderr: null, stopped: true })).toBe(-3);
    for (const v of [1, 2, 10]) r.value({ value: v, stderr: null, stopped: false });
    expect(r.median()).toBe(2);
    expect(r.value({ value: -5, stderr: null, stopped: true })).toBe(2);
    expect(r.value({ value: 7, stderr: null, stopped: true })).toBe(7);
    // Stopped trials are not in the median (as they are not the stopping rule's peers).
    expect(r.median()).toBe(2);
    // Maximising: the engine value is −value, the median of the engine values −2 (values 1, 2, 10 → −1, −2, −10).
    const m = new ModelHistory(MAX);
    for (const v of [1, 2, 10]) m.value({ value: v, stderr: null, stopped: false });
    expect(m.value({ value: 9, stderr: null, stopped: true })).toBe(-2);
  });

  it('a fork reads on without changing the original', () => {
    const r = new ModelHistory(MIN);
    for (const v of [4, 1, 3]) r.value({ value: v, stderr: null, stopped: false });
    const f = r.fork();
    for (const v of [-10, -20, -30]) f.value({ value: v, stderr: null, stopped: false });
    expect(f.median()).toBe(-4.5); // of 4, 1, 3, −10, −20, −30: (−10 + 1)/2
    expect(r.median()).toBe(3);
    expect(r.value({ value: 0, stderr: null, stopped: true })).toBe(3);
  });
});

const A = [1, 1];
const f = (x: readonly number[]) => (x[0]! - A[0]!) ** 2 + (x[1]! - A[1]!) ** 2;
const dist = (x: readonly number[], y: readonly number[]) => Math.hypot(x[0]! - y[0]!, x[1]! - y[1]!);
const LAMBDA = 6;

/**
 * Three generations of LAMBDA points on f; in the last, the point farthest from a completes last,
 * stopped, with a value 1 below every result so far. `asStopped`: read as stopped (§31), or as a
 * finished result (how every method took it before). Returns the distances of the distribution's
 * mean after the last update to the stopped point and to a.
 */
function run(method: MethodName, seed: number, asStopped: boolean): { toStopped: number; toOptimum: number } {
  const s = getStrategy(method);
  // ProbNES without Powell's start phase (§29), so that all three generations are its own updates.
  const options = resolveOptions(method, 2, method.startsWith('prob-') ? { start_phase: 'off' } : {});
  let state = s.init({ dim: 2, batchSize: LAMBDA, options, box: { lower: [-4, -4], upper: [4, 4] } }, Rng.fromSeed(seed));
  const reader = new ModelHistory(MIN);
  const history: Observation[] = [];
  let stoppedAt: number[] = [];
  for (let g = 0; g < 3; g++) {
    const asked = s.ask(state, { history, pending: [] }, LAMBDA);
    state = asked.state;
    const far = g < 2 ? -1 : asked.points.reduce((b, x, i) => (dist(x, A) > dist(asked.points[b]!, A) ? i : b), 0);
    const low = Math.min(...history.map((o) => o.y)) - 1;
    const batch = new Array<Observation>(LAMBDA);
    for (const i of [...asked.points.keys()].filter((i) => i !== far).concat(far >= 0 ? [far] : [])) {
      const x = asked.points[i]!;
      if (i === far) stoppedAt = x;
      const o = reader.next({ point: x, value: i === far ? low : f(x), stderr: null, stopped: i === far && asStopped })!;
      batch[i] = o;
      history.push(o);
    }
    state = s.tell(state, { batch, history });
  }
  return { toStopped: dist(state.mean, stoppedAt), toOptimum: dist(state.mean, A) };
}

describe('a stopped trial with a low last value no longer pulls the search toward it', () => {
  const SEEDS = [1, 2, 3, 4, 5, 6];
  it.each(['prob-cmaes', 'prob-xnes', 'prob-snes', 'bo', 'pibo', 'cmaes', 'lq-cmaes', 'xnes', 'snes'] as MethodName[])('%s', (method) => {
    let away = 0;
    let closer = 0;
    for (const seed of SEEDS) {
      const stopped = run(method, seed, true);
      const finished = run(method, seed, false);
      away += stopped.toStopped - finished.toStopped;
      closer += finished.toOptimum - stopped.toOptimum;
    }
    // Averaged over the seeds, the mean ends farther from the stopped point and nearer the optimum
    // (measured: 0.19 to 1.13 farther, 0.08 to 1.08 nearer, by method).
    expect(away / SEEDS.length).toBeGreaterThan(0.1);
    expect(closer / SEEDS.length).toBeGreaterThan(0.05);
  });

  it('bo: told as a finished result, the stopped point is the incumbent; read as stopped, it is not', () => {
    for (const seed of [1, 2, 3]) {
      expect(run('bo', seed, false).toStopped).toBe(0);
      expect(run('bo', seed, true).toStopped).toBeGreaterThan(0.05);
    }
  });
});
