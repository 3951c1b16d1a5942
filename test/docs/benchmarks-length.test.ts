/**
 * docs/BENCHMARKS.md gives today's results only: it stays within 700 lines (older sections move to
 * docs/benchmarks-history.md), and every published directory it cites (bench-results/published/<dir>)
 * exists, so each result points at runs a reader can open. Placeholders (<name>, load-*) are not
 * directories and are skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = 'docs/BENCHMARKS.md';
const MAX_LINES = 700;

/** The directories directly under bench-results/published/ that a text cites, in order of first citation. */
export function publishedDirs(text: string): string[] {
  const dirs = [...text.matchAll(/bench-results\/published\/([A-Za-z0-9._-]*[A-Za-z0-9_])(?![<*A-Za-z0-9._-])/g)].map((m) => m[1]!);
  return [...new Set(dirs)];
}

describe('docs/BENCHMARKS.md', () => {
  const text = fs.readFileSync(path.join(ROOT, DOC), 'utf8');

  it(`has at most ${MAX_LINES} lines (move superseded sections to docs/benchmarks-history.md)`, () => {
    const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_LINES);
  });

  it('cites only published directories that exist', () => {
    const dirs = publishedDirs(text);
    // Every section names its runs: a parser that found none would pass vacuously.
    expect(dirs.length).toBeGreaterThan(20);
    const missing = dirs.filter((d) => !fs.statSync(path.join(ROOT, 'bench-results/published', d), { throwIfNoEntry: false })?.isDirectory());
    expect(missing).toEqual([]);
  });

  it('reads directory names and skips placeholders', () => {
    expect(publishedDirs('`bench-results/published/2026-11-26-reads/results.md`, bench-results/published/bo/ and '
      + '`--out bench-results/published/2026-11-26-speed-2`.')).toEqual(['2026-11-26-reads', 'bo', '2026-11-26-speed-2']);
    expect(publishedDirs('bench-results/published/<name>/, bench-results/published/load-*/results.md, '
      + '--out bench-results/published/<date>-<name>')).toEqual([]);
  });
});
