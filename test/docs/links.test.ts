/**
 * Every relative link in README.md, docs/*.md and the other markdown files (the clients', the
 * examples' and the benchmarks' READMEs) resolves: the file or directory exists, and a
 * `#fragment` into a markdown file names one of its headings, slugged as GitHub renders them
 * (github-slugger: lower case, punctuation dropped, spaces to hyphens, "-1", "-2" for repeats).
 * Links inside code (fenced blocks, `inline code`) are text, not links, and are skipped; so are
 * absolute URLs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, withoutCode } from './markdown.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** README.md and every markdown file directly under docs/. */
export function documents(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs.sort()];
}

/** The other markdown files of the repository that link pages: the clients', the examples', the benchmarks'. */
export function otherMarkdown(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!['node_modules', 'fixtures', 'data', 'dist'].includes(e.name)) walk(rel);
      } else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  for (const dir of ['clients', 'examples', 'bench', 'src', 'test', 'scripts']) if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
  return out.sort();
}

/** Inline links `[text](target)` and images, with their 1-based line. */
export function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  withoutCode(text).split('\n').forEach((l, i) => {
    for (const m of l.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

/** What is wrong with one link of `doc` ('' when it resolves). */
export function brokenLink(doc: string, target: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return '';
  const [rawPath, rawFragment] = target.split('#', 2) as [string, string | undefined];
  const file = rawPath === '' ? path.join(ROOT, doc) : path.resolve(path.dirname(path.join(ROOT, doc)), decodeURIComponent(rawPath));
  if (!file.startsWith(ROOT)) return 'points outside the repository';
  if (!fs.existsSync(file)) return `${path.relative(ROOT, file)} does not exist`;
  if (rawFragment === undefined || rawFragment === '') return '';
  if (!file.endsWith('.md')) return '';
  const fragment = decodeURIComponent(rawFragment);
  return anchors(fs.readFileSync(file, 'utf8')).has(fragment) ? '' : `${path.relative(ROOT, file)} has no heading #${fragment}`;
}

describe('links in README.md, docs/ and the other markdown files', () => {
  it('every relative link names an existing file and, with a #fragment, one of its headings', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const doc of [...documents(), ...otherMarkdown()]) {
      for (const { line, target } of links(fs.readFileSync(path.join(ROOT, doc), 'utf8'))) {
        const broken = brokenLink(doc, target);
        if (broken) problems.push(`${doc}:${line} (${target}): ${broken}`);
        checked++;
      }
    }
    expect(problems).toEqual([]);
    // README's contents alone link about twenty pages: a parser that found none would pass vacuously.
    expect(checked).toBeGreaterThan(40);
  });

  it('every page under docs/ is linked from the README (its Documentation list is the way in)', () => {
    const readme = links(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((l) => l.target.split('#')[0]);
    expect(documents().filter((d) => d !== 'README.md' && !readme.includes(d))).toEqual([]);
  });

  it('catches a missing file, a missing heading and a heading slugged the wrong way', () => {
    expect(brokenLink('README.md', 'docs/no-such-page.md')).toMatch(/does not exist/);
    expect(brokenLink('README.md', '#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink('README.md', '#Which-method-when')).toMatch(/no heading/);
    expect(brokenLink('README.md', '#which-method-when')).toBe('');
    expect(brokenLink('docs/BENCHMARKS.md', '../README.md#quickstart')).toBe('');
    expect(brokenLink('README.md', 'https://example.com/#anything')).toBe('');
  });

  it('slugs headings as GitHub does (punctuation dropped, repeats numbered, code ignored)', () => {
    const text = '# A: b (`c`)\n## A: b (`c`)\n```\n# not a heading\n```\n### d = 2, 10·d';
    expect([...anchors(text)]).toEqual(['a-b-c', 'a-b-c-1', 'd--2-10d']);
    expect(links('see [x](a.md#b) and `[y](c.md)`\n```\n[z](d.md)\n```').map((l) => l.target)).toEqual(['a.md#b']);
  });
});
