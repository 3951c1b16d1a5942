/**
 * UCI surrogate benchmark: the shipped data and their provenance file, the SVR surrogate against
 * values computed independently (by hand, and by scikit-learn), the prior fitted through the study
 * path, and the runner on a tiny configuration.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registeredMethods } from '../../src/engine/strategies/registry.js';
import { isMethodName, type MethodName } from '../../src/engine/index.js';
import { parseUciConfig, uciJobs, UCI_METHODS, UciUsageError } from '../../bench/lib/uci-args.js';
import { loadUciData, UCI_DATA_DIR, UCI_DATASETS } from '../../bench/lib/uci-data.js';
import { aggregateUci, bestSoFarMax, renderUciFigure, renderUciReport } from '../../bench/lib/uci-report.js';
import { runUciOne } from '../../bench/lib/uci-run.js';
import { buildUciTask } from '../../bench/lib/uci-task.js';
import { fitSvr } from '../../bench/lib/svr.js';

/** libsvm's model text → f(x) = Σ α_i exp(−γ‖x − s_i‖²) − ρ, evaluated here without libsvm. */
function decisionFromModelText(model: string, x: readonly number[]): number {
  const lines = model.trim().split('\n');
  const gamma = Number(lines.find((l) => l.startsWith('gamma '))!.split(' ')[1]);
  const rho = Number(lines.find((l) => l.startsWith('rho '))!.split(' ')[1]);
  const svs = lines.slice(lines.indexOf('SV') + 1).map((l) => {
    const [alpha, ...feats] = l.trim().split(/\s+/);
    const s = new Array<number>(x.length).fill(0); // libsvm's sparse format omits zeros
    for (const f of feats) {
      const [i, v] = f.split(':');
      s[Number(i) - 1] = Number(v);
    }
    return { alpha: Number(alpha), s };
  });
  return svs.reduce((a, { alpha, s }) => a + alpha * Math.exp(-gamma * s.reduce((b, v, j) => b + (v - x[j]) ** 2, 0)), 0) - rho;
}

const SHAPES: Record<string, [number, number]> = { biomass: [536, 5], concrete: [1030, 8], diabetes: [442, 10], 'breast-cancer': [569, 30] };

describe('UCI data', () => {
  it('every data set loads with its expected shape and is described in the provenance README', () => {
    const readme = readFileSync(new URL('README.md', UCI_DATA_DIR), 'utf8');
    expect(Object.keys(UCI_DATASETS).sort()).toEqual(Object.keys(SHAPES).sort());
    for (const [name, [rows, cols]] of Object.entries(SHAPES)) {
      const data = loadUciData(name);
      expect(data.X.length).toBe(rows);
      expect(data.y.length).toBe(rows);
      expect(data.columns.length).toBe(cols);
      expect(data.X.every((r) => r.length === cols)).toBe(true);
      expect(readme).toContain(`${name}.csv`);
    }
    expect(readme).toMatch(/r-cran-modeldata 1\.1\.0-1/);
    expect(readme).toMatch(/python3-sklearn 1\.2\.1\+dfsg-1/);
    expect(existsSync(new URL('concrete.csv', UCI_DATA_DIR))).toBe(true);
  });

  it('known values: the first concrete row and the WDBC class counts (212 malignant of 569)', () => {
    const c = loadUciData('concrete');
    expect(c.X[0]).toEqual([540, 0, 0, 162, 2.5, 1040, 676, 28]);
    expect(c.y[0]).toBe(79.99);
    expect(loadUciData('breast-cancer').y.filter((v) => v === 1).length).toBe(212);
  });

  it('an unknown data set is refused', () => {
    expect(() => loadUciData('nope')).toThrow(/unknown data set/);
  });
});

describe('SVR surrogate', () => {
  it('XOR in 2-D: libsvm finds the solution derived by hand', async () => {
    // Points (0,0), (1,1) → 0 and (1,0), (0,1) → 1; γ = 0.5, C = 1, ε = 0.1. With every α_i at its bound
    // (α = −1 for y = 0, +1 for y = 1), g = Σ α_i k(s_i, ·) is g0 = −1 + 2e^−0.5 − e^−1 = −0.1548 at the
    // y = 0 points and g1 = −g0 at the y = 1 points. The KKT conditions ask f = g + b ≥ y + ε at the
    // α = −C points (b ≥ 0.1 − g0 = 0.2548) and f ≤ y − ε at the α = +C points (b ≤ 0.9 − g1 = 0.7452),
    // both satisfiable, so the bounded solution is optimal and libsvm takes b = −ρ as the middle of
    // [0.2548, 0.7452]: b = 0.5.
    const svr = await fitSvr([[0, 0], [1, 0], [0, 1], [1, 1]], [0, 1, 1, 0], { C: 1, epsilon: 0.1, gamma: 0.5 });
    const g0 = -1 + 2 * Math.exp(-0.5) - Math.exp(-1);
    expect(svr.predict([0, 0])).toBeCloseTo(g0 + 0.5, 6);
    expect(svr.predict([1, 0])).toBeCloseTo(-g0 + 0.5, 6);
    expect(svr.predict([0.5, 0.5])).toBeCloseTo(0.5, 6); // every kernel value equal: Σ α_i k = 0
    expect(svr.modelText()).toMatch(/rho -0\.5\b/);
  });

  it('libsvm predictions equal the RBF decision function evaluated by hand from its own model file', async () => {
    const task = await buildUciTask('concrete');
    const pts = [task.z[0], task.z[500], new Array<number>(8).fill(0.5), [-1, 2, 0, 1, -0.5, 0.3, -2, 1]];
    // The model file prints support vectors to 8 significant digits: agreement to ~1e-6.
    for (const p of pts) expect(task.svr.predict(p)).toBeCloseTo(decisionFromModelText(task.svr.modelText(), p), 5);
  });

  it('matches scikit-learn 1.2.1 SVR(kernel="rbf", C=1, epsilon=0.1, gamma=1/d) on the standardised data', async () => {
    // Computed with Debian's python3-sklearn 1.2.1: inputs and target standardised with numpy's
    // population std, fitted, predicted at z = 0, z = 0.5·1, the first row and linspace(−1, 1, d), mapped
    // back to target units. 389 and 742 support vectors, as here.
    const expected: Record<string, number[]> = {
      diabetes: [120.28805346923437, 194.58678973248442, 226.76662777580816, 161.99826363765604],
      concrete: [47.51691103581839, 63.31963614355515, 63.0981335598436, 34.73447562761266],
    };
    for (const [name, want] of Object.entries(expected)) {
      const task = await buildUciTask(name);
      const d = task.dim;
      const pts = [new Array<number>(d).fill(0), new Array<number>(d).fill(0.5), task.z[0], Array.from({ length: d }, (_, j) => -1 + (2 * j) / (d - 1))];
      pts.forEach((p, i) => expect(Math.abs(task.surrogate(p) - want[i]) / Math.abs(want[i])).toBeLessThan(1e-6));
      expect(task.svr.modelText()).toMatch(new RegExp(`total_sv ${name === 'diabetes' ? 389 : 742}\\b`));
    }
  });

  it('the prior is the study prior fitted to the standardised rows (mean 0, unit variances up to shrinkage)', async () => {
    const task = await buildUciTask('diabetes');
    expect(task.prior.source).toMatchObject({ from: 'points', points: 442 });
    for (const m of task.prior.mean) expect(Math.abs(m)).toBeLessThan(1e-12);
    // OAS: Ŝ = ρ·μI + (1 − ρ)S in z/spread units; standardised columns have S_jj = 1, so the diagonal
    // stays within ρ of 1 whatever the spreads.
    for (const s of task.prior.std) expect(Math.abs(s - 1)).toBeLessThan(0.05);
    // s5 (ltg) and s6 (glu) are positively correlated in the data; the prior keeps that.
    expect(task.prior.covariance[8][9]).toBeGreaterThan(0.3);
  });
});

describe('runner', () => {
  it('defaults to the seven methods, every data set and 15 seeds; refuses unknown names', () => {
    const isM = (m: string): m is MethodName => isMethodName(m);
    const c = parseUciConfig([], registeredMethods(), isM);
    expect(c.methods).toEqual(UCI_METHODS);
    expect(c.datasets).toEqual(Object.keys(UCI_DATASETS));
    expect([c.seeds, c.budget, c.batch, c.workers]).toEqual([15, 153, 3, 1]);
    expect(uciJobs(c).length).toBe(7 * 4 * 15);
    expect(() => parseUciConfig(['--datasets', 'nope'], registeredMethods(), isM)).toThrow(UciUsageError);
    expect(() => parseUciConfig(['--methods', 'nope'], registeredMethods(), isM)).toThrow(UciUsageError);
  });

  it('runs random and cmaes on biomass for 2 seeds with budget 9, reproducibly, and reports', async () => {
    const task = await buildUciTask('biomass');
    const spec = (method: MethodName, seed: number) => ({ method, dataset: 'biomass', seed, budget: 9, batch: 3, options: {} });
    const runs = (['random', 'cmaes'] as const).flatMap((m) => [runUciOne(spec(m, 0), task), runUciOne(spec(m, 1), task)]);
    for (const r of runs) {
      expect(r.values.length).toBe(9);
      expect(r.mean_values.length).toBe(3);
      expect(r.dim).toBe(5);
    }
    expect(runUciOne(spec('random', 0), task).values).toEqual(runs[0].values);
    expect(bestSoFarMax([1, 3, 2, 5])).toEqual([1, 3, 3, 5]);
    const groups = aggregateUci(runs);
    expect(groups.map((g) => [g.method, g.seeds, g.budget])).toEqual([['random', 2, 9], ['cmaes', 2, 9]]);
    const g = groups[0];
    const best = runs.slice(0, 2).map((r) => Math.max(...r.values));
    expect(g.best[8].mean).toBeCloseTo((best[0] + best[1]) / 2, 12);
    const md = renderUciReport(groups, [], { command: 'x', origin: 'Commit: y', seeds: 2, budget: 9, batch: 3, svr: 'z', failures: 0, wallSeconds: 1 });
    expect(md).toContain('## biomass (d = 5)');
    expect(md).toMatch(/\| random \| 2 \| [0-9.]+ ± [0-9.]+ \|/);
    const svg = renderUciFigure(groups);
    expect(svg).toContain('biomass (d = 5)');
    expect((svg.match(/<polyline/g) ?? []).length).toBe(2);
  });
});
