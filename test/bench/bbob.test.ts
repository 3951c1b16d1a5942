/**
 * bench:bbob: scoring of targets from trajectories worked by hand, the runtime ECDF points, the
 * command line, the report, and one tiny run in-process through the same runOne as bench:paper.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../bench/lib/args.js';
import { defaultPopulation, expandBbobJobs, parseBbobConfig, parseRange } from '../../bench/lib/bbob-args.js';
import { renderBbobReport } from '../../bench/lib/bbob-report.js';
import { bestAt, ecdfPoints, hittingTime, msAt, TARGETS, targetShare, targetsReached, toBbobRecord, trajectoryOf, type BbobRunRecord, type Trajectory } from '../../bench/lib/bbob-score.js';
import { runOne } from '../../bench/lib/run.js';
import { renderEcdf } from '../../bench/lib/svg.js';
import { bbobProblem } from '../../src/engine/benchmarks/bbob.js';

const PROV = { commit: 'abc', dirty: false, command: 'test' };
const rec = (variant: string, fn: number, dim: number, trajectory: Trajectory, budget = 100): BbobRunRecord => ({
  variant, method: variant.split(':')[0], fn, dim, instance: 1, seed: 1, batch: 4, budget, f_opt: 0, trajectory, options: {},
  ms_at: { [String(10 * dim)]: 100, [String(50 * dim)]: 500 }, timings: { total_ms: 500, ask_ms: 0, tell_ms: 0, updates: 1 }, provenance: PROV,
});

describe('targets from a trajectory', () => {
  it('the 11 targets are 10^2 … 10^−8', () => {
    expect(TARGETS).toHaveLength(11);
    expect(TARGETS[0]).toBe(100);
    expect(TARGETS[10]).toBeCloseTo(1e-8, 20);
  });

  it('the trajectory keeps the improvements of f − f_opt, clamped at 0', () => {
    // values 5, 7, 3, 3, 0.5 with f_opt = 1: Δ = 4, 6, 2, 2, −0.5 → improvements at 1 (4), 3 (2), 5 (0)
    expect(trajectoryOf([5, 7, 3, 3, 0.5], 1)).toEqual([[1, 4], [3, 2], [5, 0]]);
  });

  it('targets reached at each budget, by hand', () => {
    const t: Trajectory = [[1, 500], [3, 50], [10, 0.5], [40, 2e-5]];
    expect(bestAt(t, 0)).toBe(Infinity);
    expect(targetsReached(t, 2)).toBe(0); // 500 > 10²
    expect(targetsReached(t, 5)).toBe(1); // 50 ≤ 10² only
    expect(targetsReached(t, 10)).toBe(3); // 0.5 ≤ 10², 10¹, 10⁰
    expect(targetsReached(t, 39)).toBe(3);
    expect(targetsReached(t, 40)).toBe(7); // 2e−5 ≤ 10², …, 10⁻⁴ (7 targets), > 10⁻⁵
    expect(hittingTime(t, 1e-4)).toBe(40);
    expect(hittingTime(t, 1e-5)).toBeNull();
    // Two runs, d = 2, at 5·d = 10 evaluations: 3 + 11 targets of 22 → 14/22.
    const a = rec('x', 1, 2, t), b = rec('x', 1, 2, [[10, 0]]);
    expect(targetShare([a, b], (r) => 5 * r.dim)).toBeCloseTo(14 / 22, 15);
  });

  it('the ECDF: share of (run, target) pairs against evaluations/d', () => {
    // d = 2, two runs → 22 pairs. Run A hits 10² at 1, 10¹ at 3, 10⁰ at 10, 10⁻¹…10⁻⁴ at 40 (7);
    // run B hits all 11 at 10. Distinct times/d: 0.5 → 1 pair, 1.5 → 2, 5 → 2 + 1 + 11 = 14, 20 → 18.
    const a = rec('x', 1, 2, [[1, 50], [3, 5], [10, 0.5], [40, 2e-5]]), b = rec('x', 1, 2, [[10, 0]]);
    expect(ecdfPoints([a, b])).toEqual([
      { x: 0.5, y: 1 / 22 },
      { x: 1.5, y: 2 / 22 },
      { x: 5, y: 14 / 22 },
      { x: 20, y: 18 / 22 },
    ]);
    // A hit beyond the run's budget does not count.
    expect(ecdfPoints([rec('x', 1, 2, [[40, 0]], 30)])).toEqual([]);
  });

  it('the time of a budget is the elapsed time after the generation containing it', () => {
    // Generations of 3, 1 and 5 evaluations (lq-CMA-ES varies them): they end at 3, 4 and 9.
    const elapsed = [10, 20, 30], ends = [3, 4, 9];
    expect(msAt(elapsed, ends, 1)).toBe(10);
    expect(msAt(elapsed, ends, 3)).toBe(10);
    expect(msAt(elapsed, ends, 4)).toBe(20);
    expect(msAt(elapsed, ends, 5)).toBe(30);
    expect(msAt(elapsed, ends, 9)).toBe(30);
    expect(msAt(elapsed, ends, 100)).toBe(30);
  });
});

describe('command line', () => {
  it('ranges, variants, profiles and defaults', () => {
    expect(parseRange('1-3,7,2', 'functions')).toEqual([1, 2, 3, 7]);
    expect(() => parseRange('3-1', 'functions')).toThrow(UsageError);
    const c = parseBbobConfig(['--methods', 'cmaes,prob-cmaes:paper,prob-cmaes', '--dims', '2,5', '--functions', '1-3', '--instances', '1-2', '--budget-per-dim', '50,10']);
    expect(c.variants.map((v) => [v.label, v.method, v.options.profile])).toEqual([['cmaes', 'cmaes', undefined], ['prob-cmaes:paper', 'prob-cmaes', 'paper'], ['prob-cmaes', 'prob-cmaes', undefined]]);
    expect(c.budgetPerDim).toEqual([10, 50]);
    expect(expandBbobJobs(c)).toHaveLength(3 * 2 * 3 * 2);
    expect(() => parseBbobConfig(['--methods', 'cmaes:paper'])).toThrow(/no profiles/);
    expect(() => parseBbobConfig(['--methods', 'prob-cmaes:fast'])).toThrow(/profile/);
    expect(() => parseBbobConfig(['--methods', 'nope'])).toThrow(/unknown/);
    expect(() => parseBbobConfig(['--functions', '25'])).toThrow(/f24/);
    expect(() => parseBbobConfig(['--dims', '1'])).toThrow(/d ≥ 2/);
    // --profile applies to every method that has one; cmaes ignores it.
    const p = parseBbobConfig(['--methods', 'cmaes,prob-xnes', '--profile', 'paper']);
    expect(p.variants.map((v) => v.options)).toEqual([{}, { profile: 'paper' }]);
  });

  it('each method runs at its own default population: λ = 4 + ⌊3 ln d⌋ for CMA-ES and the NES, the service default 3 otherwise', () => {
    expect(defaultPopulation('cmaes', 2)).toBe(6); // 4 + ⌊2.08⌋
    expect(defaultPopulation('cmaes', 5)).toBe(8); // 4 + ⌊4.83⌋
    expect(defaultPopulation('cmaes', 10)).toBe(10); // 4 + ⌊6.91⌋
    expect(defaultPopulation('cmaes', 20)).toBe(12); // 4 + ⌊8.99⌋
    expect(defaultPopulation('prob-cmaes', 10)).toBe(3);
    expect(defaultPopulation('bo', 10)).toBe(3);
    const [job] = expandBbobJobs(parseBbobConfig(['--methods', 'cmaes', '--dims', '10', '--functions', '1', '--instances', '1']));
    expect(job.spec!.batch).toBe(10);
    expect(job.spec!.budget).toBe(500); // the largest default budget, 50·d
    expect(job.spec!.priorStd).toEqual(Array(10).fill(2));
    expect(job.spec!.box).toEqual({ lower: Array(10).fill(-5), upper: Array(10).fill(5) });
  });
});

describe('a tiny run and its report', () => {
  it('runs cmaes and random on f1 and f15 (d = 2) through runOne, records trajectories and renders results.md and the ECDF', () => {
    const config = parseBbobConfig(['--methods', 'cmaes,random', '--dims', '2', '--functions', '1,15', '--instances', '1-2', '--budget-per-dim', '5,20']);
    const jobs = expandBbobJobs(config);
    const records = jobs.map((j) => toBbobRecord(j, runOne(j.spec!), config.budgetPerDim, PROV));
    for (const r of records) {
      expect(r.budget).toBe(40);
      expect(r.f_opt).toBe(bbobProblem(r.fn, 2, r.instance).optimum);
      const deltas = r.trajectory.map(([, v]) => v);
      expect(deltas.every((v, i) => v >= 0 && (i === 0 || v < deltas[i - 1]))).toBe(true);
      expect(r.trajectory[r.trajectory.length - 1][0]).toBeLessThanOrEqual(40);
      expect(Object.keys(r.ms_at)).toEqual(['10', '40']);
    }
    expect(records.find((r) => r.variant === 'cmaes')!.batch).toBe(6);
    expect(records.find((r) => r.variant === 'cmaes')!.options).toMatchObject({ sigma0: 1 });
    const md = renderBbobReport(records, { header: ['Command: test'], budgetPerDim: config.budgetPerDim, variants: ['cmaes', 'random'], failures: 0 });
    const share = (v: string, k: number) => `${Math.round(100 * targetShare(records.filter((r) => r.variant === v), (r) => k * r.dim))}%`;
    expect(md).toContain(`| 2 | 20·d | ${share('cmaes', 20)} | ${share('random', 20)} |`);
    expect(md).toContain('### Targets reached at 5·d = 10 evaluations');
    expect(md).toContain('| f15 Rastrigin |');
    const svg = renderEcdf([{ label: 'cmaes', method: 'cmaes', points: ecdfPoints(records.filter((r) => r.variant === 'cmaes')) }], 'd = 2', 20, 2);
    expect(svg.match(/<polyline/g)).toHaveLength(1);
  });
});
