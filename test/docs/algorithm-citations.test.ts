/**
 * Every citation resolves. The source, the benchmarks, the tests, the clients, the documents, the SQL
 * migrations and the OpenAPI document cite:
 *
 * - docs/ALGORITHM.md by section, `ALGORITHM.md §N` (also `§N–§M`, `§N/§M`, `§N and §M`, `§N, §M`,
 *   subsections `§4.2`): each N must be the number of a heading of docs/ALGORITHM.md (`## N. Title` or
 *   `### N.M Title`). Inside docs/ALGORITHM.md a bare `§N` must name one of its own headings too.
 * - no lettered section anywhere (`§` and a letter): the former document of the default profile
 *   (ALGORITHM-default.md, sections A–M) is gone, its sections are docs/ALGORITHM.md §14–§26
 *   (A → §14, …, K → §24, L → §25, M → §26); a citation of it is an error too.
 * - docs/ARCHITECTURE.md by rule, `ARCHITECTURE.md rule N` (also `rules N and M`, `rules N–M`): each N must
 *   be one of the numbered rules under its "Rules" heading.
 * - the other documents by path: every `docs/NAME.md` (and a bare `ALGORITHM.md`, `ARCHITECTURE.md`,
 *   `API.md` or `BENCHMARKS.md`, which are under docs/) must exist; with `#anchor` the anchor must be one
 *   of its headings as GitHub slugs them, and with a quoted heading (`docs/capacity.md "Cost of a study"`)
 *   the quote must begin one of its headings. Markdown links are checked by links.test.ts.
 *
 * The document names the code that implements each section: every `src/…`, `bench/…` or `test/…`
 * path it writes in backticks exists, and every `name` it places "in `file`" occurs in that file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, headings } from './markdown.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = 'docs/ALGORITHM.md';
const RULES_DOC = 'docs/ARCHITECTURE.md';
/** This file and the link test: their examples of bad citations are not citations. */
const SELF = ['test/docs/algorithm-citations.test.ts', 'test/docs/links.test.ts'];
/** Documents under docs/ that code may name without the folder. */
const BARE_DOCS = ['ALGORITHM', 'ARCHITECTURE', 'API', 'BENCHMARKS'];

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

/** Wrapped comment lines joined: a newline, indentation and a comment marker (`*`, `//`, `#`, SQL's `--`) read as spaces (offsets kept). */
function flatten(text: string): string {
  return text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#|--)?[ \t]*/g, (m) => ' '.repeat(m.length));
}

/**
 * The sections a text cites: after each `ALGORITHM.md`, a run of `§X` joined by –, -, /, commas or
 * "and"/"or" (comment markers at line starts are ignored, so a citation may wrap). X is whatever
 * follows the §: digits and dots, or letters (which no heading has, so they fail).
 */
export function citations(text: string): { at: number; section: string; raw: string }[] {
  const flat = flatten(text);
  const out: { at: number; section: string; raw: string }[] = [];
  for (const m of flat.matchAll(/ALGORITHM\.md((?:\s*(?:[–/,-]|\band\b|\bor\b)?\s*§[\w.]*)*)/g)) {
    for (const s of m[1]!.matchAll(/§([\w.]*)/g)) {
      out.push({ at: m.index!, section: s[1]!.replace(/\.+$/, ''), raw: m[0]!.trim() });
    }
  }
  return out;
}

/** Files to scan: source, benchmarks, tests, scripts, README, docs, the SQL migrations and the OpenAPI document (not fixtures or data). */
function filesToScan(): string[] {
  const out: string[] = ['README.md', 'eslint.config.js'];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!['node_modules', 'fixtures', 'data'].includes(e.name)) walk(rel);
      } else if (/\.(ts|mts|js|mjs|py|sh|md|html|sql|yaml)$/.test(e.name) && !SELF.includes(rel)) out.push(rel);
    }
  };
  for (const dir of ['src', 'bench', 'test', 'scripts', 'docs', 'clients', 'examples', 'migrations', 'openapi']) if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
  return out;
}

const lineOf = (text: string, at: number) => text.slice(0, at).split('\n').length;

/** What is wrong with the citations of one text against the document's sections. */
export function badCitations(text: string, sections: Set<string>): string[] {
  // A lettered section is reported once, by the check of every `§` and a letter below.
  const bad = citations(text).filter((c) => !/^[A-Za-z]/.test(c.section) && !sections.has(c.section)).map((c) => `line ${lineOf(text, c.at)}: ${c.raw} (no §${c.section})`);
  for (const m of text.matchAll(/ALGORITHM-default/g)) bad.push(`line ${lineOf(text, m.index!)}: ALGORITHM-default (that document is now docs/ALGORITHM.md §14–§26)`);
  for (const m of text.matchAll(/§[A-Za-z]\w*/g)) bad.push(`line ${lineOf(text, m.index!)}: ${m[0]} (no lettered sections: ALGORITHM.md §14–§26 were A–M)`);
  return bad;
}

/** The numbers of the rules of docs/ARCHITECTURE.md: the numbered list items under its "## Rules" heading. */
export function ruleNumbers(doc: string): Set<string> {
  const out = new Set<string>();
  let inRules = false;
  for (const line of doc.split('\n')) {
    if (/^## /.test(line)) inRules = /^## Rules\b/.test(line);
    const m = inRules && /^(\d+)\. /.exec(line);
    if (m) out.add(m[1]!);
  }
  return out;
}

/**
 * The rules a text cites: after each `ARCHITECTURE.md rule` or `rules`, the first word (a number, or
 * whatever is there, which then fails) and the numbers joined to it by –, -, commas, "and" or "or".
 */
export function ruleCitations(text: string): { at: number; rule: string; raw: string }[] {
  const out: { at: number; rule: string; raw: string }[] = [];
  for (const m of flatten(text).matchAll(/ARCHITECTURE\.md,?\s+rules?\s+(\w+)((?:\s*(?:[–,-]|\band\b|\bor\b)\s*\d+\b)*)/g)) {
    for (const r of [m[1]!, ...(m[2]!.match(/\d+/g) ?? [])]) out.push({ at: m.index!, rule: r, raw: m[0]!.trim() });
  }
  return out;
}

/** What is wrong with the rule citations of one text against the rules' numbers. */
export function badRuleCitations(text: string, rules: Set<string>): string[] {
  return ruleCitations(text).filter((c) => !rules.has(c.rule)).map((c) => `line ${lineOf(text, c.at)}: ${c.raw} (no rule ${c.rule})`);
}

/**
 * The documents a text names: `docs/NAME.md` (after any number of `../`) or a bare ALGORITHM.md,
 * ARCHITECTURE.md, API.md or BENCHMARKS.md, each with the `#anchor` or the quoted heading that follows it.
 */
export function docCitations(text: string): { at: number; file: string; anchor: string | null; heading: string | null; raw: string }[] {
  const bare = BARE_DOCS.join('|');
  const re = new RegExp(`(?<![\\w/.-])(?:(?:\\.\\./)*docs/([\\w-]+)\\.md|(${bare})\\.md)(?:#([\\w-]+))?(?:,?\\s+"([^"\\n]+)")?`, 'g');
  const out: { at: number; file: string; anchor: string | null; heading: string | null; raw: string }[] = [];
  for (const m of flatten(text).matchAll(re)) {
    out.push({ at: m.index!, file: `docs/${m[1] ?? m[2]}.md`, anchor: m[3] ?? null, heading: m[4] ?? null, raw: m[0]!.trim() });
  }
  return out;
}

/** Headings compared as text: markdown code and links reduced to their words, lower case. */
const plain = (h: string) => h.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').trim().toLowerCase();

/** What is wrong with the documents one text names ('' for each that resolves), given a reader of docs. */
export function badDocCitations(text: string, read: (file: string) => string | null): string[] {
  const bad: string[] = [];
  for (const c of docCitations(text)) {
    const doc = read(c.file);
    const where = `line ${lineOf(text, c.at)}: ${c.raw}`;
    if (doc === null) bad.push(`${where} (${c.file} does not exist)`);
    else if (c.anchor !== null && !anchors(doc).has(c.anchor)) bad.push(`${where} (${c.file} has no heading #${c.anchor})`);
    else if (c.heading !== null && !headings(doc).some((h) => plain(h).startsWith(plain(c.heading!)))) bad.push(`${where} (${c.file} has no heading "${c.heading}")`);
  }
  return bad;
}

/** The text of a file of the repository, or null when there is none. */
function readDoc(file: string): string | null {
  const p = path.join(ROOT, file);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null;
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

  it('every ALGORITHM.md §N in src/, bench/, test/, scripts/, clients/, examples/, migrations/, openapi/, README.md and docs/ names a heading, and nothing cites a lettered section', () => {
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
    // Two things wrong: the removed document, and its lettered section.
    expect(badCitations(' * docs/ALGORITHM-default.md §A', s)).toHaveLength(2);
    // A citation wrapped over two comment lines is still read whole.
    expect(badCitations(' * the step of docs/ALGORITHM.md\n * §7', s)).toHaveLength(1);
    expect(citations('// ALGORITHM.md §4.2\'s update, §1 step 2.').map((c) => c.section)).toEqual(['4.2']);
    expect(codeNames('Code: `a`, `b` and `c` in `x.ts`; `d` in\n`src/y.ts`.')).toEqual([{ names: ['a', 'b', 'c'], file: 'x.ts' }, { names: ['d'], file: 'src/y.ts' }]);
  });
});

describe('citations of docs/ARCHITECTURE.md and the other documents', () => {
  const rules = ruleNumbers(fs.readFileSync(path.join(ROOT, RULES_DOC), 'utf8'));

  it('docs/ARCHITECTURE.md numbers its rules 1, 2, 3, … without a gap', () => {
    expect(rules.size).toBeGreaterThanOrEqual(6);
    expect([...rules]).toEqual(Array.from({ length: rules.size }, (_, i) => String(i + 1)));
  });

  it('every ARCHITECTURE.md rule N names one of its rules', () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of filesToScan()) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      count += ruleCitations(text).length;
      for (const b of badRuleCitations(text, rules)) problems.push(`${file} ${b}`);
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(8);
  });

  it('every docs/NAME.md named exists, and its #anchor or quoted heading is one of its headings', () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of filesToScan()) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      count += docCitations(text).length;
      for (const b of badDocCitations(text, readDoc)) problems.push(`${file} ${b}`);
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(100);
  });

  it('catches a rule that does not exist, a missing document, anchor or heading', () => {
    const r = new Set(['1', '2', '3']);
    expect(badRuleCitations(' * (ARCHITECTURE.md rule 2, evosax-style)', r)).toEqual([]);
    expect(badRuleCitations('// ARCHITECTURE.md rules 1 and 3: one way', r)).toEqual([]);
    expect(badRuleCitations('// ARCHITECTURE.md rule 4', r)).toHaveLength(1);
    expect(badRuleCitations('// ARCHITECTURE.md rules 1–7', r)).toHaveLength(1);
    expect(badRuleCitations('// ARCHITECTURE.md rule N', r)).toHaveLength(1);
    expect(badRuleCitations(' * see ARCHITECTURE.md\n * rule 9', r)).toHaveLength(1);
    expect(ruleNumbers('# A\n1. not a rule\n## Rules\n1. **One.**\n   2. nested\n2. **Two.**\n## After\n3. no')).toEqual(new Set(['1', '2']));
    const docs: Record<string, string> = { 'docs/API.md': '# The API\n## The suggest/observe loop\n### Cost of a study (d × q)' };
    const read = (f: string) => docs[f] ?? null;
    expect(badDocCitations('/** (docs/API.md "The suggest/observe loop") */', read)).toEqual([]);
    expect(badDocCitations('// API.md, "Cost of a study"; [x](../docs/API.md#the-suggestobserve-loop)', read)).toEqual([]);
    expect(badDocCitations('// docs/NOPE.md', read)).toHaveLength(1);
    expect(badDocCitations('// docs/API.md#the-loop', read)).toHaveLength(1);
    expect(badDocCitations('// docs/API.md "Best and history"', read)).toHaveLength(1);
    expect(badCitations(' * the step of §E (§Kʼs radius)', new Set())).toHaveLength(2);
  });
});

