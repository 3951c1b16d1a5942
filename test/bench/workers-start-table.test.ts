/**
 * docs/parallel-workers.md, "During the ProbNES start phase": the rows of 3 and 8 asynchronous workers are
 * recomputed from their published runs (bench:workers, one line per run with its final regret at its
 * declared budget): each cell is the share of the 11 targets over 24 functions × 5
 * instances with the start phase, and "(before …)" the same runs with `start_phase: "off"`.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { markdownTables, readJsonl, ROOT } from '../../bench/lib/published.js';
import { TARGETS } from '../../bench/lib/bbob-score.js';

/** Where each (d, W) row's runs are published (folders workers<W>-d<d> and workers<W>-d<d>-off). */
const DIRS: Record<string, string> = {
  '2/3': 'bench-results/published/2026-11-29-workers-restart',
  '5/3': 'bench-results/published/2026-11-29-workers-restart',
  '10/3': 'bench-results/published/2026-11-29-workers-d10',
  '20/3': 'bench-results/published/2026-11-29-workers-d20',
  '2/8': 'bench-results/published/2026-11-29-workers8-d2',
};

type Run = { function: string; dim: number; instance: number; workers: number; budget: number; max_trials: number; regret: number };

/** Each folder's runs, read once. */
const runsOf = new Map<string, Run[]>();
const read = (dir: string) => runsOf.get(dir) ?? runsOf.set(dir, readJsonl<Run>(path.join(ROOT, dir, 'runs.jsonl.gz'))).get(dir)!;

/** Share of BBOB's targets reached by the final regret (f_best − f_opt), in percent with one decimal, of the runs at this budget. */
function share(dir: string, budget: number, workers: number): string | null {
  const runs = read(dir).filter((r) => r.budget === budget && r.workers === workers);
  if (runs.length === 0) return null;
  expect(runs.length, `${dir} at ${budget}`).toBe(24 * 5);
  expect(new Set(runs.map((r) => `${r.function}/${r.instance}`)).size).toBe(120);
  const reached = runs.reduce((s, r) => s + TARGETS.filter((t) => r.regret <= t).length, 0);
  return ((100 * reached) / (runs.length * TARGETS.length)).toFixed(1);
}

describe('docs/parallel-workers.md: several workers during the start phase', () => {
  it('every cell of several workers and its "before" are the published runs\' shares', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/parallel-workers.md'), 'utf8');
    const table = markdownTables(doc).find((t) => t.header.join() === 'd,W,5·d,10·d,20·d,50·d');
    expect(table).toBeDefined();
    let checked = 0;
    for (const row of table!.rows.filter((r) => !r[1]!.startsWith('1'))) {
      const d = Number(row[0]);
      const w = Number(row[1]);
      const dir = DIRS[`${d}/${w}`];
      expect(dir, `no published runs named for d = ${d}, W = ${w}`).toBeDefined();
      [5, 10, 20, 50].forEach((k, i) => {
        const cell = row[i + 2]!.replace(/\*/g, '');
        const withPhase = share(`${dir}/workers${w}-d${d}`, k * d, w);
        const before = share(`${dir}/workers${w}-d${d}-off`, k * d, w);
        if (withPhase === null) return expect(cell, `d = ${d}, ${k}·d`).toBe('–');
        const m = cell.match(/^([\d.]+) \((?:before )?([\d.]+)\)$/);
        expect(m, `d = ${d}, ${k}·d: ${cell}`).not.toBeNull();
        expect([m![1], m![2]], `d = ${d}, ${k}·d`).toEqual([withPhase, before]);
        // the larger of the two is the bold one
        const bold = row[i + 2]!.match(/\*\*([\d.]+)\*\*/)?.[1];
        expect(bold, `d = ${d}, ${k}·d: the larger share in bold`).toBe(Number(withPhase) >= Number(before) ? withPhase : before);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(18);
  });
});
