/**
 * The markdown report: measured ln mean regret at fixed evaluation counts under both scorings,
 * next to the paper's reference values (paper-reference.ts).
 */
import type { Group } from './aggregate.js';
import { statAt, taskLabel } from './aggregate.js';
import { isDistributionMethod, PAPER_SOURCE, paperValue } from './paper-reference.js';
import { fmtLn, lnFloored, LN_FLOOR } from './scoring.js';

export interface ReportMeta {
  command: string;
  /** The code the runs came from (provenance.ts describeProvenance). */
  origin: string;
  seeds: number;
  budget: number;
  batch: number;
  prior: string;
  options: string;
  failures: number;
}

const CHECKPOINTS = [30, 75, 150];

function lnAt(g: Group, which: 'best' | 'mean', n: number): string {
  if (which === 'mean' && !isDistributionMethod(g.method)) return '';
  const s = statAt(g[which], n);
  return s ? fmtLn(lnFloored(s.mean)) : '–';
}

function paperCell(g: Group): string {
  const p = paperValue(g.fn, g.dim, g.method);
  return p === null ? '' : fmtLn(p);
}

export function renderReport(groups: readonly Group[], meta: ReportMeta): string {
  const sorted = [...groups].sort((a, b) => a.fn.localeCompare(b.fn) || a.dim - b.dim || a.method.localeCompare(b.method));
  const out: string[] = [];
  out.push('# ProbNES benchmark: ln(mean regret) over seeds', '');
  out.push(`Command: \`${meta.command}\``, '', meta.origin, '');
  out.push(`Seeds ${meta.seeds}, budget ${meta.budget}, batch q = ${meta.batch}, prior ${meta.prior}, options ${meta.options}.` + (meta.failures ? ` **${meta.failures} runs failed** (see runs.jsonl).` : ''), '');
  out.push(
    'Regret = f − f* clamped at 0, averaged over seeds, then ln. `best` = best queried point (the honest',
    'score); `mean` = best f(μ_k) over updates k ≤ n/q, evaluated outside the budget (distribution methods',
    `only). ln values are floored at ${String(LN_FLOOR).replace('-', '−')} (printed ${fmtLn(LN_FLOOR)}). \`paper\` = ${PAPER_SOURCE}; it is mean-scored`,
    'for the ES/ProbNES methods and best-scored for BO/πBO/random, so compare it with the matching column.',
    '',
  );
  out.push('| function | method | best@30 | best@75 | best@150 | mean@30 | mean@75 | mean@150 | paper@150 | ms/run |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const g of sorted) {
    const cells = [
      ...CHECKPOINTS.map((n) => lnAt(g, 'best', n)),
      ...CHECKPOINTS.map((n) => lnAt(g, 'mean', n)),
      paperCell(g),
      g.ms.toFixed(0),
    ];
    out.push(`| ${taskLabel(g.fn, g.dim)} | ${g.method} | ${cells.join(' | ')} |`);
  }
  out.push('', ...renderWide(sorted), '');
  return out.join('\n');
}

/** Compact view at 150 evaluations: one row per task, one cell per method, "best / mean (paper)". */
function renderWide(sorted: readonly Group[]): string[] {
  const methods = [...new Set(sorted.map((g) => g.method))];
  const tasks = [...new Set(sorted.map((g) => taskLabel(g.fn, g.dim)))];
  const lines = ['## At 150 evaluations: best / mean (paper)', ''];
  lines.push(`| function | ${methods.join(' | ')} |`, `|---|${methods.map(() => '---').join('|')}|`);
  for (const t of tasks) {
    const cells = methods.map((m) => {
      const g = sorted.find((x) => x.method === m && taskLabel(x.fn, x.dim) === t);
      if (!g) return '';
      const mean = isDistributionMethod(m) ? ` / ${lnAt(g, 'mean', 150)}` : '';
      const p = paperCell(g);
      return `${lnAt(g, 'best', 150)}${mean}${p ? ` (${p})` : ''}`;
    });
    lines.push(`| ${t} | ${cells.join(' | ')} |`);
  }
  return lines;
}
