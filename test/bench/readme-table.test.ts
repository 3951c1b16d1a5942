/**
 * The README's "Which method when" table recomputed from the published raw runs
 * (bench-results/published/<name>/runs.jsonl.gz) with the benchmark's own aggregation
 * (bench/lib/aggregate.ts, scoring.ts): best scoring, ln mean regret at 150 evaluations. A column is
 * checked when a published run holds its method (the default profile's run, when published, under
 * any name); the baselines' columns must be there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { aggregate, statAt } from '../../bench/lib/aggregate.js';
import { publishedRunSets, ROOT } from '../../bench/lib/published.js';
import type { RunRecord } from '../../bench/lib/run.js';
import { fmtLn, lnFloored } from '../../bench/lib/scoring.js';
const COLUMNS: Record<string, { method: string; profile?: string }> = {
  'Prob-CMAES (default)': { method: 'prob-cmaes', profile: 'default' },
  'CMA-ES': { method: 'cmaes' },
  SNES: { method: 'snes' },
  BO: { method: 'bo' },
  πBO: { method: 'pibo' },
  random: { method: 'random' },
};
const ROWS: Record<string, [string, number]> = {
  'Ackley 2-D': ['ackley', 2], Branin: ['branin', 2], 'Griewank 2-D': ['griewank', 2], 'Levy 2-D': ['levy', 2],
  'Styblinski–Tang 2-D': ['styblinski-tang', 2], 'Rastrigin 2-D': ['rastrigin', 2], 'Shekel 4-D': ['shekel', 4],
};

type Published = RunRecord & { provenance?: { command: string } };
/** Paper-protocol runs: records of the other benchmarks' runs.jsonl.gz (BBOB, speed, workers) have no `function`/`values` of these tasks. */
const publishedRuns = () => publishedRunSets<Published>();

describe("README: 'Which method when' table", () => {
  it('each cell with published runs equals ln mean regret (best scoring, 150 evaluations) recomputed from them', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Which method when'));
    const lines = section.split('\n').filter((l) => l.startsWith('| '));
    const headerAt = lines.findIndex((l) => l.startsWith('| function | Prob-CMAES (default)'));
    expect(headerAt).toBeGreaterThanOrEqual(0);
    const header = lines[headerAt]!.split('|').slice(2, -1).map((c) => c.trim());
    // The default profile changes over time and each validation publishes its runs: the column is
    // computed from the directory the README names for it, not pooled over every published run.
    const defaultDir = /Prob-CMAES \(default\) from `(?:bench-results\/published\/)?([^`]+)\/`/.exec(readme)?.[1];
    expect(defaultDir).toBeDefined();
    const published = publishedRuns();
    const checked = new Set<string>();
    for (const line of lines.slice(headerAt + 1).filter((l) => !l.startsWith('|---'))) {
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      const task = ROWS[cells[0]!];
      if (!task) break;
      header.forEach((col, i) => {
        const want = COLUMNS[col]!;
        // The default profile is told apart by its command line (--profile default, or no --profile).
        const runs = published.filter((p) => !want.method.startsWith('prob-') || p.dir === defaultDir).flatMap((p) => p.runs).filter((r) => r.method === want.method && r.function === task[0] && r.dim === task[1] &&
          (want.method.startsWith('prob-') ? !/--profile paper/.test(r.provenance?.command ?? '--profile paper') : true));
        if (runs.length === 0) return;
        const [g] = aggregate(runs);
        const cell = cells[i + 1]!.split(' ')[0];
        expect(cell, `${cells[0]} / ${col}`).toBe(fmtLn(lnFloored(statAt(g!.best, 150)!.mean)));
        checked.add(col);
      });
    }
    for (const col of ['Prob-CMAES (default)', 'CMA-ES', 'SNES', 'BO', 'πBO', 'random']) expect(checked).toContain(col);
  });
});
