/**
 * The study page's "Intermediate values" panel in headless Chromium against a listening app, with
 * the CSP in force. Studies are driven through the real routes: workers report training curves
 * (POST …/intermediate), stop when told to by the median rule and report those trials as stopped.
 * Checked: one series per trial that reported values (plus the median line), stopped trials drawn
 * dashed and marked "stopped" in the trial table, the median line equal to the median the server's
 * rule answers with (and to the domain's median over the same peers), the tooltip, log toggle and
 * zoom, the cap on the number of curves drawn, and a study without intermediate values hiding the
 * panel. Screenshots go to test-artifacts/ui/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { median } from '../../src/domain/studies/stopping-rule.js';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';
import { expectDragZoomAndReset, openPage } from './page.js';
import { BRANIN_PARAMETERS, call, loopStudy, objective } from './seed.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/ui');
const hasChromium = chromiumPresent();
const STEPS = 10;
const RULE = { rule: 'median', min_steps: 2, warmup_trials: 3 };

let t: TestApp;
let base: string;
let browser: Browser;
const ids: Record<string, string> = {};
let runningTrial = 0;
let runningSteps = 0;
let runningParams: P;

type P = { x1: number; x2: number; lr: number };
type Trial = { trial_id: number; parameters: P };
/** A training curve that decays from the final value + 40 toward the trial's objective value. */
const curve = (p: P, step: number) => objective(p) + 40 * Math.exp(-step / 2.5);

/** Trials evaluated one at a time, each reporting its curve and stopping when the rule says so. */
async function curvesStudy(app: TestApp['app'], trials: number): Promise<string> {
  const study = await call(app, 'POST', '/v1/studies', { name: 'curves', method: 'random', batch_size: 4, seed: 5, parameters: BRANIN_PARAMETERS, stopping: RULE });
  for (let k = 0; k < trials; k++) {
    const [trial] = (await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=1&client_id=w1`)).trials as Trial[];
    let last = 0;
    let stopped = false;
    for (let step = 0; step < STEPS && !stopped; step++) {
      last = curve(trial!.parameters, step);
      stopped = (await call(app, 'POST', `/v1/studies/${study.id}/trials/${trial!.trial_id}/intermediate`, { step, value: last })).should_stop;
    }
    await call(app, 'POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: trial!.trial_id, value: last, ...(stopped ? { stopped: true } : {}) }] });
  }
  // One trial still running, four steps in.
  const [running] = (await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=1&client_id=w2`)).trials as Trial[];
  runningTrial = running!.trial_id;
  runningParams = running!.parameters;
  for (runningSteps = 0; runningSteps < 4; runningSteps++) {
    await call(app, 'POST', `/v1/studies/${study.id}/trials/${runningTrial}/intermediate`, { step: runningSteps, value: curve(running!.parameters, runningSteps) });
  }
  return study.id;
}

/** `n` trials, each reporting three steps and completing: more curves than the panel draws. */
async function manyCurvesStudy(app: TestApp['app'], n: number): Promise<string> {
  const study = await call(app, 'POST', '/v1/studies', { name: 'many-curves', method: 'random', batch_size: 5, seed: 9, parameters: BRANIN_PARAMETERS });
  for (let done = 0; done < n; done += 5) {
    const trials = (await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=5&client_id=w1`)).trials as Trial[];
    for (const tr of trials) {
      // The very first trial is the best by far: it must be drawn although it is the oldest.
      const final = tr.trial_id === 1 ? -100 : objective(tr.parameters);
      for (let step = 0; step < 3; step++) await call(app, 'POST', `/v1/studies/${study.id}/trials/${tr.trial_id}/intermediate`, { step, value: final + 10 / (step + 1) });
      await call(app, 'POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: tr.trial_id, value: final }] });
    }
  }
  return study.id;
}

beforeAll(async () => {
  if (!hasChromium) return;
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  ids.curves = await curvesStudy(t.app, 14);
  ids.plain = await loopStudy(t.app, 'random', 2, { name: 'no-curves' });
  ids.many = await manyCurvesStudy(t.app, 205);
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

async function studyPage(id: string): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await openPage(browser);
  const res = await page.goto(`${base}/ui/studies/${id}?idle_minutes=100000000`);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.waitForSelector('body[data-loaded="true"]');
  return { page, errors };
}

/** What the chart drew: its series' labels, dash patterns and data (read from the uPlot object in the page). */
async function drawn(page: Page) {
  return page.evaluate(() => {
    const u = (globalThis as any).document.querySelector('#plot-intermediate').__chart;
    return {
      labels: (u.series as { label: string }[]).slice(1).map((s) => s.label),
      dashed: (u.series as { label: string; dash?: number[] }[]).slice(1).filter((s) => s.dash?.length).map((s) => s.label),
      data: u.data as (number | null)[][],
    };
  });
}

interface TrialRes {
  trial_id: number;
  state: string;
  stopped: boolean;
}

describe.skipIf(!hasChromium)('dashboard: intermediate values', () => {
  it('draws one curve per trial, stopped ones dashed and marked, and the median the rule uses', async () => {
    const id = ids.curves!;
    // The running trial reports one more step: the server's answer carries the median the rule compared with.
    const answer = await call(t.app, 'POST', `/v1/studies/${id}/trials/${runningTrial}/intermediate`, { step: runningSteps, value: curve(runningParams, runningSteps) });
    expect(answer.median).not.toBeNull();
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as TrialRes[];
    const curves = (await call(t.app, 'GET', `/v1/studies/${id}/intermediate_values`)).trials as { trial_id: number; intermediate_values: { step: number; value: number }[] }[];
    const stopped = trials.filter((x) => x.stopped).map((x) => x.trial_id);
    const peers = trials.filter((x) => x.state === 'COMPLETED' && !x.stopped).map((x) => x.trial_id);
    // The seed gives the rule something to do: some trials stopped, enough completed to end its warm-up.
    expect(stopped.length).toBeGreaterThanOrEqual(2);
    expect(peers.length).toBeGreaterThanOrEqual(RULE.warmup_trials);
    expect(curves.length).toBe(15);

    const { page, errors } = await studyPage(id);
    const panel = page.locator('#plot-intermediate');
    expect(await page.locator('#intermediate-section').isVisible()).toBe(true);
    expect(await panel.getAttribute('data-series')).toBe(String(curves.length));
    expect(await panel.getAttribute('data-stopped')).toBe(String(stopped.length));
    expect(await panel.getAttribute('data-median')).toBe('true');
    const d = await drawn(page);
    expect(d.labels.length).toBe(curves.length + 1);
    expect(d.labels.filter((l) => l === 'median')).toHaveLength(1);
    expect(new Set(d.labels.filter((l) => l !== 'median'))).toEqual(new Set(curves.map((c) => `trial ${c.trial_id}`)));
    expect(new Set(d.dashed)).toEqual(new Set(stopped.map((s) => `trial ${s}`)));
    // Each curve is drawn with the values reported, at their steps.
    const xs = d.data[0]!;
    for (const c of curves) {
      const col = d.data[d.labels.indexOf(`trial ${c.trial_id}`) + 1]!;
      expect(c.intermediate_values.map((v) => col[xs.indexOf(v.step)])).toEqual(c.intermediate_values.map((v) => v.value));
      expect(col.filter((v) => v !== null)).toHaveLength(c.intermediate_values.length);
    }
    // The median line: at the step just reported, the server's own median; at every step from
    // min_steps on, the domain's median of the completed, not stopped, trials' values there.
    const med = d.data[d.labels.indexOf('median') + 1]!;
    expect(med[xs.indexOf(runningSteps)]).toBe(answer.median);
    for (let step = 0; step < STEPS; step++) {
      const at = curves.filter((c) => peers.includes(c.trial_id)).flatMap((c) => c.intermediate_values.filter((v) => v.step === step).map((v) => v.value));
      expect(med[xs.indexOf(step)]).toBe(step >= RULE.min_steps && at.length ? median(at) : null);
    }
    expect(await page.locator('#intermediate-note').textContent()).toContain(`stopped early (${stopped.length})`);

    // The trial table marks stopped trials in the state column and filters them.
    for (const s of stopped) expect(await page.locator(`#trials tr[data-trial="${s}"] td:nth-child(2)`).textContent()).toBe('stopped');
    for (const p of peers) expect(await page.locator(`#trials tr[data-trial="${p}"] td:nth-child(2)`).textContent()).toBe('COMPLETED');
    await page.selectOption('#state-filter', 'stopped');
    await page.waitForSelector(`#trials[data-rows="${stopped.length}"]`);
    await page.selectOption('#state-filter', '');

    // Hover: the tooltip names the trial nearest the cursor, its step and value.
    const over = page.locator('#plot-intermediate .u-over');
    // The whole panel in view, so that its screenshot below is a clip of the viewport with the cursor on the chart.
    await page.locator('#intermediate-section').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const point = await page.evaluate(([label, stepIdx]) => {
      const u = (globalThis as any).document.querySelector('#plot-intermediate').__chart;
      const s = (u.series as { label: string }[]).findIndex((x) => x.label === label);
      return { left: u.valToPos(u.data[0][stepIdx], 'x'), top: u.valToPos(u.data[s][stepIdx], 'y') };
    }, [`trial ${runningTrial}`, xs.indexOf(0)] as const);
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + point.left, box.y + point.top);
    await page.waitForSelector('#plot-intermediate .u-tip:not([hidden])');
    const tip = await page.locator('#plot-intermediate .u-tip').textContent();
    expect(tip).toMatch(/^trial \d+ · /);
    expect(tip).toContain('step 0');
    expect(tip).toMatch(/value /);

    // The panel with the tooltip showing (a clip of the page: an element screenshot would scroll and move the cursor off it).
    await page.screenshot({ path: path.join(ARTIFACTS, 'intermediate-values.png'), clip: (await page.locator('#intermediate-section').boundingBox())! });

    // Zoom by dragging, reset by double click.
    await over.scrollIntoViewIfNeeded();
    await expectDragZoomAndReset(page, '#plot-intermediate', (await over.boundingBox())!, 0.2, 0.5);

    // The log toggle (every value here is positive: a plain log axis).
    await page.click('label[for="curve-scale-log"]');
    await page.waitForSelector('#plot-intermediate[data-scale="log"]');
    expect((await drawn(page)).labels.length).toBe(curves.length + 1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'study-intermediate.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('hides the panel for a study without intermediate values', async () => {
    const { page, errors } = await studyPage(ids.plain!);
    expect((await call(t.app, 'GET', `/v1/studies/${ids.plain}/intermediate_values`)).trials).toEqual([]);
    expect(await page.locator('#intermediate-section').isHidden()).toBe(true);
    expect(await page.locator('#plot-intermediate').getAttribute('data-series')).toBe('0');
    expect(await page.locator('#plot-intermediate canvas').count()).toBe(0);
    // The rest of the page is there.
    expect(await page.locator('#plot-best canvas').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('draws at most the 200 most recent curves plus the best, and says so', async () => {
    const id = ids.many!;
    const best = await call(t.app, 'GET', `/v1/studies/${id}/best`);
    expect(best.observed.trial_id).toBe(1);
    const { page, errors } = await studyPage(id);
    const panel = page.locator('#plot-intermediate');
    expect(await panel.getAttribute('data-total')).toBe('205');
    expect(await panel.getAttribute('data-series')).toBe('201');
    // 615 values: one page of the route, read whole.
    expect(await panel.getAttribute('data-complete')).toBe('true');
    expect(await panel.getAttribute('data-median')).toBe('false');
    const labels = (await drawn(page)).labels;
    // Trials 1..205: the best (1) and the 200 most recent (6..205); 2..5 are left out.
    expect(labels).toHaveLength(201);
    expect(labels).toContain('trial 1');
    for (const left of [2, 3, 4, 5]) expect(labels).not.toContain(`trial ${left}`);
    expect(labels).toContain('trial 205');
    expect(await page.locator('#intermediate-note').textContent()).toContain('Showing 201 of 205 trials\' curves: the 200 most recent and the best');
    await page.locator('#intermediate-section').screenshot({ path: path.join(ARTIFACTS, 'intermediate-values-205-trials.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
