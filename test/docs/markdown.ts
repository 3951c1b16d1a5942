/**
 * Reading markdown as GitHub renders it, for the documentation tests (links.test.ts,
 * algorithm-citations.test.ts): code blanked, headings and their anchors.
 */
import GithubSlugger from 'github-slugger';

/** The text with fenced code blocks and inline code spans blanked (line numbers kept). */
export function withoutCode(text: string): string {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/(`+)[^`]*?\1/g, (m) => ' '.repeat(m.length));
  }).join('\n');
}

/** The headings of a markdown document, as written (without the #s), outside code blocks. */
export function headings(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) out.push(line.replace(/^#{1,6} /, '').replace(/\s+#+\s*$/, ''));
  }
  return out;
}

/** The anchors GitHub gives the headings of a markdown document. */
export function anchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(headings(text).map((h) => slugger.slug(h)));
}
