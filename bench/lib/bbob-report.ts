/**
 * results.md of bench:bbob: a summary across dimensions (share of targets reached per method and
 * budget, as the field quotes it), then per dimension the targets reached per function at each
 * budget, the median final f − f_opt per function, wins per function between methods, and the
 * run time of each (method, budget) cell.
 */
import { BBOB_NAMES } from '../../src/engine/benchmarks/bbob.js';
import { ecdfArea, ecdfPoints, median, TARGETS, targetShare, type BbobRunRecord } from './bbob-score.js';

export interface BbobReportMeta {
  /** Command and provenance lines. */
  header: string[];
  budgetPerDim: number[];
  variants: string[];
  failures: number;
}

const pct = (x: number): string => (Number.isNaN(x) ? '–' : `${Math.round(100 * x)}%`);
const sci = (x: number): string => (Number.isNaN(x) ? '–' : x === 0 ? '0' : x === Infinity ? '∞' : x.toExponential(1).replace('e+', 'e').replace('-', '−'));
const secs = (ms: number): string => (Number.isNaN(ms) ? '–' : ms >= 10_000 ? `${(ms / 1000).toFixed(0)} s` : `${(ms / 1000).toFixed(1)} s`);
const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
const rule = (n: number): string => `|${Array(n).fill('---').join('|')}|`;

/** Per function, the better of two methods: more targets at the largest budget, then the lower median final f − f_opt. */
function beats(a: BbobRunRecord[], b: BbobRunRecord[], nAt: (r: BbobRunRecord) => number): boolean {
  const sa = targetShare(a, nAt), sb = targetShare(b, nAt);
  if (sa !== sb) return sa > sb;
  return median(a.map((r) => finalDelta(r))) < median(b.map((r) => finalDelta(r)));
}

const finalDelta = (r: BbobRunRecord): number => (r.trajectory.length ? r.trajectory[r.trajectory.length - 1][1] : Infinity);

/**
 * With --declare-budget: per dimension and budget B = k·d, the share at B of each service variant's run
 * that declared B (label `<base>@<k>d`) beside each other variant's share at B (run to the largest
 * budget), and the best of those others ("best peer").
 */
export function renderDeclaredBudget(runs: readonly BbobRunRecord[], budgets: readonly number[], bases: readonly string[], peers: readonly string[]): string {
  const dims = [...new Set(runs.map((r) => r.dim))].sort((a, b) => a - b);
  const share = (v: string, d: number, k: number) => targetShare(runs.filter((r) => r.variant === v && r.dim === d), (r) => k * r.dim);
  const head = [...bases.map((b) => `${b} (max_trials = B)`), ...peers, 'best peer'];
  const out = ['## Budget declared: share of targets at B', '', row(['d', 'B', ...head]), rule(head.length + 2)];
  for (const d of dims) {
    for (const k of budgets) {
      const p = peers.map((v) => share(v, d, k));
      const best = p.filter((x) => !Number.isNaN(x)).reduce((m, x) => Math.max(m, x), -Infinity);
      const fmt = (x: number) => (Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`);
      // No `<base>@<k>d` runs: that budget's declared run is the undeclared one (the same phase; bbob-args.ts).
      const own = (b: string) => (runs.some((r) => r.variant === `${b}@${k}d` && r.dim === d) ? share(`${b}@${k}d`, d, k) : share(b, d, k));
      out.push(row([String(d), `${k}·d`, ...bases.map((b) => fmt(own(b))), ...p.map(fmt), best === -Infinity ? '–' : fmt(best)]));
    }
  }
  return out.join('\n');
}

export function renderBbobReport(runs: readonly BbobRunRecord[], meta: BbobReportMeta): string {
  const { budgetPerDim: budgets, variants } = meta;
  const dims = [...new Set(runs.map((r) => r.dim))].sort((a, b) => a - b);
  const at = (k: number) => (r: BbobRunRecord) => k * r.dim;
  const pick = (v: string, d: number, fn?: number) => runs.filter((r) => r.variant === v && r.dim === d && (fn === undefined || r.fn === fn));
  const out: string[] = ['# BBOB noiseless suite', '', ...meta.header, ''];
  out.push(
    `Score: share of the ${TARGETS.length} targets f − f_opt ≤ 10^2, 10^1, …, 10^−8 reached per run (best evaluated point so far), averaged over`,
    'functions and instances. x in [−5, 5]^d (points projected onto it), prior N(0, 2²I), one generation per ask.',
    meta.failures > 0 ? `**${meta.failures} runs failed** (listed in runs.jsonl with their error).` : '',
    '',
    '## Summary: targets reached, all functions',
    '',
    row(['d', 'budget', ...variants]),
    rule(variants.length + 2),
  );
  for (const d of dims) for (const k of budgets) out.push(row([String(d), `${k}·d`, ...variants.map((v) => pct(targetShare(pick(v, d), at(k))))]));
  out.push('', row(['d', 'runs', ...variants]), rule(variants.length + 2));
  for (const d of dims) out.push(row([String(d), 'per method', ...variants.map((v) => String(pick(v, d).length))]));
  const hi = budgets[budgets.length - 1];
  if (hi > 1) {
    out.push(
      '',
      `### ECDF area over 1·d…${hi}·d`,
      '',
      `The runtime ECDF (share of (run, target) pairs reached) averaged over evaluations/d from 1 to ${hi} on a log scale, (1/ln ${hi}) ∫ F(e^t) dt: one number per method that weighs every budget of the range alike (1 = every target at 1·d).`,
      '',
      row(['d', ...variants]),
      rule(variants.length + 1),
    );
    for (const d of dims) out.push(row([String(d), ...variants.map((v) => (pick(v, d).length ? ecdfArea(ecdfPoints(pick(v, d)), 1, hi).toFixed(3) : '–'))]));
  }

  for (const d of dims) {
    const fns = [...new Set(runs.filter((r) => r.dim === d).map((r) => r.fn))].sort((a, b) => a - b);
    out.push('', `## d = ${d}`, '');
    for (const k of budgets) {
      out.push(`### Targets reached at ${k}·d = ${k * d} evaluations`, '', row(['function', ...variants]), rule(variants.length + 1));
      for (const fn of fns) out.push(row([`f${fn} ${BBOB_NAMES[fn - 1]}`, ...variants.map((v) => pct(targetShare(pick(v, d, fn), at(k))))]));
      out.push(row(['**all**', ...variants.map((v) => `**${pct(targetShare(pick(v, d), at(k)))}**`)]), '');
    }
    const last = budgets[budgets.length - 1];
    out.push(`### Median final f − f_opt (at ${last}·d) and the winner per function`, '', row(['function', ...variants, 'best']), rule(variants.length + 2));
    const wins = new Map<string, number>(variants.map((v) => [v, 0]));
    const pair = new Map<string, number>();
    for (const fn of fns) {
      const groups = variants.map((v) => pick(v, d, fn));
      const present = variants.filter((_, i) => groups[i].length > 0);
      const best = present.filter((v) => present.every((w) => w === v || !beats(pick(w, d, fn), pick(v, d, fn), at(last))));
      if (best.length === 1) wins.set(best[0], (wins.get(best[0]) ?? 0) + 1);
      for (const a of present) for (const b of present) if (a !== b && beats(pick(a, d, fn), pick(b, d, fn), at(last))) pair.set(`${a}\u0000${b}`, (pair.get(`${a}\u0000${b}`) ?? 0) + 1);
      out.push(row([`f${fn}`, ...groups.map((g) => sci(median(g.map(finalDelta)))), best.length === 1 ? best[0] : `tie (${best.join(', ')})`]));
    }
    out.push('', `### Wins per function at ${last}·d (row beats column on that many functions: more targets, then lower median)`, '', row(['', ...variants, 'sole best']), rule(variants.length + 2));
    for (const a of variants) out.push(row([a, ...variants.map((b) => (a === b ? '' : String(pair.get(`${a}\u0000${b}`) ?? 0))), String(wins.get(a) ?? 0)]));
    out.push('', '### Run time of each cell (wall time of all its runs up to the budget, and per run)', '', row(['method', ...budgets.map((k) => `${k}·d`), 'per run']), rule(budgets.length + 2));
    for (const v of variants) {
      const rs = pick(v, d);
      const total = (k: number) => (rs.length === 0 ? NaN : rs.reduce((s, r) => s + (r.ms_at[String(k * d)] ?? NaN), 0));
      out.push(row([v, ...budgets.map((k) => secs(total(k))), secs(rs.length ? total(last) / rs.length : NaN)]));
    }
  }
  return `${out.join('\n')}\n`;
}
