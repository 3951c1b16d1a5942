/**
 * Benchmark provenance: every results table of docs/BENCHMARKS.md, its history
 * (docs/benchmarks-history.md), the README and the pages that hold measured tables (priors, parallel
 * workers) names the commit and the command that produced it and the published raw runs behind it
 * (bench-results/published/…), every published path README.md and docs/*.md name exists, every published
 * directory holds its results (results.md or <name>.md) and its raw runs (runs.jsonl.gz or
 * <name>.jsonl.gz); and the tables whose raw runs are published are recomputed from them: every
 * ablation table, the workers tables, the speed tables. The README's "Which method when" table is
 * recomputed by readme-table.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownTables, normMinus, PUBLISHED, readJsonl, ROOT, upperMedian, type MarkdownTable } from '../../bench/lib/published.js';
import { targetShare, type BbobRunRecord } from '../../bench/lib/bbob-score.js';
import { fmtLn, lnFloored } from '../../bench/lib/scoring.js';

/** The documents holding measured tables. */
const DOCS = ['docs/BENCHMARKS.md', 'docs/benchmarks-history.md', 'README.md', 'docs/priors.md', 'docs/parallel-workers.md'] as const;
/** Today's results and the history they replaced: the tables recomputed below may sit in either. */
const BENCH_DOCS = ['docs/BENCHMARKS.md', 'docs/benchmarks-history.md'] as const;
/** Every markdown document a reader is pointed to: README.md and docs/*.md. */
const ALL_DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (doc: string) => fs.readFileSync(path.join(ROOT, doc), 'utf8');
const benchTables = () => BENCH_DOCS.flatMap((doc) => markdownTables(read(doc)));

/** Sections whose tables are reference, not measurements: README's, and the history's index by date. */
const README_REFERENCE_SECTIONS = ['## Which method when', '## Configuration', '## CLI'];
const HISTORY_INDEX = '## By date';

/**
 * Published directories that are not a benchmark's runs + results: bench:load's (load-*), which measures
 * throughput and latency over seconds; its results.md is its whole output (no per-run records).
 */
const isRunlessOutput = (dir: string) => /^load-/.test(dir);

const COMMIT = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/;
const COMMAND = /npm run (bench|example):|npx tsx bench\/|scripts\/bench-[\w-]+\.sh/;
/** A published path as the documents write it; placeholders (<name>, *) are skipped. */
const PUBLISHED_PATH = /bench-results\/published\/[A-Za-z0-9._/-]*[A-Za-z0-9_/-](?![<*A-Za-z0-9_-])/g;

function resultsTables(doc: string): MarkdownTable[] {
  return markdownTables(read(doc)).filter((t) => !(doc === 'docs/benchmarks-history.md' && t.headings[t.headings.length - 1] === HISTORY_INDEX)).filter((t) => doc !== 'README.md' || !README_REFERENCE_SECTIONS.includes(t.headings[t.headings.length - 1]!) ||
    // "Which method when" also holds a results table (recomputed by readme-table.test.ts).
    t.header[0] === 'function');
}

/** What the table's section (with its parent's introduction) lacks. */
function missingProvenance(t: MarkdownTable): string[] {
  const text = `${t.parentIntro}\n${t.section}`;
  const missing: string[] = [];
  if (!COMMIT.test(text)) missing.push('a commit');
  if (!COMMAND.test(text)) missing.push('a command');
  const paths = [...text.matchAll(PUBLISHED_PATH)].map((m) => m[0]);
  if (!paths.some((p) => fs.existsSync(path.join(ROOT, p)))) missing.push('an existing bench-results/published/ path');
  return missing;
}

describe('benchmark provenance in docs/BENCHMARKS.md and README.md', () => {
  it('every results table sits in a section naming its commit, its command and its published raw runs', () => {
    const problems: string[] = [];
    for (const doc of DOCS) {
      for (const t of resultsTables(doc)) {
        const missing = missingProvenance(t);
        if (missing.length) problems.push(`${doc}:${t.line} (${t.headings[t.headings.length - 1]!}) lacks ${missing.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('no table is introduced as having runs that were not kept or not published', () => {
    const problems = DOCS.flatMap((doc) => resultsTables(doc)
      .filter((t) => /runs[^.]{0,40}not\s+(kept|published)|not\s+(kept|published)[^.]{0,20}runs/i.test(t.lead))
      .map((t) => `${doc}:${t.line} | ${t.header.join(' | ')} |`));
    expect(problems).toEqual([]);
  });

  it('every bench-results/published/ path the documents name exists (except as a command\'s --out, which it creates)', () => {
    const missing = ALL_DOCS.flatMap((doc) => [...read(doc).matchAll(PUBLISHED_PATH)]
      .filter((m) => !read(doc).slice(0, m.index).endsWith('--out '))
      .map((m) => m[0]).filter((p) => !fs.existsSync(path.join(ROOT, p))).map((p) => `${doc}: ${p}`));
    expect(missing).toEqual([]);
  });

  it('every published directory holds results (.md) and compressed raw runs (.jsonl.gz) for each of them', () => {
    const problems: string[] = [];
    // Each directory holding raw runs (at any depth: some publish one sub-directory per dimension) needs
    // the results they produced in markdown.
    const check = (dir: string): number => {
      const entries = fs.readdirSync(path.join(PUBLISHED, dir), { withFileTypes: true });
      const files = entries.filter((e) => e.isFile()).map((e) => e.name);
      const runs = files.filter((f) => f.endsWith('.jsonl.gz'));
      if (files.some((f) => f.endsWith('.jsonl'))) problems.push(`${dir}: uncompressed .jsonl`);
      // results.md or a README.md for the directory, else a .md per run file: <name>.md or <name>.results.md
      // beside <name>.jsonl.gz or <name>.runs.jsonl.gz.
      if (!files.includes('results.md') && !files.includes('README.md')) {
        for (const r of runs) {
          const stem = r.replace(/(\.runs)?\.jsonl\.gz$/, '');
          if (!files.includes(`${stem}.md`) && !files.includes(`${stem}.results.md`)) problems.push(`${dir}: ${r} without results.md, README.md, ${stem}.md or ${stem}.results.md`);
        }
      }
      return runs.length + entries.filter((e) => e.isDirectory()).reduce((n, e) => n + check(path.join(dir, e.name)), 0);
    };
    for (const dir of fs.readdirSync(PUBLISHED)) {
      if (isRunlessOutput(dir)) continue;
      if (check(dir) === 0) problems.push(`${dir}: no runs.jsonl.gz`);
    }
    expect(problems).toEqual([]);
  });
});

describe('documented tables recomputed from the published raw runs', () => {
  const benchmarks = benchTables();

  it('every ablation table: ln mean regret of the best queried point (mean scoring) over the seeds', () => {
    // The ablations' files named (in backticks) in the paragraph above a table whose columns are "variant · method".
    const dir = path.join(PUBLISHED, 'ablations');
    const tables = benchmarks.filter((t) => t.header.slice(1).every((h) => h.includes(' · ')) && t.header[0] === 'function');
    let checked = 0;
    for (const t of tables) {
      const names = [...t.lead.matchAll(/`([a-z0-9.-]+?)(?:\.jsonl\.gz)?`/g)].map((m) => m[1]!).filter((n) => fs.existsSync(path.join(dir, `${n}.jsonl.gz`)));
      if (!names.length) continue;
      const rows = names.flatMap((n) => readJsonl<{ label: string; method: string; fn: string; best: number; mean: number }>(path.join(dir, `${n}.jsonl.gz`)));
      const columns = t.header.slice(1).map((h) => {
        const at = h.lastIndexOf(' · ');
        return { label: h.slice(0, at), method: h.slice(at + 3) };
      });
      // A table of another ablation's files (BBOB medians) is not this scoring: only tables whose every column is in the files.
      if (!columns.every((c) => rows.some((r) => r.label === c.label && r.method === c.method))) continue;
      for (const row of t.rows) {
        columns.forEach((c, k) => {
          const runs = rows.filter((r) => r.fn === row[0] && r.label === c.label && r.method === c.method);
          const ln = (xs: number[]) => fmtLn(lnFloored(xs.reduce((a, x) => a + x, 0) / xs.length));
          const want = runs.length ? `${ln(runs.map((r) => r.best))} (${ln(runs.map((r) => r.mean))})` : '–';
          expect(normMinus(row[k + 1]!), `line ${t.line}: ${row[0]} / ${c.label} · ${c.method}`).toBe(normMinus(want));
          checked++;
        });
      }
    }
    // acquisition, active-set, gradient, batch, prior, dimension (two tables), profile: ≥ 8 tables of 9+ cells.
    expect(checked).toBeGreaterThanOrEqual(100);
  });
});

describe('paper-protocol tables recomputed from their published runs', () => {
  type PaperRun = { method: string; function: string; dim: number; optimum: number; values: number[] };
  /** ln mean regret of the best queried point at 150 evaluations over the seeds, as bench:paper prints it (best@150). */
  const best150 = (runs: PaperRun[]) => fmtLn(lnFloored(runs.reduce((a, r) => a + Math.max(0, Math.min(...r.values.slice(0, 150)) - r.optimum), 0) / runs.length));
  /** "Rastrigin 1-D" → rastrigin, 1; "StyblinskiTang" → styblinski-tang, 2 (the functions without a dimension are 2-D, Shekel 4-D). */
  const matches = (row: string, r: PaperRun) => {
    const m = row.match(/^(.*?)(?: (\d+)-D)?$/)!;
    return r.function.replace(/-/g, '') === m[1]!.toLowerCase() && (m[2] === undefined || r.dim === Number(m[2]));
  };

  it('"The mean\'s bounds and step": the reference (commit 0630e33) and the final column of "reference → final", every cell', () => {
    const t = benchTables().find((x) => x.header[1] === 'Prob-CMAES reference → final');
    expect(t).toBeDefined();
    const reference = readJsonl<PaperRun>(path.join(PUBLISHED, '2026-11-24-reference-0630e33-paper/runs.jsonl.gz'));
    const final = readJsonl<PaperRun>(path.join(PUBLISHED, '2026-11-24-probnes-default-paper/runs.jsonl.gz'));
    // Both directories are named in the table's section: the test reads what a reader is pointed to.
    expect(t!.section).toContain('2026-11-24-reference-0630e33-paper');
    expect(t!.section).toContain('2026-11-24-probnes-default-paper');
    let checked = 0;
    for (const row of t!.rows) {
      ['prob-cmaes', 'prob-xnes', 'prob-snes'].forEach((method, k) => {
        const [ref, fin] = row[k + 1]!.split(' → ').map((c) => normMinus(c.split(' ')[0]!));
        const of = (runs: PaperRun[]) => runs.filter((r) => r.method === method && matches(row[0]!, r));
        expect(of(reference), `${row[0]} ${method}`).toHaveLength(15);
        expect(ref, `${row[0]} ${method} reference`).toBe(normMinus(best150(of(reference))));
        expect(fin, `${row[0]} ${method} final`).toBe(normMinus(best150(of(final))));
        checked++;
      });
    }
    expect(checked).toBe(27);
  });
});

describe('BBOB share-of-targets tables recomputed from their published runs', () => {
  it('"The mean\'s bounds and step": every measured cell of the final / line step / before / lq-cmaes / bo / cmaes table', () => {
    const t = benchTables().find((x) => x.header.join(' | ') === 'd | budget | prob-cmaes final | prob-cmaes line step | prob-cmaes before | lq-cmaes | bo | cmaes');
    expect(t).toBeDefined();
    // Column → the published directories (named in the section) and the method; d = 10 runs sit in their own directories.
    const columns: [string[], string][] = [
      [['2026-11-24-probnes-default-bbob', '2026-11-24-probnes-default-bbob-d10'], 'prob-cmaes'],
      [['2026-11-24-probnes-line-step-bbob'], 'prob-cmaes'],
      [['2026-11-24-before-77f930c-bbob', '2026-11-24-before-77f930c-bbob-d10'], 'prob-cmaes'],
      [['bbob-2026-11-23'], 'lq-cmaes'], [['bbob-2026-11-23'], 'bo'], [['bbob-2026-11-23'], 'cmaes'],
    ];
    for (const [dirs] of columns) for (const dir of dirs) expect(`${t!.parentIntro}\n${t!.section}`).toContain(dir);
    const cache = new Map<string, BbobRunRecord[]>();
    const runsOf = (dir: string) => cache.get(dir) ?? cache.set(dir, readJsonl<BbobRunRecord>(path.join(PUBLISHED, dir, 'runs.jsonl.gz'))).get(dir)!;
    let checked = 0;
    for (const row of t!.rows) {
      const [d, m] = [Number(row[0]), Number(row[1]!.replace('·d', ''))];
      columns.forEach(([dirs, method], k) => {
        const runs = dirs.filter((dir) => fs.existsSync(path.join(PUBLISHED, dir, 'runs.jsonl.gz'))).flatMap(runsOf)
          .filter((r) => r.method === method && r.dim === d && r.budget >= m * d);
        // One run per function and instance: bbob-2026-11-23 also holds single probe runs to a larger budget
        // (bo at d = 5, f1 instance 1, to 50·d), so the run of the cell's own command, the smallest budget, counts.
        const byTask = new Map<string, BbobRunRecord>();
        for (const r of runs) if ((byTask.get(`${r.fn}:${r.instance}`)?.budget ?? Infinity) > r.budget) byTask.set(`${r.fn}:${r.instance}`, r);
        const unique = [...byTask.values()];
        const cell = row[k + 2]!.replace(/\*\*/g, '');
        if (cell === '–') return expect(unique.length, `d=${d} ${m}·d ${method}: "–" but all runs published`).toBeLessThan(120);
        expect(unique, `d=${d} ${m}·d column ${k + 3}`).toHaveLength(120);
        expect(cell.split(' ')[0], `d=${d} ${m}·d column ${k + 3}`).toBe(`${(100 * targetShare(unique, () => m * d)).toFixed(1)}%`);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(27);
  });
});

describe('bench:lq-cmaes tables recomputed from their published runs', () => {
  type LqRun = { function: string; d: number; seed: number; method: string; evaluations: number | null };
  /** Every runs.jsonl.gz under a published directory (one sub-directory per command). */
  const runsUnder = (dir: string): LqRun[] => fs.readdirSync(path.join(PUBLISHED, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? runsUnder(path.join(dir, e.name)) : e.name === 'runs.jsonl.gz' ? readJsonl<LqRun>(path.join(PUBLISHED, dir, e.name)) : []);
  /** As bench/lq-cmaes.ts prints a cell: the median over the runs that reached the target (mean of the middle two), then (successes/runs). */
  const cell = (runs: LqRun[]) => {
    const ok = runs.map((r) => r.evaluations).filter((e): e is number => e !== null).sort((a, b) => a - b);
    const n = ok.length;
    const median = n === 0 ? NaN : n % 2 ? ok[(n - 1) / 2]! : (ok[n / 2 - 1]! + ok[n / 2]!) / 2;
    return `${median} (${n}/${runs.length})`;
  };
  const tables = benchTables().filter((t) => t.headings.some((h) => h.startsWith('## lq-CMA-ES against CMA-ES')));

  it.each([
    ['the plain functions', 'lq-cmaes-2026-11-24b', 'CMA-ES: median evals (successes)', (row: string[]) => row[0]!],
    ["the paper's own figures (BBOB)", 'lq-cmaes-bbob-2026-11-24b', 'ours: CMA-ES median (successes)', (row: string[]) => `bbob-${row[0]!.split(' ')[0]}`],
  ] as const)('%s: every measured row, CMA-ES and lq-CMA-ES', (_, dir, cmaHeader, fnOf) => {
    // Today's table and the history's copy of it: each is recomputed.
    const found = tables.filter((x) => x.header.includes(cmaHeader));
    expect(found.length).toBeGreaterThan(0);
    const runs = runsUnder(dir);
    for (const t of found) {
      expect(t.section).toContain(`bench-results/published/${dir}`);
      const at = t.header.indexOf(cmaHeader);
      let checked = 0;
      for (const row of t.rows) {
        if (row[at] === '–') continue;
        const of = (method: string) => runs.filter((r) => r.function === fnOf(row) && r.d === Number(row[1]) && r.method === method);
        expect([row[at], row[at + 1]], `line ${t.line}: ${row[0]} d = ${row[1]}`).toEqual([cell(of('cmaes')), cell(of('lq-cmaes'))]);
        checked++;
      }
      expect(checked).toBeGreaterThanOrEqual(10);
    }
  });
});

describe('speed and workers tables recomputed from their published records', () => {
  const publishedDirsIn = (section: string) => [...new Set([...section.matchAll(PUBLISHED_PATH)].map((m) => m[0]))]
    .filter((p) => fs.existsSync(path.join(ROOT, p, 'runs.jsonl.gz')));

  it('bench:probnes-speed: every median of the timing, covariance-update and growing-study tables', () => {
    type Speed = { table: string; variant?: string; d: number; n?: number; wall?: number; cpu?: number; tell?: number; ask?: number } & Record<string, number>;
    let checked = 0;
    for (const t of benchTables().filter((x) => x.headings.some((h) => h.startsWith('## Speed')))) {
      const dirs = publishedDirsIn(`${t.lead}\n${t.section}`).filter((p) => /speed/.test(p));
      if (!dirs.length) continue;
      const recs = dirs.flatMap((p) => readJsonl<Speed>(path.join(ROOT, p, 'runs.jsonl.gz')));
      const med = (xs: number[], digits: number) => upperMedian(xs).toFixed(digits);
      for (const row of t.rows) {
        if (t.header[0] === 'profile') {
          const [variant, d, n] = [row[0]!, Number(row[1]), Number(row[2])];
          const rs = recs.filter((r) => r.table === 'timing' && r.variant === variant && r.d === d && r.n === n);
          if (!rs.length) continue;
          expect(row.slice(3, 8), `${variant} d=${d} n=${n}`).toEqual([String(rs[0]!.nActive), ...(['wall', 'cpu', 'tell', 'ask'] as const).map((k) => med(rs.map((r) => r[k]!), 1))]);
          checked++;
        } else if (t.header[1] === 'Prob-CMAES') {
          const rs = recs.filter((r) => r.table === 'covariance' && r.d === Number(row[0]));
          if (!rs.length) continue;
          expect(row.slice(1, 4), `covariance d=${row[0]}`).toEqual(['prob-cmaes', 'prob-xnes', 'prob-snes'].map((k) => med(rs.map((r) => r[k]!), 3)));
          checked++;
        } else if (t.header[1]?.startsWith('n = ')) {
          const [d, variant] = row[0]!.split(', ');
          t.header.slice(1).forEach((h, k) => {
            const rs = recs.filter((r) => r.table === 'growing' && r.d === Number(d) && r.variant === variant && r.n === Number(h.slice(4)));
            expect(row[k + 1], `growing ${row[0]} ${h}`).toBe(rs.length ? med(rs.map((r) => r.cpu!), 1) : '–');
          });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  const workersTables = benchTables().filter((x) => x.headings.some((h) => h.startsWith('## Workers')));
  const workersDirs = workersTables.length ? publishedDirsIn(`${workersTables[0]!.parentIntro}\n${workersTables[0]!.section}`).filter((p) => /workers/.test(p)) : [];
  it('bench:workers: the median, smallest and largest final regret of every cell (BENCHMARKS), and the summary of docs/parallel-workers.md', () => {
    type Workers = { method: string; function: string; workers: number; mode: string; regret: number; rounds: number; extras: number; evaluations: number };
    const fmt = (v: number) => v.toExponential(1);
    const section = workersTables;
    const dirs = workersDirs;
    expect(dirs.length).toBeGreaterThan(0);
    const recs = dirs.flatMap((p) => readJsonl<Workers>(path.join(ROOT, p, 'runs.jsonl.gz')));
    const cellOf = (method: string, fn: string, w: number, mode: string) => {
      const rs = recs.filter((r) => r.method === method && r.function === `bbob-${fn}` && r.workers === w && r.mode === mode);
      const xs = rs.map((r) => r.regret).sort((a, b) => a - b);
      return rs.length ? { median: fmt(upperMedian(xs)), range: `[${fmt(xs[0]!)}, ${fmt(xs[xs.length - 1]!)}]` } : null;
    };
    let checked = 0;
    for (const t of section.filter((x) => x.header.slice(0, 3).join() === 'method,f,W')) {
      for (const row of t.rows) {
        t.header.slice(3).forEach((mode, k) => {
          const c = cellOf(row[0]!.replace(/`/g, ''), row[1]!, Number(row[2]), mode);
          if (!c) return;
          expect(row[k + 3]!.startsWith(`${c.median} ${c.range}`), `${row.slice(0, 3).join(' ')} ${mode}: ${row[k + 3]}`).toBe(true);
          checked++;
        });
      }
    }
    expect(checked).toBeGreaterThanOrEqual(36);
    // docs/parallel-workers.md: "a → b" = median with the default batch_size → with batch_size = W; "at once" rows are the
    // synchronous modes (extras → matched), "asynchronous" rows async-default → async-matched.
    const readme = markdownTables(read('docs/parallel-workers.md')).find((x) => x.header[0] === 'method, W workers');
    expect(readme).toBeDefined();
    let readmeChecked = 0;
    for (const row of readme!.rows) {
      const m = row[0]!.match(/^`([a-z-]+)`, (\d+) (at once|asynchronous)$/);
      expect(m, row[0]).not.toBeNull();
      const [from, to] = m![3] === 'at once' ? ['extras', 'matched'] : ['async-default', 'async-matched'];
      readme!.header.slice(1).forEach((h, k) => {
        const fn = h.split(' ')[0]!;
        const a = cellOf(m![1]!, fn, Number(m![2]), from);
        const b = cellOf(m![1]!, fn, Number(m![2]), to);
        if (!a || !b) return expect(row[k + 1], `${row[0]} ${h}`).toBe('–');
        expect(row[k + 1], `${row[0]} ${h}`).toBe(`${a.median} → ${b.median}`);
        readmeChecked++;
      });
    }
    expect(readmeChecked).toBeGreaterThanOrEqual(20);
  });
});
