/**
 * The dashboard for several objectives, constraints and infeasible points (docs/dashboard.md), in
 * headless Chromium against a listening app with the CSP in force:
 * - a study of two objectives (error minimised, accuracy maximised) with a constraint, 20 results
 *   reported by parameters (17 with values, 2 of them over the constraint; 3 reported infeasible):
 *   the front plot highlights exactly /front's trials, the axis selects re-plot, the toggle hides the
 *   constraint-violating trials, hover and click show a trial, the hypervolume curve has one point per
 *   result and states its derived reference point, the summary has the front's size and hypervolume,
 *   the table has a column per objective and constraint and marks the rows that are not feasible, and the
 *   CSV carries them;
 * - a study of three objectives with a declared reference point;
 * - a study of one objective with a constraint: its rows marked, its value curve of feasible results only;
 * - hostile names (served by rewriting the study resource: the API's name pattern refuses them) and a
 *   hostile study name render as text.
 * Expected counts come from the API's own answers (/front, /front/history, /history, /trials).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';
import { openPage } from './page.js';
import { call } from './seed.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/ui');
const hasChromium = chromiumPresent();

type Trial = { trial_id: number; state: string; values: number[] | null; losses: number[] | null; constraints: number[] | null; feasible: boolean | null; infeasible: boolean; value: number | null };

let t: TestApp;
let base: string;
let browser: Browser;
const ids: Record<string, string> = {};

/** Deterministic points in [0, 1]² (a linear congruential generator). */
function points(n: number, seed: number): { x: number; y: number }[] {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, () => ({ x: rand(), y: rand() }));
}

const PARAMETERS = [
  { name: 'x', bounds: [0, 1] },
  { name: 'y', bounds: [0, 1] },
];

beforeAll(async () => {
  if (!hasChromium) return;
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

  // Two objectives that trade off (error = x falls with x, accuracy = √x − y/2 rises with it), a
  // constraint memory_over = y − 0.85 (over 0 for y > 0.85), and every 7th point reported infeasible.
  const two = await call(t.app, 'POST', '/v1/studies', {
    name: 'two-objectives',
    method: 'random',
    batch_size: 4,
    seed: 1,
    parameters: PARAMETERS,
    objectives: [
      { name: 'error', direction: 'minimize' },
      { name: 'accuracy', direction: 'maximize' },
    ],
    constraints: [{ name: 'memory_over' }],
  });
  ids.two = two.id;
  await call(t.app, 'POST', `/v1/studies/${two.id}/observations`, {
    observations: points(20, 7).map((p, i) => (i % 7 === 3 ? { parameters: p, infeasible: true } : { parameters: p, values: [p.x, Math.sqrt(p.x) - p.y / 2], constraints: [p.y - 0.85] })),
  });

  const three = await call(t.app, 'POST', '/v1/studies', {
    name: 'three-objectives',
    method: 'random',
    batch_size: 4,
    seed: 2,
    parameters: PARAMETERS,
    objectives: [
      { name: 'f1', direction: 'minimize' },
      { name: 'f2', direction: 'minimize' },
      { name: 'f3', direction: 'maximize' },
    ],
    reference_point: [2, 2, -1],
  });
  ids.three = three.id;
  await call(t.app, 'POST', `/v1/studies/${three.id}/observations`, {
    observations: points(20, 11).map((p) => ({ parameters: p, values: [p.x, (1 - p.x) * (1 + p.y), p.y * (1 - p.x)] })),
  });

  const one = await call(t.app, 'POST', '/v1/studies', { name: 'one-constrained', method: 'random', batch_size: 4, seed: 3, parameters: PARAMETERS, constraints: [{ name: 'c' }] });
  ids.one = one.id;
  await call(t.app, 'POST', `/v1/studies/${one.id}/observations`, {
    observations: points(12, 5).map((p, i) => (i === 4 ? { parameters: p, infeasible: true } : { parameters: p, value: (p.x - 0.3) ** 2 + p.y, constraints: [p.x - 0.6] })),
  });

  const hostile = await call(t.app, 'POST', '/v1/studies', {
    name: '<img src=x onerror="document.body.dataset.pwned=1">',
    method: 'random',
    batch_size: 4,
    parameters: PARAMETERS,
    objectives: [
      { name: 'a', direction: 'minimize' },
      { name: 'b', direction: 'maximize' },
    ],
    constraints: [{ name: 'c' }],
  });
  ids.hostile = hostile.id;
  await call(t.app, 'POST', `/v1/studies/${hostile.id}/observations`, {
    observations: points(8, 9).map((p) => ({ parameters: p, values: [p.x, p.y], constraints: [p.x - 0.5] })),
  });

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (t) {
    await t.app.close();
    await t.storage.close();
  }
});

async function studyPage(id: string, before?: (page: Page) => Promise<unknown>) {
  const { page, errors } = await openPage(browser);
  await before?.(page);
  const res = await page.goto(`${base}/ui/studies/${id}?idle_minutes=100000000`);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.waitForSelector('body[data-loaded="true"]');
  return { page, errors };
}

const attr = (page: Page, selector: string, name: string) => page.locator(selector).getAttribute(name);
/** The front plot's drawn points (trial id, kind, x, y) as the page recorded them. */
/** The front plot's axis labels (uPlot draws them on its canvas): x, then y. */
const axisLabels = (page: Page) => page.evaluate(() => ((globalThis as any).document.querySelector('#plot-front').__chart.axes as { label: string }[]).map((a) => a.label));
const drawn = (page: Page) => page.evaluate(() => (globalThis as any).document.querySelector('#plot-front').__drawn as { trial_id: number; kind: string; x: number; y: number }[]);

describe.skipIf(!hasChromium)('dashboard: several objectives, constraints, infeasible points', () => {
  it('two objectives: the front plot highlights /front\'s trials, re-plots on the axis selects, hides violating trials on request', async () => {
    const id = ids.two!;
    const { page, errors } = await studyPage(id);
    const front = await call(t.app, 'GET', `/v1/studies/${id}/front`);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as Trial[];
    const violating = trials.filter((x) => x.feasible === false && !x.infeasible);
    const infeasible = trials.filter((x) => x.infeasible);
    // The data are as designed: a front of several trials, some feasible trials off it, some violating, 3 reported infeasible.
    expect(front.front_size).toBeGreaterThan(1);
    expect(front.front_size).toBeLessThan(front.feasible_count);
    expect(violating.length).toBeGreaterThan(0);
    expect(infeasible).toHaveLength(3);
    expect(front.evaluation_count).toBe(20);

    // The progress curves (best so far) give way to the front and the hypervolume.
    expect(await page.locator('#front-section').isVisible()).toBe(true);
    expect(await page.locator('#progress-section').isVisible()).toBe(false);
    expect(await attr(page, '#plot-front', 'data-front')).toBe(String(front.front_size));
    expect(await attr(page, '#plot-front', 'data-points')).toBe(String(front.feasible_count));
    expect(await attr(page, '#plot-front', 'data-violating')).toBe(String(violating.length));
    expect(await attr(page, '#plot-front', 'data-infeasible')).toBe('3');
    let d = await drawn(page);
    const frontIds = front.trials.map((x: Trial) => x.trial_id).sort((a: number, b: number) => a - b);
    expect(d.filter((p) => p.kind === 'front').map((p) => p.trial_id).sort((a, b) => a - b)).toEqual(frontIds);
    // Default axes: the first two objectives, labelled with name and direction.
    expect(await attr(page, '#plot-front', 'data-x')).toBe('error');
    expect(await attr(page, '#plot-front', 'data-y')).toBe('accuracy');
    expect(await axisLabels(page)).toEqual(['error (minimize)', 'accuracy (maximize)']);
    const byId = new Map(trials.map((x) => [x.trial_id, x]));
    for (const p of d) expect([p.x, p.y]).toEqual(byId.get(p.trial_id)!.values);
    expect(await page.locator('#front-note').textContent()).toContain(`${front.front_size} trials on the front of ${front.feasible_count} feasible of 20 results. 3 reported infeasible`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'study-two-objectives.png'), fullPage: true });
    await page.locator('#front-section').screenshot({ path: path.join(ARTIFACTS, 'study-two-objectives-front.png') });

    // Switching the selects re-plots: x accuracy, y error.
    await page.selectOption('#front-x', { label: 'accuracy (maximize)' });
    await page.selectOption('#front-y', { label: 'error (minimize)' });
    await page.waitForSelector('#plot-front[data-x="accuracy"][data-y="error"]');
    d = await drawn(page);
    for (const p of d) expect([p.y, p.x]).toEqual(byId.get(p.trial_id)!.values);
    expect(await axisLabels(page)).toEqual(['accuracy (maximize)', 'error (minimize)']);
    // The same objective twice is no plot.
    await page.selectOption('#front-y', { label: 'accuracy (maximize)' });
    await page.waitForSelector('#plot-front[data-front="0"]');
    expect(await page.locator('#plot-front').textContent()).toContain('choose two different objectives');
    await page.selectOption('#front-x', { label: 'error (minimize)' });
    await page.waitForSelector(`#plot-front[data-front="${front.front_size}"][data-x="error"]`);

    // The toggle hides the trials over a constraint (and the choice is kept for the next page).
    await page.locator('#front-violating').uncheck();
    await page.waitForSelector('#plot-front[data-violating="0"]');
    expect((await drawn(page)).some((p) => p.kind === 'violating')).toBe(false);
    expect(await attr(page, '#plot-front', 'data-front')).toBe(String(front.front_size));
    await page.locator('#front-violating').check();
    await page.waitForSelector(`#plot-front[data-violating="${violating.length}"]`);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('two objectives: hover and click show the trial; the hypervolume curve has one point per result; the summary has the front', async () => {
    const id = ids.two!;
    const { page, errors } = await studyPage(id);
    const front = await call(t.app, 'GET', `/v1/studies/${id}/front`);
    const fh = await call(t.app, 'GET', `/v1/studies/${id}/front/history`);
    // A front point's pixel, from the chart's own scales.
    const target = front.trials[0] as Trial;
    const pos = await page.evaluate(([x, y]) => {
      const u = (globalThis as any).document.querySelector('#plot-front').__chart;
      const r = u.over.getBoundingClientRect();
      return { x: r.left + u.valToPos(x, 'x'), y: r.top + u.valToPos(y, 'y') };
    }, target.values!);
    await page.mouse.move(pos.x, pos.y);
    await page.waitForSelector('#plot-front .u-tip:not([hidden])');
    const tip = await page.locator('#plot-front .u-tip').textContent();
    expect(tip).toContain(`trial ${target.trial_id} · on the Pareto front`);
    expect(tip).toContain('error (minimize) = ');
    expect(tip).toContain('memory_over = ');
    await page.mouse.click(pos.x, pos.y);
    await page.waitForSelector(`#front-selected[data-trial="${target.trial_id}"]`);
    expect(await page.locator('#front-selected').textContent()).toContain('on the Pareto front');

    // One point per result, infeasible ones included (20), the last at the front's hypervolume; the reference point stated, derived.
    expect(fh.points).toHaveLength(20);
    expect(fh.reference_point.derived).toBe(true);
    expect(await attr(page, '#plot-hypervolume', 'data-points')).toBe('20');
    expect(await attr(page, '#plot-hypervolume', 'data-derived')).toBe('true');
    const caption = await page.locator('#hv-caption').textContent();
    expect(caption).toContain('derived from the front');
    expect(caption).toContain(`error ${fmt(fh.reference_point.value[0])}, accuracy ${fmt(fh.reference_point.value[1])}`);
    const hv = await page.evaluate(() => (globalThis as any).document.querySelector('#plot-hypervolume').__chart.data[1] as number[]);
    expect(hv).toEqual(fh.points.map((p: { hypervolume: number }) => p.hypervolume));
    expect(hv[hv.length - 1]).toBeCloseTo(front.hypervolume, 12);

    expect(await page.locator('#best-title').textContent()).toBe('Pareto front');
    expect(await attr(page, '#best-observed', 'data-front-size')).toBe(String(front.front_size));
    // The model views show the front plot's y objective (accuracy), a GP fitted for the view to its 17
    // values (the 3 infeasible trials have none); choosing error as y redraws them for error.
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#plot-contour')?.dataset.objective === 'accuracy');
    const grid = await call(t.app, 'GET', `/v1/studies/${id}/model/grid?x=x&y=y&n=40&objective=accuracy`);
    expect(grid.n_points).toBe(17);
    expect(await page.locator('#contour-note').textContent()).toContain(`A GP fitted for this view at generation ${grid.generation} (17 points)`);
    expect(await page.locator('#contour-note').textContent()).toContain('The model of accuracy (maximize)');
    expect(await attr(page, '#importance', 'data-source')).toBe('fitted');
    await page.selectOption('#front-y', '0');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#plot-contour')?.dataset.objective === 'error');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#importance')?.textContent.includes('Of error (minimize)'));
    await page.selectOption('#front-y', '1');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#plot-contour')?.dataset.objective === 'accuracy');
    expect(await page.locator('#best-observed').textContent()).toBe(`${front.front_size} trials`);
    expect(await page.locator('#best-observed-params').textContent()).toContain(`hypervolume ${fmt(front.hypervolume)}`);
    expect(await page.locator('#study-facts').textContent()).toContain('error (minimize), accuracy (maximize)');
    // Parallel coordinates: one line per trial with values, an axis per objective; the slices show the y objective.
    expect(await attr(page, '#plot-parallel', 'data-lines')).toBe('17');
    expect(await page.locator('#slice-plots figcaption').first().textContent()).toBe('accuracy (maximize) vs x');
    expect(await attr(page, '[data-slice="x"]', 'data-points')).toBe('17');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('two objectives: the table has a column per objective and constraint, marks what is not feasible, sorts by loss; the CSV carries it', async () => {
    const id = ids.two!;
    const { page, errors } = await studyPage(id);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as Trial[];
    const heads = await page.locator('#trials thead th').allTextContents();
    expect(heads.slice(0, 8)).toEqual(['#', 'State', 'Gen', 'Client', 'error (minimize)', 'accuracy (maximize)', 'memory_over', 'Feasible']);
    const notFeasible = trials.filter((x) => x.feasible === false).map((x) => String(x.trial_id)).sort();
    const marked = await page.locator('#trials tbody tr.infeasible').evaluateAll((rows) => rows.map((r) => (r as any).dataset.trial as string));
    expect(marked.sort()).toEqual(notFeasible);
    const infeasible = trials.find((x) => x.infeasible)!;
    expect(await page.locator(`#trials tr[data-trial="${infeasible.trial_id}"] td:nth-child(8)`).textContent()).toBe('infeasible');
    expect(await page.locator(`#trials tr[data-trial="${infeasible.trial_id}"] td:nth-child(5)`).textContent()).toBe('infeasible');
    const over = trials.find((x) => x.feasible === false && !x.infeasible)!;
    expect(await page.locator(`#trials tr[data-trial="${over.trial_id}"] td:nth-child(8)`).textContent()).toBe('violates memory_over');
    // Sorting by accuracy (maximised) puts the largest first: it sorts by the loss, and the header says how the values read.
    await page.click('#trials th[data-key="o:1"]');
    expect(await attr(page, '#trials th[data-key="o:1"]', 'aria-sort')).toBe('descending');
    const best = Math.max(...trials.filter((x) => x.values).map((x) => x.values![1]!));
    expect(await page.locator('#trials tbody tr:first-child td:nth-child(6)').textContent()).toBe(fmt(best));
    // Filters: not feasible, feasible.
    await page.selectOption('#state-filter', 'not-feasible');
    await page.waitForSelector(`#trials[data-rows="${notFeasible.length}"]`);
    await page.selectOption('#state-filter', 'feasible');
    await page.waitForSelector(`#trials[data-rows="${trials.filter((x) => x.feasible === true).length}"]`);
    await page.selectOption('#state-filter', '');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
    const rows = fs.readFileSync((await download.path())!, 'utf8').trim().split('\n').map((l) => l.split(','));
    const head = rows[0]!;
    const col = (n: string) => head.indexOf(n);
    for (const n of ['value:error', 'value:accuracy', 'constraint:memory_over', 'feasible', 'infeasible']) expect(col(n), n).toBeGreaterThan(0);
    const csvById = new Map(rows.slice(1).map((r) => [Number(r[0]), r]));
    for (const tr of trials) {
      const r = csvById.get(tr.trial_id)!;
      expect(r[col('value:error')]).toBe(tr.values ? String(tr.values[0]) : '');
      expect(r[col('value:accuracy')]).toBe(tr.values ? String(tr.values[1]) : '');
      expect(r[col('constraint:memory_over')]).toBe(tr.constraints ? String(tr.constraints[0]) : '');
      expect(r[col('feasible')]).toBe(String(tr.feasible));
      expect(r[col('infeasible')]).toBe(String(tr.infeasible));
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('three objectives: any two on the axes, the staircase through those undominated in them, the declared reference point', async () => {
    const id = ids.three!;
    const { page, errors } = await studyPage(id);
    const front = await call(t.app, 'GET', `/v1/studies/${id}/front`);
    expect(await attr(page, '#plot-front', 'data-front')).toBe(String(front.front_size));
    expect(await page.locator('#front-x option').allTextContents()).toEqual(['f1 (minimize)', 'f2 (minimize)', 'f3 (maximize)']);
    await page.selectOption('#front-y', { label: 'f3 (maximize)' });
    await page.waitForSelector('#plot-front[data-y="f3"]');
    // The front's trials undominated in (f1, f3), worked from their losses here: the staircase's points.
    const fl = front.trials.map((x: Trial) => [x.losses![0]!, x.losses![2]!] as const);
    const undominated = fl.filter((a: readonly number[]) => !fl.some((b: readonly number[]) => b !== a && b[0]! <= a[0]! && b[1]! <= a[1]! && (b[0]! < a[0]! || b[1]! < a[1]!)));
    expect(await attr(page, '#plot-front', 'data-stairs')).toBe(String(undominated.length));
    expect(await attr(page, '#plot-front', 'data-front')).toBe(String(front.front_size));
    expect(await page.locator('#front-note').textContent()).toContain('With more than two objectives');
    const caption = await page.locator('#hv-caption').textContent();
    expect(caption).toContain('against the study\'s reference point (f1 2, f2 2, f3 -1)');
    expect(caption).not.toContain('derived');
    expect(await attr(page, '#plot-hypervolume', 'data-points')).toBe('20');
    expect(await page.locator('#study-facts').textContent()).toContain('reference point2, 2, -1');
    await page.locator('#front-section').screenshot({ path: path.join(ARTIFACTS, 'study-three-objectives-front.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('one objective with a constraint: infeasible rows marked, the value curve of feasible results, the best feasible', async () => {
    const id = ids.one!;
    const { page, errors } = await studyPage(id);
    const trials = (await call(t.app, 'GET', `/v1/studies/${id}/trials?page_size=1000`)).trials as Trial[];
    const history = await call(t.app, 'GET', `/v1/studies/${id}/history`);
    const best = await call(t.app, 'GET', `/v1/studies/${id}/best`);
    const feasible = trials.filter((x) => x.feasible === true);
    expect(feasible.length).toBeGreaterThan(0);
    expect(feasible.length).toBeLessThan(trials.length - 1);
    // No front section; the value curve is /history's, which counts feasible results only.
    expect(await page.locator('#front-section').isVisible()).toBe(false);
    expect(history.evaluations).toHaveLength(feasible.length);
    expect(await attr(page, '#plot-best', 'data-points')).toBe(String(feasible.length));
    expect(await page.locator('#best-caption').textContent()).toBe(`Objective value per feasible evaluation (${feasible.length} of 12 results) and best so far`);
    expect(await page.locator('#best-observed').textContent()).toBe(fmt(best.observed.value));
    expect(feasible.map((x) => x.trial_id)).toContain(best.observed.trial_id);
    expect(await page.locator('#study-facts').textContent()).toContain('c (feasible when every value ≤ 0)');
    const heads = await page.locator('#trials thead th').allTextContents();
    expect(heads.slice(0, 7)).toEqual(['#', 'State', 'Gen', 'Client', 'Value', 'c', 'Feasible']);
    const marked = await page.locator('#trials tbody tr[data-feasible="false"]').evaluateAll((rows) => rows.map((r) => Number((r as any).dataset.trial)));
    expect(marked.sort((a, b) => a - b)).toEqual(trials.filter((x) => x.feasible === false).map((x) => x.trial_id).sort((a, b) => a - b));
    expect(await page.locator('#trials tbody tr.infeasible').count()).toBe(marked.length);
    // The slices draw the trials over the constraint as a second, grey series.
    expect(await attr(page, '[data-slice="x"]', 'data-violating')).toBe(String(trials.filter((x) => x.feasible === false && !x.infeasible).length));
    expect(await attr(page, '#plot-parallel', 'data-violating')).toBe(String(trials.filter((x) => x.feasible === false && !x.infeasible).length));
    await page.screenshot({ path: path.join(ARTIFACTS, 'study-one-objective-constrained.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('compare: a study of several objectives is named, not drawn as a best-so-far curve', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${base}/ui/compare?ids=${ids.two},${ids.one}`);
    await page.waitForSelector('body[data-loaded="true"]');
    expect(await attr(page, '#plot-compare', 'data-series')).toBe('1');
    expect(await page.locator('#compare-note').textContent()).toContain('not drawn: two-objectives');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('hostile objective, constraint and study names render as text, never HTML', async () => {
    const id = ids.hostile!;
    const A = '<img src=x onerror="document.body.dataset.pwned=1">';
    const B = '</option><script>document.body.dataset.pwned=2</script>';
    const C = 'mem "over" \'quoted\' <b>bold</b>';
    // The API's name pattern refuses such names; the study resource is rewritten on its way to the page,
    // so the dashboard is tested against names it might one day be given.
    const { page, errors } = await studyPage(id, async (p) => {
      await p.route((url) => url.pathname === `/v1/studies/${id}`, async (route) => {
        const res = await route.fetch();
        const body = await res.json();
        body.objectives = [{ name: A, direction: 'minimize' }, { name: B, direction: 'maximize' }];
        body.constraints = [{ name: C }];
        await route.fulfill({ response: res, json: body });
      });
      // The model views name their objective: the server knows them as a and b.
      await p.route((url) => url.pathname.startsWith(`/v1/studies/${id}/model/`), async (route) => {
        const url = new URL(route.request().url());
        const o = url.searchParams.get('objective');
        if (o !== null) url.searchParams.set('objective', o === A ? 'a' : o === B ? 'b' : o);
        const res = await route.fetch({ url: url.toString() });
        const body = await res.json();
        body.objective = body.objective === 'a' ? A : body.objective === 'b' ? B : body.objective;
        await route.fulfill({ response: res, json: body });
      });
    });
    expect(await page.locator('#study-name').textContent()).toBe('<img src=x onerror="document.body.dataset.pwned=1">');
    expect(await page.locator('#front-x option').allTextContents()).toEqual([`${A} (minimize)`, `${B} (maximize)`]);
    expect(await axisLabels(page)).toEqual([`${A} (minimize)`, `${B} (maximize)`]);
    const heads = await page.locator('#trials thead th').allTextContents();
    expect(heads.slice(4, 8)).toEqual([`${A} (minimize)`, `${B} (maximize)`, C, 'Feasible']);
    expect(await page.locator('#trials tbody tr.infeasible td:nth-child(8)').first().textContent()).toBe(`violates ${C}`);
    expect(await page.locator('#study-facts').textContent()).toContain(`${A} (minimize), ${B} (maximize)`);
    // Hover a point: the tooltip names the objectives as text.
    const target = (await call(t.app, 'GET', `/v1/studies/${id}/front`)).trials[0] as Trial;
    const pos = await page.evaluate(([x, y]) => {
      const u = (globalThis as any).document.querySelector('#plot-front').__chart;
      const r = u.over.getBoundingClientRect();
      return { x: r.left + u.valToPos(x, 'x'), y: r.top + u.valToPos(y, 'y') };
    }, target.values!);
    await page.mouse.move(pos.x, pos.y);
    await page.waitForSelector('#plot-front .u-tip:not([hidden])');
    expect(await page.locator('#plot-front .u-tip').textContent()).toContain(`${A} (minimize) = `);
    // The model's note names the y objective as text.
    await page.waitForFunction((name) => (globalThis as any).document.querySelector('#plot-contour')?.dataset.objective === name, B);
    expect(await page.locator('#contour-note').textContent()).toContain(`The model of ${B} (maximize)`);
    // Nothing of it became an element, and nothing ran.
    expect(await page.locator('main img, main script, main b, header img').count()).toBe(0);
    expect(await page.locator('body').getAttribute('data-pwned')).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

/** The dashboard's number format (src/ui/api.js fmt), for expected texts. */
function fmt(v: number): string {
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}
