/**
 * Swimmer results as returns (higher is better), since f* is unknown and regret cannot be formed:
 * per method, the best return found after n evaluations (best queried point) and, for the
 * distribution methods, the best return of the search mean μ_k over the updates so far (the paper's
 * scoring of ES/ProbNES, evaluated outside the budget), averaged over seeds with 95% bands.
 */
import type { MethodName } from '../../src/engine/index.js';
import { isDistributionMethod } from '../lib/paper-reference.js';
import type { RunRecord } from '../lib/run.js';
import { bestSoFar, meanScoreCurve, seedStats, type SeedStats } from '../lib/scoring.js';
import { renderValueFigure, type PanelSeries } from '../lib/svg.js';

export interface ReturnGroup {
  method: MethodName;
  seeds: number;
  budget: number;
  /** Index n − 1: statistics over seeds of the best return among the first n evaluations. */
  best: SeedStats[];
  /** Index n − 1: best return of μ_k over k ≤ n/q (NaN mean before the first update). */
  mean: SeedStats[];
  /** Per seed, the best return within the budget. */
  finals: number[];
  ms: number;
}

export function groupReturns(records: readonly RunRecord[]): ReturnGroup[] {
  const methods = [...new Set(records.map((r) => r.method))];
  return methods.map((method) => {
    const runs = records.filter((r) => r.method === method);
    const budget = Math.min(...runs.map((r) => r.values.length));
    // The objective is −return: negate the minimisation curves back into returns.
    const best = runs.map((r) => bestSoFar(r.values).map((v) => -v));
    const mean = runs.map((r) => meanScoreCurve(r.mean_values, budget, r.batch).map((v) => -v));
    const at = (curves: number[][], i: number): number[] => curves.map((c) => c[i]);
    return {
      method,
      seeds: runs.length,
      budget,
      best: Array.from({ length: budget }, (_, i) => seedStats(at(best, i))),
      mean: Array.from({ length: budget }, (_, i) => seedStats(at(mean, i))),
      finals: best.map((c) => c[budget - 1]),
      ms: runs.reduce((a, r) => a + r.timings.total_ms, 0) / runs.length,
    };
  });
}

const CHECKPOINTS = [30, 75, 150];

function cell(s: SeedStats | undefined): string {
  if (!s || Number.isNaN(s.mean)) return '–';
  return `${s.mean.toFixed(1)} ± ${(1.96 * s.se).toFixed(1)}`;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface SwimmerReportMeta {
  command: string;
  origin: string;
  protocol: string;
  failures: number;
}

export function renderSwimmerReport(groups: readonly ReturnGroup[], meta: SwimmerReportMeta): string {
  const sorted = [...groups].sort((a, b) => (b.best.at(-1)?.mean ?? 0) - (a.best.at(-1)?.mean ?? 0));
  const out = ['# Swimmer (MuJoCo, 16-D linear policy): best return vs evaluations', ''];
  out.push(`Command: \`${meta.command}\``, '', meta.origin, '', meta.protocol + (meta.failures ? ` **${meta.failures} runs failed** (see runs.jsonl).` : ''), '');
  out.push(
    'Return = Σ over 1000 steps of (forward velocity − 10⁻⁴·|a|²), higher is better. Cells: mean over seeds ± 95%',
    'half-width (1.96·se). `best@n` = best return among the first n evaluations; `mean@n` = best return of',
    'the search mean μ_k after the updates within n evaluations, evaluated outside the budget (the paper\'s',
    'scoring of the evolution strategies and ProbNES). `median`, `min–max`: over seeds, best@budget.',
    '',
    '| method | seeds | best@30 | best@75 | best@150 | mean@150 | median best | min–max best | s/run |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const g of sorted) {
    const cells = [
      ...CHECKPOINTS.map((n) => cell(g.best[Math.min(n, g.budget) - 1])),
      isDistributionMethod(g.method) ? cell(g.mean[Math.min(150, g.budget) - 1]) : '',
      median(g.finals).toFixed(1),
      `${Math.min(...g.finals).toFixed(1)}–${Math.max(...g.finals).toFixed(1)}`,
      (g.ms / 1000).toFixed(1),
    ];
    out.push(`| ${g.method} | ${g.seeds} | ${cells.join(' | ')} |`);
  }
  out.push('');
  return out.join('\n');
}

/** Two panels: the best return queried so far, and the paper's scoring (the search mean for ES/ProbNES). */
export function renderSwimmerFigure(groups: readonly ReturnGroup[]): string {
  const series = (scoring: 'best' | 'paper'): PanelSeries[] =>
    groups.map((g) => ({
      method: g.method,
      pts: (scoring === 'paper' && isDistributionMethod(g.method) ? g.mean : g.best)
        .map((s, i) => ({ n: i + 1, y: s.mean, lo: s.mean - 1.96 * s.se, hi: s.mean + 1.96 * s.se }))
        .filter((p) => !Number.isNaN(p.y)),
    }));
  const budget = Math.max(...groups.map((g) => g.budget));
  return renderValueFigure(
    [
      { title: 'Swimmer 16-D: best queried', budget, series: series('best') },
      { title: 'paper scoring (μ for ES/ProbNES)', budget, series: series('paper') },
    ],
    'return (higher is better) vs evaluations, mean over seeds with 95% bands',
  );
}
