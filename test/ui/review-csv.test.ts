/**
 * The dashboard's "Download CSV" against formula injection: a cell that starts with = + - @, a tab
 * or a carriage return (a categorical choice, a client id, a failure reason such as =HYPERLINK(…))
 * is written as OWASP recommends, quoted with a leading single quote, so a spreadsheet shows it as
 * text; numbers, negative ones included, stay numbers. Checked on the CSV function, and on the file
 * headless Chromium downloads from a real study page (CSP in force).
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the dashboard is plain JavaScript without declarations.
import { csv, csvCell } from '../../src/ui/table.js';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';
import { openPage } from './page.js';
import { call } from './seed.js';

const DANGEROUS = ['=1+2', '+SUM(A1:A2)', '-2+3', '@SUM(1)', '\t=1', '\r=1', '=HYPERLINK("http://evil.example","click")', "=cmd|' /C calc'!A0"];

/** RFC 4180 fields: quoted ones may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (quoted || (c !== ',' && c !== '\n')) {
      cell += c;
    } else {
      row.push(cell);
      cell = '';
      if (c === '\n') {
        rows.push(row);
        row = [];
      }
    }
  }
  return rows;
}

/** Every cell a spreadsheet would take for a formula: starts with = + - @ tab or CR and is not a number. */
function formulas(text: string): string[] {
  return parseCsv(text)
    .flat()
    .filter((c) => /^[=+\-@\t\r]/.test(c) && !Number.isFinite(Number(c)));
}

describe('csvCell and csv', () => {
  it('prefix and quote text that starts a formula, keep numbers and plain text as they are', () => {
    for (const s of DANGEROUS) {
      const cell = csvCell(s) as string;
      expect(cell.startsWith(`"'`), JSON.stringify(s)).toBe(true);
      expect(parseCsv(`${cell}\n`)).toEqual([[`'${s}`]]);
    }
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(-0.001)).toBe('-0.001');
    expect(csvCell(2)).toBe('2');
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\rbreak')).toBe('"line\rbreak"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('a whole table with hostile choices, client ids and failure reasons has no formula cell', () => {
    const study = { parameters: [{ name: 'x' }, { name: 'c' }] };
    const trials = DANGEROUS.map((s, i) => ({ trial_id: i + 1, state: 'FAILED', generation: 0, client_id: '@w', source: 'suggested', value: -i, stderr: null, parameters: { x: -0.5, c: s }, failure_reason: s, created_at: '2025-01-01T00:00:00Z', completed_at: null }));
    const text = csv(study, trials) as string;
    expect(formulas(text)).toEqual([]);
    const rows = parseCsv(text);
    expect(rows).toHaveLength(trials.length + 1);
    expect(rows.slice(1).map((r) => r[8])).toEqual(DANGEROUS.map((s) => `'${s}`));
    expect(rows[2]![5]).toBe('-1');
  });
});

describe('csv of a study with several objectives and constraints', () => {
  it('has a column per objective and per constraint, then feasible and infeasible; negative values stay numbers, text is neutralised', () => {
    const study = { parameters: [{ name: 'x' }], objectives: [{ name: 'error', direction: 'minimize' }, { name: 'accuracy', direction: 'maximize' }], constraints: [{ name: 'mem' }] };
    const base = { state: 'COMPLETED', generation: 0, source: 'external', value: null, stderr: null, failure_reason: null, created_at: '2025-01-01T00:00:00Z', completed_at: '2025-01-01T00:00:01Z' };
    const trials = [
      { ...base, trial_id: 1, client_id: '=evil', parameters: { x: 0.5 }, values: [0.1, -0.3], constraints: [-2], feasible: true, infeasible: false },
      { ...base, trial_id: 2, client_id: null, parameters: { x: -1 }, values: [0.2, -0.1], constraints: [0.5], feasible: false, infeasible: false },
      { ...base, trial_id: 3, client_id: null, parameters: { x: 0 }, values: null, constraints: null, feasible: false, infeasible: true },
      { ...base, trial_id: 4, state: 'ACTIVE', client_id: null, parameters: { x: 0 }, values: null, constraints: null, feasible: null, infeasible: false, completed_at: null },
    ];
    const text = csv(study, trials) as string;
    expect(formulas(text)).toEqual([]);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(['trial_id', 'state', 'generation', 'client_id', 'source', 'value', 'stderr', 'x', 'value:error', 'value:accuracy', 'constraint:mem', 'feasible', 'infeasible', 'failure_reason', 'created_at', 'completed_at']);
    expect(rows.slice(1).map((r) => r.slice(8, 13))).toEqual([
      ['0.1', '-0.3', '-2', 'true', 'false'],
      ['0.2', '-0.1', '0.5', 'false', 'false'],
      ['', '', '', 'false', 'true'],
      ['', '', '', '', ''],
    ]);
    expect(rows[1]![3]).toBe("'=evil");
  });
});

const hasChromium = chromiumPresent();

describe.skipIf(!hasChromium)('Download CSV in the dashboard', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let id: string;

  beforeAll(async () => {
    t = await makeTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const created = await call(t.app, 'POST', '/v1/studies', {
      name: 'csv-injection',
      method: 'random',
      batch_size: 8,
      parameters: [
        { name: 'x', bounds: [-5, -1] },
        { name: 'c', type: 'categorical', choices: DANGEROUS },
      ],
    });
    id = created.id;
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/suggestions?count=8&client_id=@evil`)).trials as { trial_id: number }[];
    await call(t.app, 'POST', `/v1/studies/${id}/trials/${trials[0]!.trial_id}/fail`, { reason: '=HYPERLINK("http://evil.example","click")', client_id: '@evil' });
    await call(t.app, 'POST', `/v1/studies/${id}/observations`, { observations: trials.slice(1).map((tr, i) => ({ trial_id: tr.trial_id, value: -1.5 - i })) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (t) {
      await t.app.close();
      await t.storage.close();
    }
  });

  it('the downloaded file has every hostile cell neutralised and the numbers as numbers', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${base}/ui/studies/${id}`);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.waitForSelector('#trials[data-rows="8"]');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
    const text = fs.readFileSync((await download.path())!, 'utf8');
    await page.close();
    expect(errors).toEqual([]);
    expect(formulas(text)).toEqual([]);
    const rows = parseCsv(text);
    expect(rows).toHaveLength(9);
    const head = rows[0]!;
    const col = (name: string) => head.indexOf(name);
    const body = rows.slice(1);
    expect(body.map((r) => r[col('client_id')])).toEqual(Array(8).fill("'@evil"));
    expect(body.filter((r) => r[col('state')] === 'FAILED').map((r) => r[col('failure_reason')])).toEqual([`'=HYPERLINK("http://evil.example","click")`]);
    for (const r of body) {
      expect(DANGEROUS.map((s) => `'${s}`)).toContain(r[col('c')]);
      expect(Number(r[col('x')])).toBeLessThan(0);
      if (r[col('state')] === 'COMPLETED') expect(Number(r[col('value')])).toBeLessThanOrEqual(-1.5);
    }
  });
});
