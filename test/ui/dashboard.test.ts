/**
 * The dashboard in headless Chromium against a listening app, with the CSP in force: a ProbNES, a
 * CMA-ES and a BO study (with and without known_optimum) driven through the real loop routes, a
 * study whose regret spans 33 decades, and one of 5,000 trials. For each study page it checks what
 * was drawn (points per chart, one slice per parameter, the parallel-coordinates lines, the
 * importance rows, the contour's cells and ellipses, the table's rows), the interactions (tooltip,
 * log toggle, zoom, generation slider, sort, filters, notes), that the browser logged no errors,
 * and it writes screenshots to test-artifacts/ui/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';
import { expectDragZoomAndReset, openPage as openBrowserPage } from './page.js';
import { bigStudy, BRANIN_MIN, BRANIN_PARAMETERS, call, decadesStudy, loopStudy } from './seed.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/ui');
const hasChromium = chromiumPresent();

let t: TestApp;
let base: string;
let browser: Browser;
const ids: Record<string, string> = {};
const CASES = [
  ['prob-cmaes', true],
  ['prob-cmaes', false],
  ['cmaes', true],
  ['cmaes', false],
  ['bo', true],
  ['bo', false],
] as const;
const key = (method: string, known: boolean) => `${method}-${known ? 'known' : 'unknown'}`;
const GENERATIONS = 5;

beforeAll(async () => {
  if (!hasChromium) return;
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  for (const [method, known] of CASES) {
    const extra: Record<string, unknown> = { name: key(method, known), metadata: { owner: 'team-a' }, ...(known ? { known_optimum: BRANIN_MIN } : {}) };
    if (method === 'prob-cmaes') extra.options = { candidates: 64 };
    if (method === 'bo') extra.options = { candidates: 100, mc_samples: 16 };
    ids[key(method, known)] = await loopStudy(t.app, method, method === 'bo' ? 3 : GENERATIONS, extra);
  }
  // One failed and one leased trial in the first study, so the table shows every kind of row.
  const first = ids[key('prob-cmaes', true)]!;
  const more = (await call(t.app, 'GET', `/v1/studies/${first}/suggestions?count=2&client_id=w2`)).trials as { trial_id: number }[];
  await call(t.app, 'POST', `/v1/studies/${first}/trials/${more[0]!.trial_id}/fail`, { reason: 'simulated crash' });
  ids.decades = await decadesStudy(t.app);
  ids.categorical = await loopStudy(t.app, 'cmaes', GENERATIONS, {
    name: 'categorical',
    parameters: [...BRANIN_PARAMETERS, { name: 'opt', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'] }],
  });
  // Stepped parameters; x2's high (15.2) is off its grid and becomes 15.
  ids.stepped = await loopStudy(t.app, 'cmaes', 2, {
    name: 'stepped',
    parameters: [{ ...BRANIN_PARAMETERS[0], step: 0.5 }, { ...BRANIN_PARAMETERS[1], bounds: [0, 15.2], step: 1.5 }, BRANIN_PARAMETERS[2]],
  });
  ids.big = await bigStudy(t.app, 5000);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (t) {
    await t.app.close();
    await t.storage.close();
  }
});

/** A page that records console errors, uncaught exceptions, CSP violations and failed requests. */
const openPage = (width?: number) => openBrowserPage(browser, width);

/** The y-axis labels uPlot drew on a chart, and their pixel positions (read from the chart object). */
async function yLabels(page: Page, selector: string): Promise<{ text: string; px: number }[]> {
  // Runs in the page (a function, not a string: the CSP forbids eval).
  return page.evaluate((sel) => {
    const u = (globalThis as any).document.querySelector(sel).__chart;
    const ax = u.axes[1];
    return (ax._splits as number[]).map((v: number, i: number) => ({ text: String(ax._values[i]), px: u.valToPos(v, 'y') })).filter((l: { px: number }) => l.px >= -1 && l.px <= u.bbox.height / (globalThis as any).uPlot.pxRatio + 1);
  }, selector);
}

async function studyPage(id: string, query = '?idle_minutes=100000000') {
  const { page, errors } = await openPage();
  const res = await page.goto(`${base}/ui/studies/${id}${query}`);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.waitForSelector('body[data-loaded="true"]');
  await page.waitForFunction(() => {
    const d = (globalThis as any).document;
    return d.querySelector('#importance')?.dataset.source && d.querySelector('#plot-contour')?.dataset.generation;
  });
  return { page, errors };
}

describe.skipIf(!hasChromium)('dashboard', () => {
  it('lists studies, marks idle ones, and links to each', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${base}/ui`);
    await page.waitForSelector('body[data-loaded="true"]');
    expect(await page.locator('#studies tbody tr').count()).toBe(CASES.length + 4);
    const link = page.locator('#studies tbody a', { hasText: 'bo-known' });
    expect(await link.getAttribute('href')).toBe(`/ui/studies/${ids['bo-known']}`);
    // The test clock is in 2025: every ACTIVE study without max_trials has been quiet for far longer than 10 minutes.
    expect(await page.locator('#studies tbody td.badge.IDLE').count()).toBe(CASES.length + 4);
    await page.screenshot({ path: path.join(ARTIFACTS, 'studies.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it.each(CASES)('%s (known_optimum: %s): every view renders', async (method, known) => {
    const id = ids[key(method, known)]!;
    const { page, errors } = await studyPage(id);
    const history = await call(t.app, 'GET', `/v1/studies/${id}/history`);
    const n = history.evaluations.length;
    expect(await page.locator('#plot-best').getAttribute('data-points')).toBe(String(n));
    expect(await page.locator('#plot-best canvas').count()).toBe(1);
    expect(await page.locator('#plot-regret').getAttribute('data-points')).toBe(known ? String(n) : '0');
    if (!known) expect(await page.locator('#plot-regret').textContent()).toContain('no known_optimum');
    // One slice and one distribution panel per parameter, each with one point per evaluation / generation.
    for (const p of ['x1', 'x2', 'lr']) {
      expect(await page.locator(`[data-slice="${p}"]`).getAttribute('data-points')).toBe(String(n));
      expect(await page.locator(`#dist-plots [data-parameter="${p}"]`).getAttribute('data-points')).toBe(String(history.generations.length));
    }
    expect(await page.locator('#plot-parallel').getAttribute('data-lines')).toBe(String(n));
    // Importance: one row per parameter, from the method's GP (prob-cmaes, bo) or one fitted for the view (cmaes).
    expect(await page.locator('#importance .imp-row').count()).toBe(3);
    expect(await page.locator('#importance').getAttribute('data-source')).toBe(method === 'cmaes' ? 'fitted' : 'method');
    expect(await page.locator('#plot-contour').getAttribute('data-cells')).toBe(String(40 * 40));
    expect(await page.locator('#plot-contour').getAttribute('data-ellipses')).toBe('2');
    // BO keeps no search distribution (GET /v1/methods says so): the note says what the ellipses are.
    const note = `${method} keeps no search distribution`;
    if (method === 'bo') await page.waitForFunction((text) => (globalThis as any).document.querySelector('#contour-note')?.textContent.includes(text), note);
    else expect(await page.locator('#contour-note').textContent()).not.toContain(note);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials.length;
    expect(await page.locator('#trials').getAttribute('data-rows')).toBe(String(trials));
    await page.screenshot({ path: path.join(ARTIFACTS, `study-${key(method, known)}.png`), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a study with a categorical parameter: slices, parallel coordinates and table filters show its choices', async () => {
    const id = ids.categorical!;
    const { page, errors } = await studyPage(id);
    const history = await call(t.app, 'GET', `/v1/studies/${id}/history`);
    const n = history.evaluations.length;
    expect(await page.locator('[data-slice="opt"]').getAttribute('data-points')).toBe(String(n));
    expect(await page.locator('#plot-parallel').getAttribute('data-lines')).toBe(String(n));
    // The distribution panels cover the numeric parameters; importance every parameter, the
    // categorical one too (no length scale: its row says categorical); the model is fitted for the view.
    expect(await page.locator('#dist-plots [data-parameter]').count()).toBe(3);
    expect(await page.locator('#importance .imp-row').count()).toBe(4);
    expect(await page.locator('#importance .imp-row[data-type="categorical"]').getAttribute('data-parameter')).toBe('opt');
    expect(await page.locator('#importance .imp-row[data-parameter="opt"] .imp-bar').evaluate((e) => parseFloat((e as any).style.width))).toBeGreaterThan(0);
    expect(await page.locator('#importance .imp-row[data-parameter="opt"] .imp-text').textContent()).toContain('categorical');
    expect(await page.locator('#importance').getAttribute('data-source')).toBe('fitted');
    // The contour: a choice selector for opt, at the most probable choice until one is picked.
    const probs = (await call(t.app, 'GET', `/v1/studies/${id}/distribution`)).probabilities.opt as number[];
    const mode = ['adam', 'sgd', 'rmsprop'][probs.indexOf(Math.max(...probs))];
    expect(JSON.parse((await page.locator('#plot-contour').getAttribute('data-choices'))!)).toEqual({ opt: mode });
    expect(await page.locator('#contour-note').textContent()).toContain(`opt=${mode} (most probable)`);
    const pick = mode === 'sgd' ? 'rmsprop' : 'sgd';
    await page.selectOption('select[data-choice="opt"]', { label: pick });
    await page.waitForSelector(`#plot-contour[data-choices='${JSON.stringify({ opt: pick })}']`);
    expect(await page.locator('#contour-note').textContent()).toContain(`opt=${pick}.`);
    // The trials at the other choices are drawn hollow: as many as the grid says are off its slice.
    const grid = await call(t.app, 'GET', `/v1/studies/${id}/model/grid?x=x1&y=x2&n=40&fixed=${encodeURIComponent(JSON.stringify({ opt: pick }))}`);
    const others = grid.points.filter((q: { same_choices: boolean; generation: number }) => !q.same_choices).length;
    expect(others).toBeGreaterThan(0);
    expect(await page.locator('#plot-contour').getAttribute('data-other-choices')).toBe(String(others));
    await page.locator('#model-section').screenshot({ path: path.join(ARTIFACTS, 'study-categorical-model.png') });
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as { parameters: Record<string, unknown> }[];
    await page.selectOption('select[data-param="opt"]', { label: 'sgd' });
    await page.waitForSelector(`#trials[data-rows="${trials.filter((x) => x.parameters.opt === 'sgd').length}"]`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'study-categorical.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('describes each parameter with its bounds and step; the trials hold grid values', async () => {
    const { page, errors } = await studyPage(ids.stepped!);
    expect(await page.locator('#study-facts').textContent()).toContain('x1: float [-5, 10] step 0.5; x2: float [0, 15] step 1.5; lr: float log [0.0001, 1]');
    const trials = (await call(t.app, 'GET', `/v1/studies/${ids.stepped}/trials?page_size=1000`)).trials as { parameters: Record<string, number> }[];
    for (const tr of trials) {
      expect(Number.isInteger(tr.parameters.x1! * 2)).toBe(true);
      expect(Number.isInteger(tr.parameters.x2! / 1.5)).toBe(true);
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('thins the ticks of a regret axis spanning 33 decades so that no labels overlap', async () => {
    const { page, errors } = await studyPage(ids.decades!);
    expect(await page.locator('#plot-regret').getAttribute('data-scale')).toBe('log');
    const labels = await yLabels(page, '#plot-regret');
    expect(labels.length).toBeGreaterThanOrEqual(3);
    expect(labels.length).toBeLessThanOrEqual(12);
    const gaps = labels.slice(1).map((l, i) => Math.abs(l.px - labels[i]!.px));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20);
    // The value plot is linear by default (28 then values near 0); the toggle makes it logarithmic.
    expect(await page.locator('#plot-best').getAttribute('data-scale')).toBe('linear');
    await page.click('label[for="value-scale-log"]');
    await page.waitForSelector('#plot-best[data-scale="log"]');
    const vLabels = await yLabels(page, '#plot-best');
    expect(Math.min(...vLabels.slice(1).map((l, i) => Math.abs(l.px - vLabels[i]!.px)))).toBeGreaterThanOrEqual(20);
    await page.locator('#plot-regret').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, 'regret-33-decades.png'), clip: (await page.locator('.plots').first().boundingBox())! });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a tooltip with the trial on hover and zooms on drag', async () => {
    const id = ids[key('prob-cmaes', true)]!;
    const { page, errors } = await studyPage(id);
    const over = page.locator('#plot-best .u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await page.waitForSelector('#plot-best .u-tip:not([hidden])');
    const tip = await page.locator('#plot-best .u-tip').textContent();
    expect(tip).toMatch(/evaluation \d+ · trial \d+/);
    expect(tip).toMatch(/x1 = .*x2 = .*lr = /);
    await expectDragZoomAndReset(page, '#plot-best', box, 0.3, 0.6);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows the model of any generation with the slider', async () => {
    const id = ids[key('prob-cmaes', true)]!;
    const { page, errors } = await studyPage(id);
    await page.locator('#generation').fill('1');
    await page.waitForSelector('#plot-contour[data-generation="1"]');
    expect(await page.locator('#generation-label').textContent()).toMatch(/generation 1 of \d+/);
    await page.selectOption('#contour-y', 'lr');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#contour-note')?.textContent.includes('generation 1'));
    await page.locator('#model-section').screenshot({ path: path.join(ARTIFACTS, 'model-generation-1.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('sorts, filters and searches the trial table; edits the notes', async () => {
    const id = ids[key('prob-cmaes', true)]!;
    const { page, errors } = await studyPage(id);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as { state: string; value: number | null; parameters: Record<string, number> }[];
    await page.click('#trials th[data-key="value"]');
    const best = Math.min(...trials.filter((x) => x.value !== null).map((x) => x.value!));
    expect(await page.locator('#trials th[data-key="value"]').getAttribute('aria-sort')).toBe('ascending');
    expect(await page.locator('#trials tbody tr:first-child td:nth-child(5)').textContent()).toBe(String(Number(best.toPrecision(4))));
    await page.selectOption('#state-filter', 'FAILED');
    expect(await page.locator('#trials').getAttribute('data-rows')).toBe('1');
    await page.selectOption('#state-filter', '');
    await page.fill('input[data-param="x1"][data-bound="min"]', '0');
    await page.fill('input[data-param="x1"][data-bound="max"]', '5');
    const inRange = trials.filter((x) => x.parameters.x1! >= 0 && x.parameters.x1! <= 5).length;
    await page.waitForSelector(`#trials[data-rows="${inRange}"]`);

    await page.fill('#notes', 'lr matters less than x1');
    await page.click('#notes-form button[type="submit"]');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#notes-status').textContent.startsWith('saved'));
    const study = await call(t.app, 'GET', `/v1/studies/${id}`);
    expect(study.metadata).toEqual({ owner: 'team-a', notes: 'lr matters less than x1' });
    expect(await page.locator('#metadata').textContent()).toContain('team-a');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a study that maximises: the table puts its largest value first, the charts draw without reading the direction', async () => {
    const id = await loopStudy(t.app, 'cmaes', 3, { direction: 'maximize' });
    const { page, errors } = await studyPage(id);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as { value: number | null }[];
    await page.click('#trials th[data-key="value"]');
    const best = Math.max(...trials.filter((x) => x.value !== null).map((x) => x.value!));
    // Best first, and the header says how the values read: largest first.
    expect(await page.locator('#trials th[data-key="value"]').getAttribute('aria-sort')).toBe('descending');
    expect(await page.locator('#trials tbody tr:first-child td:nth-child(5)').textContent()).toBe(String(Number(best.toPrecision(4))));
    await page.click('#trials th[data-key="value"]');
    expect(await page.locator('#trials th[data-key="value"]').getAttribute('aria-sort')).toBe('ascending');
    expect(await page.locator('#plot-parallel').getAttribute('data-lines')).toBe(String(trials.filter((x) => x.value !== null).length));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('stops refreshing an idle study and keeps refreshing an active one', async () => {
    const id = ids[key('cmaes', true)]!;
    const idle = await studyPage(id, '');
    expect(await idle.page.locator('#study-state').textContent()).toBe('IDLE');
    expect(await idle.page.locator('body').getAttribute('data-refreshing')).toBe('false');
    expect(await idle.page.locator('#status').textContent()).toMatch(/idle for .* not refreshing/);
    expect(await idle.page.locator('#refresh').isVisible()).toBe(true);
    await idle.page.close();

    const { page, errors } = await studyPage(id);
    expect(await page.locator('body').getAttribute('data-refreshing')).toBe('true');
    const n = Number(await page.locator('#plot-best').getAttribute('data-points'));
    const held = (await call(t.app, 'GET', `/v1/studies/${id}/suggestions?count=1&client_id=w3`)).trials as { trial_id: number }[];
    await call(t.app, 'POST', `/v1/studies/${id}/observations`, { observations: [{ trial_id: held[0]!.trial_id, value: 50 }] });
    const drawn = (k: number) => (globalThis as any).document.querySelector('#plot-best')?.getAttribute('data-points') === String(k);
    await page.waitForFunction(drawn, n + 1, { timeout: 15_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('overlays the best-so-far curves of several studies', async () => {
    const chosen = [ids[key('prob-cmaes', true)]!, ids[key('cmaes', true)]!, ids[key('bo', true)]!];
    const { page, errors } = await openPage();
    await page.goto(`${base}/ui/compare?ids=${chosen.join(',')}`);
    await page.waitForSelector('body[data-loaded="true"]');
    expect(await page.locator('#plot-compare').getAttribute('data-series')).toBe('3');
    expect(await page.locator('#compare-caption').textContent()).toMatch(/regret/i);
    await page.click('label[for="compare-scale-log"]');
    await page.waitForSelector('#plot-compare[data-scale="log"]');
    await page.screenshot({ path: path.join(ARTIFACTS, 'compare.png'), fullPage: true });
    // Unticking a study redraws without it.
    await page.locator(`#compare-pick input[data-id="${chosen[2]}"]`).uncheck();
    await page.waitForSelector('#plot-compare[data-series="2"]');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('draws a study of 5,000 trials', async () => {
    const { page, errors } = await studyPage(ids.big!);
    expect(await page.locator('#plot-best').getAttribute('data-points')).toBe('5000');
    expect(await page.locator('#plot-parallel').getAttribute('data-lines')).toBe('5000');
    expect(await page.locator('#trials').getAttribute('data-rows')).toBe('5000');
    expect(await page.locator('#trials tbody tr').count()).toBe(100);
    await page.screenshot({ path: path.join(ARTIFACTS, 'study-5000-trials.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('shows an error when the API refuses', async () => {
    const { page } = await openPage();
    await page.goto(`${base}/ui/studies/no-such-study`);
    await page.waitForSelector('#status.error');
    expect(await page.locator('#status').textContent()).toMatch(/Could not load/);
    await page.close();
  });
});
