/**
 * Benchmark runner: the scoring rules of ALGORITHM.md §7 on hand-made sequences, the aggregation
 * and reports, and one tiny end-to-end run in-process (no worker threads).
 */
import { describe, expect, it } from 'vitest';
import { aggregate, statAt } from '../../bench/lib/aggregate.js';
import { expandJobs, parseConfig, PAPER_FUNCTIONS } from '../../bench/lib/args.js';
import { paperValue } from '../../bench/lib/paper-reference.js';
import { renderReport } from '../../bench/lib/report.js';
import { optionsFor, runOne, type RunRecord, type RunSpec } from '../../bench/lib/run.js';
import { bestSoFar, fmtLn, LN_FLOOR, lnBand, lnFloored, meanScoreAt, meanScoreCurve, regretOf, seedStats } from '../../bench/lib/scoring.js';
import { renderFigure } from '../../bench/lib/svg.js';

describe('scoring', () => {
  it('best-so-far is the running minimum', () => {
    expect(bestSoFar([5, 3, 4, 1, 2])).toEqual([5, 3, 3, 1, 1]);
    expect(bestSoFar([])).toEqual([]);
  });

  it('mean scoring: best f(μ_k) over k ≤ ⌊n/q⌋, prior mean excluded', () => {
    const mv = [4, 6, 2, 3]; // f(μ_1)…f(μ_4), q = 3
    expect(meanScoreAt(mv, 2, 3)).toBeNaN(); // no update before 3 evaluations
    expect(meanScoreAt(mv, 3, 3)).toBe(4);
    expect(meanScoreAt(mv, 5, 3)).toBe(4); // ⌊5/3⌋ = 1
    expect(meanScoreAt(mv, 6, 3)).toBe(4); // min(4, 6)
    expect(meanScoreAt(mv, 9, 3)).toBe(2);
    expect(meanScoreAt(mv, 12, 3)).toBe(2);
    expect(meanScoreAt(mv, 99, 3)).toBe(2); // never beyond the recorded updates
    expect(meanScoreCurve(mv, 7, 3)).toEqual([NaN, NaN, 4, 4, 4, 4, 4]);
  });

  it('regret is clamped at 0; ln is floored at −40', () => {
    expect(regretOf(1.5, 1)).toBe(0.5);
    expect(regretOf(0.999, 1)).toBe(0);
    expect(regretOf(NaN, 1)).toBeNaN();
    expect(lnFloored(Math.E)).toBeCloseTo(1, 15);
    expect(lnFloored(0)).toBe(LN_FLOOR);
    expect(lnFloored(1e-30)).toBe(LN_FLOOR); // ln 1e-30 = −69 → floor
    expect(fmtLn(LN_FLOOR)).toBe('≤−40');
    expect(fmtLn(-1.234)).toBe('−1.23');
    expect(fmtLn(NaN)).toBe('–');
  });

  it('seed statistics and the 95% band (on the regret, then ln)', () => {
    // regrets 1, 2, 3: mean 2, sample sd 1, se 1/√3
    const s = seedStats([1, 2, 3, NaN]);
    expect(s.mean).toBe(2);
    expect(s.n).toBe(3);
    expect(s.se).toBeCloseTo(1 / Math.sqrt(3), 15);
    const b = lnBand(s);
    expect(b.ln).toBeCloseTo(Math.log(2), 15);
    expect(b.hi).toBeCloseTo(Math.log(2 + 1.96 / Math.sqrt(3)), 15);
    expect(b.lo).toBeCloseTo(Math.log(2 - 1.96 / Math.sqrt(3)), 15);
    // A band reaching below 0 is clamped to the floor instead of ln of a negative number.
    expect(lnBand(seedStats([0, 0, 3])).lo).toBe(LN_FLOOR);
    expect(seedStats([5])).toEqual({ mean: 5, se: 0, n: 1 });
  });

  it('aggregates hand-made runs into ln mean regret per evaluation count', () => {
    const rec = (seed: number, values: number[], mean_values: number[]): RunRecord => ({
      method: 'cmaes', function: 'sphere', dim: 2, seed, batch: 3, optimum: 1, values, mean_values,
      timings: { total_ms: 1, ask_ms: 0, tell_ms: 0, updates: mean_values.length },
    });
    const [g] = aggregate([rec(0, [5, 3, 4, 2, 9, 9], [4, 1.5]), rec(1, [3, 3, 3, 3, 0.5, 3], [2, 2])]);
    // best regret after 4 evals: seed 0 → 2 − 1 = 1, seed 1 → 3 − 1 = 2; mean 1.5
    expect(statAt(g.best, 4)!.mean).toBe(1.5);
    // after 5 evals seed 1 found 0.5 < f* → regret clamped to 0; mean (1 + 0)/2
    expect(statAt(g.best, 5)!.mean).toBe(0.5);
    // mean scoring at 6 evals: seed 0 min(4, 1.5) − 1 = 0.5; seed 1 min(2, 2) − 1 = 1
    expect(statAt(g.mean, 6)!.mean).toBe(0.75);
    expect(statAt(g.mean, 2)!.n).toBe(0); // undefined before the first update
    expect(statAt(g.best, 7)).toBeNull();
  });
});

describe('command line', () => {
  it('defaults to the paper protocol', () => {
    const c = parseConfig(['--methods', 'random']);
    expect(c).toMatchObject({ seeds: 15, budget: 153, batch: 3, workers: 2, methods: ['random'] });
    expect(c.tasks.map((t) => `${t.fn}:${t.dim}`)).toEqual(PAPER_FUNCTIONS.map((s) => (s.includes(':') ? s : `${s}:${s === 'shekel' ? 4 : 2}`)));
    const jobs = expandJobs(c);
    expect(jobs).toHaveLength(9 * 15);
    const ackley = jobs.find((j) => j.fn === 'ackley')!;
    expect(ackley.priorMean).toEqual([-1, -1]);
    expect(ackley.box).toEqual({ lower: [-3, -3], upper: [3, 3] });
    expect(ackley.clip).toBe(false);
  });

  it('gives tasks with their own prior that prior, their bounds and clipping', () => {
    const [job] = expandJobs(parseConfig(['--methods', 'random', '--functions', 'cartpole', '--seeds', '1']));
    expect(job.priorStd).toEqual([3, 3, 3, 3]);
    expect(job.box).toEqual({ lower: [-5, -5, -5, -5], upper: [5, 5, 5, 5] });
    expect(job.clip).toBe(true);
  });

  it('expands --dims, --profile and passes each method only the options it declares', () => {
    const c = parseConfig(['--methods', 'random', '--functions', 'levy,branin', '--dims', '2,5', '--profile', 'paper']);
    expect(c.tasks).toEqual([{ fn: 'levy', dim: 2 }, { fn: 'levy', dim: 5 }, { fn: 'branin', dim: 2 }]);
    expect(c.options).toEqual({ profile: 'paper' });
    expect(optionsFor('prob-cmaes', c.options)).toEqual({ profile: 'paper' });
    expect(optionsFor('cmaes', c.options)).toEqual({});
    expect(() => parseConfig(['--functions', 'nope'])).toThrow();
  });

  it('has the paper reference values as data', () => {
    expect(paperValue('ackley', 2, 'prob-cmaes')).toBe(-7.32);
    expect(paperValue('rastrigin', 1, 'random')).toBe(-3.29);
    expect(paperValue('rastrigin', 2, 'random')).toBeNull();
  });
});

describe('end to end, in-process', () => {
  const spec = (seed: number): RunSpec => ({
    method: 'random', fn: 'ackley', dim: 2, seed, budget: 12, batch: 3,
    priorMean: [-1, -1], priorStd: [1, 1], options: {}, box: { lower: [-3, -3], upper: [3, 3] }, clip: false,
  });

  it('runs random on Ackley 2-D for 2 seeds with budget 12, reproducibly, and reports', () => {
    const runs = [runOne(spec(0)), runOne(spec(1))];
    for (const r of runs) {
      expect(r.values).toHaveLength(12);
      expect(r.mean_values).toHaveLength(4); // one update per batch of 3, the last one included
      expect(r.values.every(Number.isFinite)).toBe(true);
      // random keeps the prior: its mean is x = −1 in every update (internal u = 0)
      for (const v of r.mean_values) expect(v).toBeCloseTo(r.mean_values[0], 12);
    }
    expect(runOne(spec(0)).values).toEqual(runs[0].values); // seed s → the same run
    expect(runs[1].values).not.toEqual(runs[0].values);

    const groups = aggregate(runs);
    expect(groups).toHaveLength(1);
    expect(groups[0].seeds).toBe(2);
    const md = renderReport(groups, { command: 'test', origin: 'Commit: test', seeds: 2, budget: 12, batch: 3, prior: 'N(−1, I)', options: '{}', failures: 0 });
    expect(md).toContain('| ackley 2-D | random |');
    const svg = renderFigure(groups, 'best');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('<polyline');
  });
});
