/** bench:multi's problems, scoring, sharding and table (bench/multi.ts). */
import { describe, expect, it } from 'vitest';
import { feasibleHypervolume, jobsOf, parseSeeds, PROBLEMS, report, type MultiRun } from '../../bench/multi.js';

describe('bench:multi', () => {
  it('declares the reference points of BoTorch and its front hypervolumes', () => {
    // botorch/test_functions/multi_objective.py: ZDT `_ref_point = [11.0, 11.0]`, `_max_hv` = 120 + 2/3
    // (ZDT1), 120 + 1/3 (ZDT2), 128.77811613069076060 (ZDT3); DTLZ2 `_ref_val = 1.1`, `_max_hv` =
    // 1.1^M − π^{M/2}/Γ(M/2 + 1)/2^M, which at M = 3 is 1.331 − π/6.
    for (const d of [4, 8]) {
      expect(PROBLEMS.zdt1!.make(d).reference).toEqual([11, 11]);
      expect(PROBLEMS.zdt1!.make(d).maxHypervolume).toBeCloseTo(120 + 2 / 3, 12);
      expect(PROBLEMS.zdt2!.make(d).maxHypervolume).toBeCloseTo(120 + 1 / 3, 12);
      expect(PROBLEMS.zdt3!.make(d).maxHypervolume).toBeCloseTo(128.77811613069076, 8);
      const dtlz2 = PROBLEMS.dtlz2!.make(d);
      expect([dtlz2.M, dtlz2.reference]).toEqual([3, [1.1, 1.1, 1.1]]);
      expect(dtlz2.maxHypervolume).toBeCloseTo(1.331 - Math.PI / 6, 12);
    }
    const truss = PROBLEMS.truss2d!.make(3);
    expect([truss.d, truss.M, truss.C]).toEqual([3, 2, 1]);
  });

  it('scores only feasible points among the first n (c ≤ 0 is feasible; an infeasible report counts for nothing)', () => {
    const f = [[1, 3], [2, 2], [0.5, 0.5], [0.1, 0.1]];
    const c = [[-1], [0], [1], [-5]];
    // Point 2 violates its constraint and point 3 was reported infeasible: the front is (1, 3) and
    // (2, 2), whose boxes up to (4, 4) have areas 3 and 4 and overlap in [2, 4] × [3, 4] (area 2).
    expect(feasibleHypervolume(f, c, new Set([3]), 4, [4, 4])).toBe(5);
    expect(feasibleHypervolume(f, c, new Set([3]), 1, [4, 4])).toBe(3);
    // Without the constraint values and the infeasible flag (0.1, 0.1) alone spans 3.9².
    expect(feasibleHypervolume(f, [], new Set(), 4, [4, 4])).toBeCloseTo(3.9 * 3.9, 12);
  });

  it('splits the jobs into disjoint shards that together are every job', () => {
    const base = { problems: ['zdt1', 'truss2d'], dims: [4, 8], methods: ['prob-cmaes', 'optuna-tpe'], seeds: [0, 1, 2] };
    const all = jobsOf({ ...base, shard: [0, 1] });
    // zdt1 at 2 dims and the truss at its own d = 3 only: 3 (problem, d) × 2 methods × 3 seeds.
    expect(all).toHaveLength(18);
    expect(all.filter((j) => j.problem === 'truss2d').every((j) => j.d === 3)).toBe(true);
    const shards = [0, 1, 2].map((i) => jobsOf({ ...base, shard: [i, 3] }));
    expect(shards.map((s) => s.length)).toEqual([6, 6, 6]);
    const key = (j: (typeof all)[number]) => `${j.problem}/${j.d}/${j.method}/${j.seed}`;
    expect(shards.flat().map(key).sort()).toEqual(all.map(key).sort());
  });

  it('reads seeds as a count, a range or a list', () => {
    expect(parseSeeds('3')).toEqual([0, 1, 2]);
    expect(parseSeeds('5-7')).toEqual([5, 6, 7]);
    expect(parseSeeds('1,4')).toEqual([1, 4]);
    expect(() => parseSeeds('a')).toThrow();
  });

  it("ranks the default method's median among the medians at each budget, on the seeds every method completed", () => {
    const run = (method: string, seed: number, hv: (number | null)[]): MultiRun => ({
      problem: 'zdt1', d: 4, M: 2, C: 0, method, seed, reference_point: [11, 11], max_hypervolume: 120.67,
      budgets: [80, 200], hypervolume: hv, evaluations: 200, feasible: 200, f: [], c: [], infeasible: [], seconds: 1,
    });
    const runs = [
      run('prob-cmaes', 0, [1, 5]), run('prob-cmaes', 1, [3, 7]),
      run('bo', 0, [2, 4]), run('bo', 1, [4, 4]),
      // Seed 2 lacks bo: not scored, or prob-cmaes's median would move.
      run('prob-cmaes', 2, [100, 100]),
    ];
    const rows = report(runs, ['prob-cmaes', 'bo']).filter((l) => /^\| .*\| (80|200) \|/.test(l));
    // Medians at 80: prob-cmaes 2, bo 3 (rank 2); at 200: 6 against 4 (rank 1).
    expect(rows[0]).toMatch(/\| 80 \| 2 \| 2\.00000 \| \*\*3\.00000\*\* \| 2\/2 \|$/);
    expect(rows[1]).toMatch(/\| 200 \| 2 \| \*\*6\.00000\*\* \| 4\.00000 \| 1\/2 \|$/);
    // A run stopped before 200 (--cap): bo has no median there, prob-cmaes is ranked alone.
    runs[2] = run('bo', 0, [2, null]);
    const capped = report(runs, ['prob-cmaes', 'bo']).filter((l) => /^\| .*\| (80|200) \|/.test(l));
    expect(capped[1]).toMatch(/\| 200 \| 2 \| \*\*6\.00000\*\* \| – \| 1\/1 \|$/);
  });
});
