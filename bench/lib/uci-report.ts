/**
 * Results of the UCI surrogate benchmark: the best surrogate value found after n evaluations
 * (max over the first n points; higher is better), mean ± standard error over seeds, as a markdown
 * table and as the paper's figure (best observed value against evaluations, 95% bands).
 */
import type { MethodName } from '../../src/engine/index.js';
import { seedStats, type SeedStats } from './scoring.js';
import { renderValueFigure } from './svg.js';
import type { UciRunRecord } from './uci-run.js';

export interface UciGroup {
  dataset: string;
  dim: number;
  method: MethodName;
  seeds: number;
  budget: number;
  /** Index n − 1: statistics over seeds of the best surrogate value among the first n points. */
  best: SeedStats[];
  /** Mean wall time per run, ms. */
  ms: number;
}

/** Running maximum: out[n−1] = max(values[0..n−1]). */
export function bestSoFarMax(values: readonly number[]): number[] {
  let best = -Infinity;
  return values.map((v) => (best = Math.max(best, v)));
}

export function aggregateUci(records: readonly UciRunRecord[]): UciGroup[] {
  const byKey = new Map<string, UciRunRecord[]>();
  for (const r of records) {
    const key = `${r.dataset}\u0000${r.method}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return [...byKey.values()].map((runs) => {
    const budget = Math.min(...runs.map((r) => r.values.length));
    const curves = runs.map((r) => bestSoFarMax(r.values));
    return {
      dataset: runs[0].dataset,
      dim: runs[0].dim,
      method: runs[0].method,
      seeds: runs.length,
      budget,
      best: Array.from({ length: budget }, (_, i) => seedStats(curves.map((c) => c[i]))),
      ms: runs.reduce((a, r) => a + r.timings.total_ms, 0) / runs.length,
    };
  });
}

/** What results.md says of each data set besides the runs. */
export interface UciDatasetSummary {
  dataset: string;
  dim: number;
  rows: number;
  /** The paper's data set, or what this one stands in for. */
  paper: string;
  /** Largest target value in the data. */
  dataMax: number;
  /** Largest surrogate value over the data's own inputs. */
  surrogateDataMax: number;
  /** The surrogate at the prior mean. */
  atPriorMean: number;
  shrinkage: number;
  supportVectors: number;
}

export interface UciReportMeta {
  command: string;
  origin: string;
  seeds: number;
  budget: number;
  batch: number;
  svr: string;
  failures: number;
  wallSeconds: number | null;
}

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3)).replace('-', '−');
const cell = (s: SeedStats | undefined): string => (s && s.n > 0 ? `${fmt(s.mean)} ± ${fmt(s.se)}` : '–');

export function checkpoints(budget: number): number[] {
  return [...new Set([30, 75, 150, budget].filter((n) => n <= budget))];
}

export function renderUciReport(groups: readonly UciGroup[], summaries: readonly UciDatasetSummary[], meta: UciReportMeta): string {
  const out: string[] = ['# UCI surrogates: best surrogate value found (higher is better)', ''];
  out.push(`Command: \`${meta.command}\``, '', meta.origin, '');
  out.push(
    `Seeds ${meta.seeds}, budget ${meta.budget}, batch q = ${meta.batch}. Surrogate: ${meta.svr}.` +
      (meta.wallSeconds === null ? '' : ` Wall time of this invocation ${Math.round(meta.wallSeconds)} s.`) +
      (meta.failures ? ` **${meta.failures} runs failed** (see runs.jsonl).` : ''),
    '',
    'Cells: mean ± standard error over seeds of the best surrogate value among the first n evaluated points,',
    'in the target\'s units. `data max`: the largest target in the data set; `SVR max on data`: the largest',
    'surrogate value at the data set\'s own inputs; `at prior mean`: the surrogate at the fitted prior\'s mean.',
    '',
  );
  const datasets = [...new Set(groups.map((g) => g.dataset))].sort();
  for (const ds of datasets) {
    const rows = groups.filter((g) => g.dataset === ds).sort((a, b) => a.method.localeCompare(b.method));
    const s = summaries.find((x) => x.dataset === ds);
    const budget = Math.max(...rows.map((g) => g.budget));
    const cps = checkpoints(budget);
    out.push(`## ${ds} (d = ${rows[0].dim})`, '');
    if (s) {
      out.push(
        `${s.paper}. ${s.rows} rows; prior: OAS shrinkage ρ = ${s.shrinkage.toFixed(4)}; ${s.supportVectors} support vectors. ` +
          `Data max ${fmt(s.dataMax)}, SVR max on data ${fmt(s.surrogateDataMax)}, at prior mean ${fmt(s.atPriorMean)}.`,
        '',
      );
    }
    out.push(`| method | seeds | ${cps.map((n) => `best@${n}`).join(' | ')} | s/run |`, `|---|---|${cps.map(() => '---').join('|')}|---|`);
    for (const g of rows) out.push(`| ${g.method} | ${g.seeds} | ${cps.map((n) => cell(g.best[n - 1])).join(' | ')} | ${(g.ms / 1000).toFixed(1)} |`);
    out.push('');
  }
  return out.join('\n');
}

/** The paper's figure: one panel per data set, best value found against evaluations, 95% bands. */
export function renderUciFigure(groups: readonly UciGroup[]): string {
  const datasets = [...new Set(groups.map((g) => g.dataset))].sort();
  return renderValueFigure(
    datasets.map((ds) => {
      const gs = groups.filter((g) => g.dataset === ds);
      return {
        title: `${ds} (d = ${gs[0].dim})`,
        budget: Math.max(...gs.map((g) => g.budget)),
        series: gs.map((g) => ({
          method: g.method,
          pts: g.best.map((s, i) => ({ n: i + 1, y: s.mean, lo: s.mean - 1.96 * s.se, hi: s.mean + 1.96 * s.se })),
        })),
      };
    }),
    'best surrogate value found vs evaluations (higher is better); 95% bands from the seed spread',
  );
}
