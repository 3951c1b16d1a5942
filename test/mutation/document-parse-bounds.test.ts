/**
 * parseDocument (src/domain/transfer/document-parse.ts) on input that is not a document at all, on a
 * study with too many options, and on documents with more than MAX_ERRORS issues in the part checked
 * whole (the shell) and spread over several elements: the answer is a list of issues, never a throw
 * (which the route would turn into a 500), and never more than MAX_ERRORS of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERRORS, parseDocument } from '../../src/domain/index.js';
import { LIMITS } from '../../src/domain/studies/study-request.js';
import { fixture, type Fixture } from '../hostile/harness.js';

let f: Fixture;
let doc: Record<string, unknown> & { study: Record<string, unknown>; trials: Record<string, unknown>[] };
beforeAll(async () => {
  f = await fixture();
  doc = (await f.app.inject({ method: 'GET', url: `/v1/studies/${f.a}/export` })).json();
});
afterAll(async () => {
  await f.close();
});

const issues = (input: unknown) => {
  const r = parseDocument(input);
  expect(r.success).toBe(false);
  return r.success ? [] : r.issues;
};

describe('parseDocument', () => {
  it('the export it starts from parses', () => {
    expect(parseDocument(doc).success).toBe(true);
  });

  it('answers issues, not a throw, for a body that is not an object, or a study that is null', () => {
    for (const input of [null, 7, 'doc', [doc]]) expect(issues(input).length).toBeGreaterThan(0);
    expect(issues({ ...doc, study: null }).map((i) => i.path)).toContainEqual(['study']);
  });

  it('refuses a study with more options than LIMITS.options by their count alone', () => {
    const options = Object.fromEntries(Array.from({ length: LIMITS.options + 1 }, (_, i) => [`o${i}`, i]));
    const found = issues({ ...doc, study: { ...doc.study, options } });
    expect(found).toEqual([expect.objectContaining({ code: 'too_big', path: ['study', 'options'], message: `must have at most ${LIMITS.options} keys` })]);
  });

  it('keeps at most MAX_ERRORS of the issues of the shell', () => {
    const parameters = Array.from({ length: MAX_ERRORS + 10 }, () => 0);
    expect(issues({ ...doc, study: { ...doc.study, parameters } })).toHaveLength(MAX_ERRORS);
  });

  it('keeps at most MAX_ERRORS issues over several elements: the second element adds only what is left', () => {
    const bad = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, [i]]));
    const trials = [{ ...doc.trials[0], parameters: bad(5) }, { ...doc.trials[0], parameters: bad(MAX_ERRORS + 10) }];
    const found = issues({ ...doc, trials });
    expect(found).toHaveLength(MAX_ERRORS);
    expect(found.filter((i) => i.path[1] === 0)).toHaveLength(5);
  });
});
