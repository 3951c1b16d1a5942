/**
 * Every citation of the algorithm document resolves. The source, the benchmarks, the tests and the
 * documents cite docs/ALGORITHM.md by section, `ALGORITHM.md §N` (also `§N–§M`, `§N/§M`, `§N and §M`,
 * `§N, §M`, subsections `§4.2`); each N must be the number of a heading of docs/ALGORITHM.md
 * (`## N. Title` or `### N.M Title`). The former separate document of the default profile
 * (ALGORITHM-default.md, sections lettered A–M) is gone: a citation of it is an error. Inside
 * docs/ALGORITHM.md a bare `§N` must name one of its own headings too.
 *
 * The document names the code that implements each section: every `src/…`, `bench/…` or `test/…`
 * path it writes in backticks exists, and every `name` it places "in `file`" occurs in that file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = 'docs/ALGORITHM.md';
/** This file: its examples of bad citations are not citations. */
const SELF = 'test/docs/algorithm-citations.test.ts';

/** The section numbers the document's headings define ("## 4. Title" → 4, "### 4.2 Title" → 4.2). */
export function sectionNumbers(doc: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of doc.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{2,4} (\d+(?:\.\d+)*)\.?\s/.exec(line);
    if (m) out.add(m[1]!);
  }
  return out;
}

/**
 * The sections a text cites: after each `ALGORITHM.md`, a run of `§X` joined by –, -, /, commas or
 * "and"/"or" (comment markers at line starts are ignored, so a citation may wrap). X is whatever
 * follows the §: digits and dots, or letters (which no heading has, so they fail).
 */
export function citations(text: string): { at: number; section: string; raw: string }[] {
  // Join wrapped comment lines: a newline, indentation and a comment marker read as one space.
  const flat = text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#)?[ \t]*/g, (m) => ' '.repeat(m.length));
  const out: { at: number; section: string; raw: string }[] = [];
  for (const m of flat.matchAll(/ALGORITHM\.md((?:\s*(?:[–/,-]|\band\b|\bor\b)?\s*§[\w.]*)*)/g)) {
    for (const s of m[1]!.matchAll(/§([\w.]*)/g)) {
      out.push({ at: m.index!, section: s[1]!.replace(/\.+$/, ''), raw: m[0]!.trim() });
    }
  }
  return out;
}

/** Files to scan: source, benchmarks, tests, scripts, README and docs (not fixtures or data). */
function filesToScan(): string[] {
  const out: string[] = ['README.md'];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!['node_modules', 'fixtures', 'data'].includes(e.name)) walk(rel);
      } else if (/\.(ts|mts|js|mjs|py|sh|md)$/.test(e.name) && rel !== SELF) out.push(rel);
    }
  };
  for (const dir of ['src', 'bench', 'test', 'scripts', 'docs', 'clients']) if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
  return out;
}

const lineOf = (text: string, at: number) => text.slice(0, at).split('\n').length;

/** What is wrong with the citations of one text against the document's sections. */
export function badCitations(text: string, sections: Set<string>): string[] {
  const bad = citations(text).filter((c) => !sections.has(c.section)).map((c) => `line ${lineOf(text, c.at)}: ${c.raw} (no §${c.section})`);
  for (const m of text.matchAll(/ALGORITHM-default/g)) bad.push(`line ${lineOf(text, m.index!)}: ALGORITHM-default (that document is now docs/ALGORITHM.md §10–§26)`);
  return bad;
}

/** "`a`, `b` and `c` in `file.ts`": the names and the file (a path, or a unique basename under src/ or bench/). */
export function codeNames(doc: string): { names: string[]; file: string }[] {
  const flat = doc.replace(/\n/g, ' ');
  const out: { names: string[]; file: string }[] = [];
  for (const m of flat.matchAll(/((?:`[A-Za-z_$][\w$]*`(?:,\s*|\s+and\s+)?)+)\s+in\s+`([\w./-]+\.(?:ts|py))`/g)) {
    out.push({ names: [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!), file: m[2]! });
  }
  return out;
}

function resolveFile(file: string): string | null {
  if (file.includes('/')) return fs.existsSync(path.join(ROOT, file)) ? file : null;
  const hits = filesToScan().filter((f) => path.basename(f) === file && /^(src|bench)\//.test(f));
  return hits.length === 1 ? hits[0]! : null;
}

describe('citations of docs/ALGORITHM.md', () => {
  const doc = fs.readFileSync(path.join(ROOT, DOC), 'utf8');
  const sections = sectionNumbers(doc);

  it('the document numbers its sections §0–§9 (the paper) and §10 onward (the default profile)', () => {
    for (const s of ['0', '1', '2', '3', '4', '4.1', '4.2', '4.3', '5', '6', '7', '8', '9', '10', '14', '24']) expect(sections, `§${s}`).toContain(s);
  });

  it('every ALGORITHM.md §N in src/, bench/, test/, scripts/, clients/, README.md and docs/ names a heading', () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of filesToScan()) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      count += citations(text).length;
      for (const b of badCitations(text, sections)) problems.push(`${file} ${b}`);
    }
    expect(problems).toEqual([]);
    // The engine cites the document dozens of times: finding none would mean the scan is broken.
    expect(count).toBeGreaterThan(50);
  });

  it('every bare §N inside docs/ALGORITHM.md names one of its headings', () => {
    const flat = doc.replace(/`[^`]*`/g, '');
    const bad = [...flat.matchAll(/§(\d+(?:\.\d+)*)/g)].map((m) => m[1]!).filter((s) => !sections.has(s));
    expect(bad).toEqual([]);
  });

  it('the code the document names exists: every path, and every name "in" a file occurs in it', () => {
    const problems: string[] = [];
    for (const m of doc.matchAll(/`((?:src|bench|test|scripts)\/[\w./-]+)`/g)) {
      if (!fs.existsSync(path.join(ROOT, m[1]!))) problems.push(`${m[1]} does not exist`);
    }
    const named = codeNames(doc);
    for (const { names, file } of named) {
      const resolved = resolveFile(file);
      if (!resolved) {
        problems.push(`${file}: no such file (or not unique)`);
        continue;
      }
      const text = fs.readFileSync(path.join(ROOT, resolved), 'utf8');
      for (const n of names) if (!new RegExp(`\\b${n.replace(/\$/g, '\\$')}\\b`).test(text)) problems.push(`${n} is not in ${resolved}`);
    }
    expect(problems).toEqual([]);
    expect(named.length).toBeGreaterThan(20);
  });

  it('catches a citation of a missing section, a lettered section and the old document', () => {
    const s = new Set(['1', '4', '4.2']);
    expect(badCitations(' * see ALGORITHM.md §4.2 and §1', s)).toEqual([]);
    expect(badCitations(' * see ALGORITHM.md §99', s)).toHaveLength(1);
    expect(badCitations(' * see ALGORITHM.md §1–§5', s)).toHaveLength(1);
    expect(badCitations(' * ALGORITHM.md §K', s)).toHaveLength(1);
    expect(badCitations(' * docs/ALGORITHM-default.md §A', s)).toHaveLength(1);
    // A citation wrapped over two comment lines is still read whole.
    expect(badCitations(' * the step of docs/ALGORITHM.md\n * §7', s)).toHaveLength(1);
    expect(citations('// ALGORITHM.md §4.2\'s update, §1 step 2.').map((c) => c.section)).toEqual(['4.2']);
    expect(codeNames('Code: `a`, `b` and `c` in `x.ts`; `d` in\n`src/y.ts`.')).toEqual([{ names: ['a', 'b', 'c'], file: 'x.ts' }, { names: ['d'], file: 'src/y.ts' }]);
  });
});
