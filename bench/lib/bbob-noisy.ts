/**
 * bench:bbob-noisy: the moderate-noise BBOB functions f101–f106 (src/engine/benchmarks/bbob/noisy.ts)
 * under bench:bbob's protocol (x in [−5, 5]^d, points projected onto it, prior N(0, 2²I), one
 * generation per ask, each method at its own default population), scored by the NOISE-FREE value of
 * the point each method recommends, at each budget:
 * - `recommended`: the model's estimate, i.e. the distribution mean μ (what `/best`'s `estimated`
 *   reports; for the evolution strategies their mean; the peers have none);
 * - `observed`: the evaluated point with the lowest noisy value (what `/best`'s `observed` reports;
 *   for BOBYQA also the point NLopt returns).
 * Each is recorded after the last generation completed within the budget. For the methods with a
 * model estimate (`estimate`), the predicted value and its standard deviation at μ are recorded too,
 * against the noise-free value there: the calibration of `/best`'s `estimated.predicted_value`.
 *
 * With `stderr: true` every observation carries the noise's standard deviation at its point
 * (noiseStd: what a user who replicated evaluations would report; none for the Cauchy model).
 */
import { performance } from 'node:perf_hooks';
import { bbobNoisyProblem } from '../../src/engine/benchmarks/bbob.js';
import { resolveOptions, type MethodName, type Options } from '../../src/engine/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import { generationSize, type Observation } from '../../src/engine/strategies/types.js';
import { runPeer, PEER_XTOL_REL, type PeerName, type PeerRunner, NLOPT_RUNNER } from './bbob-peers.js';
import { optionsFor } from './run.js';
import { basisVariance, looScale } from '../../src/engine/gp/calibration.js';
import { basisMatrix, toMat, type BasisKind, type GpHyper, type QuadraticMean } from '../../src/engine/gp/index.js';
import { fromRows } from '../../src/engine/linalg/index.js';
import { rebuildModel } from '../../src/engine/strategies/probnes-bq.js';

export interface NoisySpec {
  variant: string;
  method: MethodName | PeerName;
  options: Options;
  fn: number;
  dim: number;
  instance: number;
  batch: number;
  /** Evaluation counts at which to score, ascending; the run goes to the last. */
  checkpoints: number[];
  /** Report the noise's standard deviation with each observation. */
  stderr: boolean;
}

export interface NoisyCheckpoint {
  /** The budget, and the evaluations actually done when the recommendation was read (≤ budget). */
  budget: number;
  evals: number;
  /** Noise-free f − f_opt at μ (projected onto the box), or null for methods without a mean. */
  recommended: number | null;
  /** Noise-free f − f_opt at the evaluated point with the lowest noisy value. */
  observed: number;
  /** The model's prediction of f at μ and its standard deviation (y units), or null. */
  predicted: number | null;
  predicted_std: number | null;
  /** Noise-free f at μ, or null. */
  true_at_mean: number | null;
  /**
   * The value the noisy objective is centred on at μ (its mean; the median for the Cauchy model, whose
   * mean does not exist): what a model of the observations estimates. Calibration is scored against it.
   */
  centre_at_mean?: number | null;
  /**
   * ProbNES only: the GP's leave-one-out scale c (src/engine/gp/calibration.ts) of the model the estimate
   * came from, so predicted_std·c is the calibrated standard deviation (measured here before the engine
   * reports it).
   */
  loo_scale?: number | null;
  /**
   * ProbNES only, for a constant, linear or full-quadratic GP mean (whose span does not depend on the
   * whitening, so the basis can be rebuilt from the stored fit): the basis coefficients' variance at μ
   * (y units², R&W eq. 2.42) and the leave-one-out scale with β re-estimated; null for a diagonal basis.
   */
  basis_var?: number | null;
  loo_scale_gls?: number | null;
}

export interface NoisyRecord {
  variant: string;
  method: string;
  fn: number;
  dim: number;
  instance: number;
  batch: number;
  f_opt: number;
  stderr: boolean;
  options: Options;
  checkpoints: NoisyCheckpoint[];
  ms: number;
}

const BOX = 5, PRIOR_STD = 2;

/** A service method on one noisy problem (the loop of bench/lib/run.ts with checkpoints). */
export function runNoisyService(spec: NoisySpec & { method: MethodName }): NoisyRecord {
  const t0 = performance.now();
  const d = spec.dim;
  const p = bbobNoisyProblem(spec.fn, d, spec.instance);
  const toX = (u: readonly number[]): number[] => u.map((v) => Math.min(BOX, Math.max(-BOX, PRIOR_STD * v)));
  const toU = (x: readonly number[]): number[] => x.map((v) => v / PRIOR_STD);
  const strategy = getStrategy(spec.method);
  const options = resolveOptions(spec.method, d, optionsFor(spec.method, spec.options));
  const box = { lower: Array<number>(d).fill(-BOX / PRIOR_STD), upper: Array<number>(d).fill(BOX / PRIOR_STD) };
  let state = strategy.init({ dim: d, batchSize: spec.batch, options, box }, Rng.fromSeed(spec.instance));
  const history: Observation[] = [];
  let bestY = Infinity, bestX: number[] = [];
  const out: NoisyCheckpoint[] = [];
  const budget = spec.checkpoints[spec.checkpoints.length - 1];
  const record = (b: number): void => {
    const est = strategy.estimate ? strategy.estimate(state, history) : { predicted: null, predicted_std: null };
    const gp = (state as { gp?: { hyper: GpHyper; X: number[][]; negYTilde: number[]; quad?: QuadraticMean | null } | null }).gp;
    const model = gp ? rebuildModel(gp.hyper, gp.X, gp.negYTilde, gp.quad ?? null) : null;
    const looC = model ? looScale(model) : null;
    const kind = (state as { gp?: { basis?: BasisKind } | null }).gp?.basis ?? 'constant';
    let basisVar: number | null = null, looGls: number | null = null;
    if (gp && model && kind !== 'diagonal') {
      const I = fromRows(state.mean.map((_, i) => state.mean.map((__, j) => (i === j ? 1 : 0))));
      const centre = gp.quad?.centre ?? state.mean;
      const H = basisMatrix(kind, model.X, centre, I);
      const yStd = (gp as unknown as { yStd: number }).yStd;
      basisVar = yStd ** 2 * basisVariance(model, H, toMat([state.mean]), basisMatrix(kind, toMat([state.mean]), centre, I))[0];
      looGls = looScale(model, H);
    }
    const xm = toX(state.mean);
    const fm = p.fTrue(xm);
    out.push({
      budget: b, evals: history.length, recommended: Math.max(0, fm - p.optimum), observed: Math.max(0, p.fTrue(bestX) - p.optimum),
      predicted: est.predicted, predicted_std: est.predicted_std, true_at_mean: fm, centre_at_mean: p.fCentre(xm), loo_scale: looC, basis_var: basisVar, loo_scale_gls: looGls,
    });
  };
  let next = 0;
  while (history.length < budget) {
    const count = Math.min(generationSize(state), budget - history.length);
    // Score every checkpoint this generation would overshoot with the state before it.
    while (next < spec.checkpoints.length - 1 && history.length + count > spec.checkpoints[next]) record(spec.checkpoints[next++]);
    const asked = strategy.ask(state, { history, pending: [] }, count);
    state = asked.state;
    const batch: Observation[] = asked.points.map((u) => {
      const x = toX(u);
      const y = p.f(x);
      if (y < bestY) [bestY, bestX] = [y, x];
      const s = spec.stderr ? p.noiseStd(x) : null;
      // The strategy is told the projected point (ALGORITHM.md §0) and, when reported, y's standard error.
      return { x: toU(x), y, ...(s === null ? {} : { stderr: s }) } as Observation;
    });
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] });
  }
  while (next < spec.checkpoints.length) record(spec.checkpoints[next++]);
  return {
    variant: spec.variant, method: spec.method, fn: spec.fn, dim: d, instance: spec.instance, batch: spec.batch, f_opt: p.optimum,
    stderr: spec.stderr, options, checkpoints: out, ms: performance.now() - t0,
  };
}

/** An external peer on one noisy problem: its recommendation is its best observed point. */
export async function runNoisyPeer(spec: NoisySpec & { method: PeerName }, runner: PeerRunner = NLOPT_RUNNER): Promise<NoisyRecord> {
  const t0 = performance.now();
  const d = spec.dim;
  const p = bbobNoisyProblem(spec.fn, d, spec.instance);
  const budget = spec.checkpoints[spec.checkpoints.length - 1];
  const xs: number[][] = [], ys: number[] = [];
  await runPeer(
    { method: spec.method, dim: d, budget, x0: Array<number>(d).fill(0), step: PRIOR_STD, lower: Array<number>(d).fill(-BOX), upper: Array<number>(d).fill(BOX), seed: spec.instance, xtol_rel: PEER_XTOL_REL },
    (x) => {
      const xp = x.map((v) => Math.min(BOX, Math.max(-BOX, v)));
      const y = p.f(xp);
      xs.push(xp);
      ys.push(y);
      return y;
    },
    runner,
  );
  const checkpoints = spec.checkpoints.map((b) => {
    let k = 0;
    for (let i = 1; i < Math.min(b, ys.length); i++) if (ys[i] < ys[k]) k = i;
    return { budget: b, evals: Math.min(b, ys.length), recommended: null, observed: Math.max(0, p.fTrue(xs[k]) - p.optimum), predicted: null, predicted_std: null, true_at_mean: null };
  });
  return {
    variant: spec.variant, method: spec.method, fn: spec.fn, dim: d, instance: spec.instance, batch: 1, f_opt: p.optimum,
    stderr: spec.stderr, options: spec.options, checkpoints, ms: performance.now() - t0,
  };
}

const TARGETS = Array.from({ length: 11 }, (_, k) => 10 ** (2 - k));
const share = (deltas: number[]): number => deltas.reduce((s, v) => s + TARGETS.filter((t) => v <= t).length, 0) / (deltas.length * TARGETS.length);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
};
const sci = (x: number): string => (Number.isNaN(x) ? '–' : x === 0 ? '0' : x.toExponential(1).replace('e+', 'e').replace('-', '−'));
const pct = (x: number): string => (Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`);

/** The calibration of a set of checkpoints with estimates: below-minimum count, z-scores and coverage. */
/** How the standard deviation is formed: as reported, × the LOO scale, with the basis variance, with both (GLS LOO). */
export type StdForm = 'reported' | 'loo' | 'basis' | 'basis-loo';

export function calibration(cps: readonly NoisyCheckpoint[], fOpt: (i: number) => number, form: StdForm = 'reported'): { n: number; below: number; belowBeyond: number; cover95: number; medianAbsZ: number } {
  const zs: number[] = [];
  let below = 0, belowBeyond = 0, n = 0;
  cps.forEach((c, i) => {
    const target = c.centre_at_mean ?? c.true_at_mean;
    if (c.predicted === null || target === null) return;
    n++;
    if (c.predicted < fOpt(i)) below++;
    const sd = c.predicted_std ?? 0;
    if ((form === 'basis' || form === 'basis-loo') && (c.basis_var === null || c.basis_var === undefined)) return;
    const s = form === 'reported' ? sd : form === 'loo' ? sd * (c.loo_scale ?? 1) : Math.sqrt(sd * sd + c.basis_var!) * (form === 'basis-loo' ? (c.loo_scale_gls ?? 1) : 1);
    zs.push(s > 0 ? (c.predicted - target) / s : c.predicted === target ? 0 : Infinity);
    if (c.predicted + 1.96 * s < fOpt(i)) belowBeyond++;
  });
  return { n, below, belowBeyond, cover95: zs.filter((z) => Math.abs(z) <= 1.96).length / Math.max(1, zs.length), medianAbsZ: median(zs.map(Math.abs)) };
}

export function renderNoisyReport(runs: readonly NoisyRecord[], header: string[], variants: string[], budgetsPerDim: number[], altStd = false): string {
  const dims = [...new Set(runs.map((r) => r.dim))].sort((a, b) => a - b);
  const fns = [...new Set(runs.map((r) => r.fn))].sort((a, b) => a - b);
  const at = (r: NoisyRecord, k: number) => r.checkpoints.find((c) => c.budget === k * r.dim);
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = ['# BBOB noisy suite, moderate noise (f101–f106)', '', ...header, ''];
  out.push(
    'Score: the noise-free f − f_opt of the recommended point. **rec**: the model\'s estimate (the distribution mean μ, `/best`\'s `estimated`); **obs**: the evaluated point with the lowest noisy value (`/best`\'s `observed`; the peers\' only recommendation). Targets 10^2…10^−8 reached by that value, averaged over functions and instances; medians of f − f_opt per function.',
    '',
    '## Targets reached by the noise-free value of the recommended point',
    '',
    row(['d', 'budget', ...variants.flatMap((v) => [`${v} rec`, `${v} obs`])]),
    `|${Array(2 + 2 * variants.length).fill('---').join('|')}|`,
  );
  for (const d of dims) for (const k of budgetsPerDim) {
    out.push(row([String(d), `${k}·d`, ...variants.flatMap((v) => {
      const cps = runs.filter((r) => r.variant === v && r.dim === d).map((r) => at(r, k)).filter((c): c is NoisyCheckpoint => c !== undefined);
      const rec = cps.filter((c) => c.recommended !== null).map((c) => c.recommended!);
      return [rec.length ? pct(share(rec)) : '–', cps.length ? pct(share(cps.map((c) => c.observed))) : '–'];
    })]));
  }
  for (const d of dims) for (const k of budgetsPerDim) {
    out.push('', `## d = ${d}, ${k}·d: median noise-free f − f_opt (rec / obs)`, '', row(['function', ...variants]), `|${Array(1 + variants.length).fill('---').join('|')}|`);
    for (const fn of fns) {
      out.push(row([`f${fn}`, ...variants.map((v) => {
        const cps = runs.filter((r) => r.variant === v && r.dim === d && r.fn === fn).map((r) => at(r, k)).filter((c): c is NoisyCheckpoint => c !== undefined);
        if (!cps.length) return '–';
        const rec = cps.filter((c) => c.recommended !== null).map((c) => c.recommended!);
        return `${rec.length ? sci(median(rec)) : '–'} / ${sci(median(cps.map((c) => c.observed)))}`;
      })]));
    }
  }
  out.push(
    '',
    '## Calibration of the model\'s estimate at μ',
    '',
    'Per method with a model estimate: runs whose predicted value fell below the true minimum f_opt (and those where even predicted + 1.96·std is below it); the share whose centre of the noisy value at μ, c(μ) (its mean; for the Cauchy model, which has none, its median f(μ) + 10), lies within predicted ± 1.96·std (95% nominal); and the median |z| = |predicted − c(μ)|/std (0.67 for a calibrated Gaussian).',
    '',
    row(['d', 'budget', 'method', 'runs', 'below f_opt', 'of which by > 1.96 std', 'coverage 95%', 'median abs z']),
    '|---|---|---|---|---|---|---|---|',
  );
  for (const d of dims) for (const k of budgetsPerDim) for (const v of variants) {
    const rs = runs.filter((r) => r.variant === v && r.dim === d);
    const cps = rs.map((r) => at(r, k)).filter((c): c is NoisyCheckpoint => c !== undefined);
    const c = calibration(cps, (i) => rs[i].f_opt);
    if (c.n) out.push(row([String(d), `${k}·d`, v, String(c.n), `${c.below} of ${c.n}`, `${c.belowBeyond}`, pct(c.cover95), c.medianAbsZ.toFixed(2)]));
    // The other forms of the standard deviation (StdForm) were measured before the engine reported the
    // basis variance itself (docs/ALGORITHM.md §28); with --alt-std they are reported again.
    if (altStd) {
      const forms: [StdForm, string][] = [['loo', 'std × leave-one-out scale (β fixed)'], ['basis', 'std with the basis variance'], ['basis-loo', 'std with the basis variance × leave-one-out scale (GLS)']];
      for (const [form, what] of forms) {
        if (!c.n || !cps.some((x) => typeof x.loo_scale === 'number')) break;
        const s = calibration(cps, (i) => rs[i].f_opt, form);
        if (s.n) out.push(row([String(d), `${k}·d`, `${v}, ${what}`, String(s.n), `${s.below} of ${s.n}`, `${s.belowBeyond}`, pct(s.cover95), s.medianAbsZ.toFixed(2)]));
      }
    }
  }
  return `${out.join('\n')}\n`;
}
