/**
 * Reading what the benchmarks published (bench-results/published/) and the markdown that quotes it
 * (README.md, docs/BENCHMARKS.md, docs/benchmarks-history.md and the pages under docs/ with measured tables), for the tests that recompute documented tables from raw runs
 * (test/bench/readme-table.test.ts, test/bench/provenance.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const PUBLISHED = path.join(ROOT, 'bench-results/published');

/** The records of a .jsonl or .jsonl.gz file, one JSON value per non-empty line. */
export function readJsonl<T = Record<string, unknown>>(file: string): T[] {
  const raw = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

/** Every published directory with a runs.jsonl.gz, with its records. */
export function publishedRunSets<T = Record<string, unknown>>(): { dir: string; runs: T[] }[] {
  return fs.readdirSync(PUBLISHED)
    .filter((dir) => fs.existsSync(path.join(PUBLISHED, dir, 'runs.jsonl.gz')))
    .map((dir) => ({ dir, runs: readJsonl<T>(path.join(PUBLISHED, dir, 'runs.jsonl.gz')) }));
}

export interface MarkdownTable {
  /** 1-based line of the header row. */
  line: number;
  /** Heading path, outermost first (e.g. ['## Speed: …', '### Candidate pool …']). */
  headings: string[];
  header: string[];
  rows: string[][];
  /** The text between the nearest heading above and the next heading (any level). */
  section: string;
  /** The parent section's text before its first sub-heading ('' when the parent is the document's title, level 1). */
  parentIntro: string;
  /** The paragraph directly above the table (above the previous table when two tables follow each other). */
  lead: string;
}

const cellsOf = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());

/** The markdown tables of a document with their sections; headings and tables inside ``` fences are skipped. */
export function markdownTables(text: string): MarkdownTable[] {
  const lines = text.split('\n');
  const fenced = new Array<boolean>(lines.length).fill(false);
  let inFence = false;
  lines.forEach((l, i) => {
    if (/^\s*```/.test(l)) {
      inFence = !inFence;
      fenced[i] = true;
    } else fenced[i] = inFence;
  });
  const headingAt = lines.map((l, i) => (!fenced[i] && /^#{1,6} /.test(l) ? l.match(/^(#+)/)![1]!.length : 0));
  const tables: MarkdownTable[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (fenced[i] || !/^\|\s*-{3}/.test(lines[i]!) || !lines[i - 1]!.startsWith('|')) continue;
    const headerLine = i - 1;
    const rows: string[][] = [];
    for (let j = i + 1; j < lines.length && lines[j]!.startsWith('|'); j++) rows.push(cellsOf(lines[j]!));
    // Heading path: walk up, keeping each shallower level once.
    const headings: string[] = [];
    let level = 7;
    let own = -1;
    for (let j = headerLine; j >= 0; j--) {
      if (headingAt[j] && headingAt[j]! < level) {
        if (own < 0) own = j;
        headings.unshift(lines[j]!);
        level = headingAt[j]!;
      }
    }
    let end = headerLine;
    while (end < lines.length && !headingAt[end]) end++;
    const section = lines.slice(own + 1, end).join('\n');
    let parentIntro = '';
    if (headings.length > 1 && !headings[headings.length - 2]!.startsWith('# ')) {
      const parent = lines.lastIndexOf(headings[headings.length - 2]!, own);
      let k = parent + 1;
      while (k < lines.length && !headingAt[k]) k++;
      parentIntro = lines.slice(parent + 1, k).join('\n');
    }
    // The paragraph above the table (above the previous table when two follow each other).
    const lead: string[] = [];
    for (let j = headerLine - 1; j > own; j--) {
      const l = lines[j]!;
      if (l.startsWith('|') || fenced[j]) {
        if (lead.length) break;
      } else if (l.trim()) lead.unshift(l);
      else if (lead.length) break;
    }
    tables.push({ line: headerLine + 1, headings, header: cellsOf(lines[headerLine]!), rows, section, parentIntro, lead: lead.join('\n') });
  }
  return tables;
}

/** Markdown figures use U+2212 for minus; the benchmarks print '-'. */
export const normMinus = (s: string) => s.replace(/−/g, '-');

/** The median the benchmarks print (bench/probnes-speed.ts, bench/workers-vs-batch.ts): the upper middle element. */
export const upperMedian = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
