/**
 * The dashboard in headless Chromium against a listening app: a study driven through the real loop
 * routes, then /ui and /ui/studies/{id} loaded with the CSP in force. Checks what was drawn (one
 * marker per completed evaluation, one distribution panel per parameter, one table row per trial),
 * that the browser logged no errors, and saves a screenshot to test-artifacts/dashboard.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, chromiumPresent } from '../helpers/requirements.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts');
const hasChromium = chromiumPresent();

const branin = (x1: number, x2: number) =>
  (x2 - (5.1 / (4 * Math.PI ** 2)) * x1 ** 2 + (5 / Math.PI) * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(x1) + 10;

let t: TestApp;
let base: string;
let browser: Browser;
let studyId: string;
const COMPLETED = 12;

async function call(method: 'GET' | 'POST', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

beforeAll(async () => {
  if (!hasChromium) return;
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const study = await call('POST', '/v1/studies', {
    name: 'branin-ui',
    method: 'cmaes',
    batch_size: 4,
    known_optimum: 0.397887,
    parameters: [
      { name: 'x1', type: 'float', bounds: [-5, 10], prior: { mean: 2.5, std: 3 } },
      { name: 'x2', type: 'float', bounds: [0, 15], prior: { mean: 7.5, std: 3 } },
    ],
  });
  studyId = study.id as string;
  // Three generations of four, then one failed evaluation and one still leased: 12 COMPLETED.
  for (let done = 0; done < COMPLETED; done += 4) {
    const s = await call('GET', `/v1/studies/${studyId}/suggestions?count=4&client_id=w1`);
    const trials = s.trials as { trial_id: number; parameters: { x1: number; x2: number } }[];
    await call('POST', `/v1/studies/${studyId}/observations`, { observations: trials.map((tr) => ({ trial_id: tr.trial_id, value: branin(tr.parameters.x1, tr.parameters.x2) })) });
  }
  const more = (await call('GET', `/v1/studies/${studyId}/suggestions?count=2&client_id=w2`)).trials as { trial_id: number }[];
  await call('POST', `/v1/studies/${studyId}/trials/${more[0]!.trial_id}/fail`, { reason: 'simulated crash' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
});

afterAll(async () => {
  await browser?.close();
  if (t) {
    await t.app.close();
    await t.storage.close();
  }
});

/** A page that records console errors, uncaught exceptions and failed requests. */
async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`request: ${r.url()} ${r.failure()?.errorText}`));
  return { page, errors };
}

describe.skipIf(!hasChromium)('dashboard', () => {
  it('lists studies with a link to each', async () => {
    const { page, errors } = await openPage();
    const res = await page.goto(`${base}/ui`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('#studies tbody tr');
    expect(await page.locator('#studies tbody tr').count()).toBe(1);
    const link = page.locator('#studies tbody a');
    expect(await link.textContent()).toBe('branin-ui');
    expect(await link.getAttribute('href')).toBe(`/ui/studies/${studyId}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('draws the curves, the distribution and the trials of a study, and saves a screenshot', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${base}/ui/studies/${studyId}`);
    await page.waitForSelector('body[data-loaded="true"]');

    expect(await page.locator('#study-name').textContent()).toBe('branin-ui');
    expect(await page.locator('#study-state').textContent()).toBe('ACTIVE');
    // One marker per completed evaluation on both curves; the best-so-far step line has one vertex per evaluation too.
    expect(await page.locator('#plot-best').getAttribute('data-points')).toBe(String(COMPLETED));
    expect(await page.locator('#plot-best circle.pt').count()).toBe(COMPLETED);
    expect(await page.locator('#plot-best .best path.line').getAttribute('data-vertices')).toBe(String(COMPLETED));
    expect(await page.locator('#plot-regret circle.pt').count()).toBe(COMPLETED);

    const history = (await call('GET', `/v1/studies/${studyId}/history`)) as { evaluations: { regret: number }[]; generations: unknown[] };
    const regrets = history.evaluations.map((e) => e.regret).filter((r) => r > 0);
    const decades = Math.max(...regrets) / Math.min(...regrets) >= 100;
    expect(await page.locator('#plot-regret').getAttribute('data-scale')).toBe(decades ? 'log' : 'linear');

    // One panel per parameter, one point per generation in each.
    expect(await page.locator('#dist-plots svg').count()).toBe(2);
    for (const name of ['x1', 'x2']) {
      expect(await page.locator(`#dist-plots svg[data-parameter="${name}"] circle.pt`).count()).toBe(history.generations.length);
    }
    expect(history.generations.length).toBeGreaterThanOrEqual(3);

    // 12 completed + 1 failed + 1 active (+ any the engine generated but nobody holds yet are REQUESTED).
    const trials = ((await call('GET', `/v1/studies/${studyId}/trials?page_size=1000`)).trials as unknown[]).length;
    expect(await page.locator('#trials tbody tr').count()).toBe(trials);
    expect(await page.locator('#trials tbody td.badge.FAILED').count()).toBe(1);
    expect(await page.locator('#trials tbody td.badge.ACTIVE').count()).toBe(1);
    expect(await page.locator('#best-observed').textContent()).not.toBe('–');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(csv[0]).toBe('trial_id,state,generation,client_id,source,value,stderr,x1,x2,failure_reason,created_at,completed_at');
    expect(csv).toHaveLength(trials + 1);
    expect(csv.filter((l) => l.includes(',COMPLETED,'))).toHaveLength(COMPLETED);

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refreshes an ACTIVE study on its own', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${base}/ui/studies/${studyId}`);
    await page.waitForSelector('body[data-loaded="true"]');
    const held = (await call('GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=w2`)).trials as { trial_id: number; parameters: { x1: number; x2: number } }[];
    await call('POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: held[0]!.trial_id, value: 50 }] });
    // Runs in the page (a function, not a string: the CSP forbids eval); `document` is the page's.
    const drawn = (n: number) => (globalThis as any).document.querySelector('#plot-best')?.getAttribute('data-points') === String(n);
    await page.waitForFunction(drawn, COMPLETED + 1, { timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows an error and asks for a key when the API refuses', async () => {
    const { page } = await openPage();
    await page.goto(`${base}/ui/studies/no-such-study`);
    await page.waitForSelector('#status.error');
    expect(await page.locator('#status').textContent()).toMatch(/Could not load/);
    await page.close();
  });
});
