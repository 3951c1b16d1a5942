/**
 * The dashboard on a conditional study (docs/conditional.md) in headless Chromium: the trials table
 * shows "—" for a parameter a trial did not have, each slice holds the trials that had its
 * parameter, the parallel coordinates draw every trial, the model views render (the contour over
 * C and gamma at kernel = rbf, where gamma applies), the study facts give each conditional
 * parameter's condition ("only when kernel ∈ {rbf}"), a choice holding markup as text, and the
 * browser logs no error.
 */
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';
import { openPage } from './page.js';
import { call } from './seed.js';

const hasChromium = chromiumPresent();
let t: TestApp;
let base: string;
let browser: Browser;
let id: string;
type Params = Record<string, number | string>;

beforeAll(async () => {
  if (!hasChromium) return;
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const study = await call(t.app, 'POST', '/v1/studies', {
    name: 'svc-conditional', method: 'random', seed: 2, batch_size: 6,
    parameters: [
      { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf'] },
      { name: 'C', scale: 'log', bounds: [1e-3, 1e3] },
      { name: 'gamma', scale: 'log', bounds: [1e-4, 10], condition: { parent: 'kernel', values: ['rbf'] } },
    ],
  });
  id = study.id;
  for (let g = 0; g < 4; g++) {
    const s = await call(t.app, 'GET', `/v1/studies/${id}/suggestions?count=6`);
    await call(t.app, 'POST', `/v1/studies/${id}/observations`, { observations: s.trials.map((tr: { trial_id: number; parameters: Params }) => ({ trial_id: tr.trial_id, value: Math.log10(tr.parameters.C as number) ** 2 + (tr.parameters.gamma === undefined ? 1 : Math.log10(tr.parameters.gamma as number) ** 2) })) });
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.app.close();
});

describe.skipIf(!hasChromium)('dashboard, conditional study', () => {
  it('shows inactive cells as —, slices per parameter and every line', async () => {
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=100`)).trials as { parameters: Params }[];
    const withGamma = trials.filter((tr) => 'gamma' in tr.parameters).length;
    expect(withGamma).toBeGreaterThan(0);
    expect(withGamma).toBeLessThan(trials.length);
    const { page, errors } = await openPage(browser);
    await page.goto(`${base}/ui/studies/${id}?idle_minutes=100000000`);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#importance')?.dataset.source);
    expect(await page.locator('#trials td.inactive').count()).toBe(trials.length - withGamma); // one page (of 100) holds them all
    expect(await page.locator('#trials td.inactive').first().textContent()).toBe('—');
    expect(await page.locator('#trials td.inactive').first().getAttribute('title')).toBe('inactive: gamma, only when kernel ∈ {rbf}');
    expect(await page.locator('[data-slice="gamma"]').getAttribute('data-points')).toBe(String(withGamma));
    expect(await page.locator('[data-slice="C"]').getAttribute('data-points')).toBe(String(trials.length));
    expect(await page.locator('#plot-parallel').getAttribute('data-lines')).toBe(String(trials.length));
    expect(await page.locator('#importance .imp-row').count()).toBe(3);
    // The contour over C and gamma is drawn where gamma applies, and says so.
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#plot-contour')?.dataset.generation);
    expect(await page.locator('#plot-contour').getAttribute('data-cells')).toBe(String(40 * 40));
    expect(await page.locator('#contour-note').textContent()).toContain('kernel=rbf (most probable where the axes apply)');
    // The facts: the condition after the conditional parameter's own line; the others' lines as before.
    const facts = await page.locator('#study-facts').textContent();
    expect(facts).toContain('gamma: float log [0.0001, 10], only when kernel ∈ {rbf}');
    expect(facts).toContain('kernel: categorical, 2 choices; C: float log [0.001, 1000]; gamma');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('gives a condition whose choice holds markup as text, never as an element', async () => {
    const markup = '<img src=x onerror="document.body.dataset.injected=1">';
    const study = await call(t.app, 'POST', '/v1/studies', {
      name: 'markup-choice', method: 'random', seed: 3, batch_size: 4,
      parameters: [
        { name: 'mode', type: 'categorical', choices: ['plain', markup] },
        { name: 'layers', type: 'categorical', choices: [1, 2], condition: { parent: 'mode', values: [markup] } },
        { name: 'rate', bounds: [0, 1], step: 0.25, condition: { parent: 'layers', values: [2] } },
      ],
    });
    const s = await call(t.app, 'GET', `/v1/studies/${study.id}/suggestions?count=4`);
    await call(t.app, 'POST', `/v1/studies/${study.id}/observations`, { observations: s.trials.map((tr: { trial_id: number }, i: number) => ({ trial_id: tr.trial_id, value: i })) });
    const { page, errors } = await openPage(browser);
    await page.goto(`${base}/ui/studies/${study.id}?idle_minutes=100000000`);
    await page.waitForSelector('body[data-loaded="true"]');
    const facts = await page.locator('#study-facts').textContent();
    // The string choice is quoted (it holds a double quote), and each nested condition names its own parent.
    expect(facts).toContain(`layers: categorical, 2 choices, only when mode ∈ {${JSON.stringify(markup)}}`);
    expect(facts).toContain('rate: float [0, 1] step 0.25, only when layers ∈ {2}');
    expect(await page.locator('#study-facts img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).document.body.dataset.injected ?? null)).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
