/**
 * `npm run bench:ui-plot`: the dashboard's plotting library chosen by measurement, in headless
 * Chromium (playwright-core, /usr/bin/chromium).
 *
 * 1. Libraries, each drawing 5,000 evaluations (points + a stepped best-so-far line, 640×300 px):
 *    bytes served (minified, and gzip -9), render time (median of --runs, from the call until two
 *    animation frames later, i.e. painted), and the log y axis of a regret falling over 33 decades
 *    in 230 px: labels drawn and the smallest gap between two of them.
 *      uplot        uPlot 1.6.32 (the dashboard's: node_modules/uplot), with the dashboard's log
 *                   ticks (src/ui/charts.js logSplits) and with uPlot's default log ticks
 *      svg          the hand-written SVG plot the dashboard had before (git show <ref>:src/ui/plot.js)
 *      observable   Observable Plot, when --observable <file> names a browser build of it (an IIFE
 *                   defining the global ObsPlot, e.g. esbuild --bundle --minify --format=iife
 *                   --global-name=ObsPlot of `export * as Plot from '@observablehq/plot'`); it is not
 *                   a dependency of the project, so it is measured only when given
 * 2. The dashboard itself on a study of 5,000 trials (an app in this process, GP fits in one engine
 *    worker thread as in production): time from navigation until the study page has drawn everything
 *    but the model, and until the model's contour too (the page's own performance marks), and the
 *    time to re-sort the trial table and to redraw the value plot on a log axis.
 *
 * With --out DIR it also writes DIR/results.md (the output) and DIR/runs.jsonl.gz (every timed run).
 *
 *   npm run bench:ui-plot [-- --runs 7] [--observable /path/plot.iife.min.js] [--svg-ref f2ffb02~1] [--out DIR]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { createEngineRunner } from '../src/domain/pool/engine-pool.js';
import { SqliteStorage } from '../src/storage/index.js';
import { bigStudy } from '../test/ui/seed.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CHROMIUM = '/usr/bin/chromium';
const N = 5000;

interface Lib {
  name: string;
  files: Record<string, Buffer>;
  served: string[];
  licence: string;
}

function libraries(observable: string | undefined, svgRef: string): Lib[] {
  const uplot = fs.readFileSync(path.join(ROOT, 'node_modules/uplot/dist/uPlot.iife.min.js'));
  const charts = fs.readFileSync(path.join(ROOT, 'src/ui/charts.js'));
  const api = fs.readFileSync(path.join(ROOT, 'src/ui/api.js'));
  const oldPlot = execFileSync('git', ['show', `${svgRef}:src/ui/plot.js`], { cwd: ROOT });
  const libs: Lib[] = [
    { name: 'uplot', files: { 'uPlot.iife.min.js': uplot, 'charts.js': charts, 'api.js': api }, served: ['uPlot.iife.min.js'], licence: 'MIT' },
    { name: 'svg', files: { 'plot.js': oldPlot }, served: ['plot.js'], licence: 'MIT (this project)' },
  ];
  if (observable) libs.push({ name: 'observable', files: { 'plot.iife.min.js': fs.readFileSync(observable) }, served: ['plot.iife.min.js'], licence: 'ISC (with d3, ISC)' });
  return libs;
}

function serve(files: Record<string, Buffer>): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const name = (req.url ?? '/').slice(1) || 'index.html';
    const body = name === 'index.html' ? Buffer.from('<!doctype html><meta charset="utf-8"><body><div id="root" style="width:640px"></div></body>') : files[name];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': name.endsWith('.html') ? 'text/html' : 'text/javascript' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs in the page: draws N points + best-so-far with the named library; returns ms until painted. */
async function renderOnce(page: Page, lib: string): Promise<number> {
  return page.evaluate(async ({ lib, n }) => {
    const g = globalThis as any;
    const doc = g.document;
    const root = doc.getElementById('root');
    root.replaceChildren();
    let s = 7;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const xs = Array.from({ length: n }, (_, i) => i + 1);
    const ys = xs.map(() => 10 * rand() ** 3);
    let b = Infinity;
    const best = ys.map((v) => (b = Math.min(b, v)));
    const frames = () => new Promise((r) => g.requestAnimationFrame(() => g.requestAnimationFrame(r)));
    const t0 = g.performance.now();
    if (lib === 'uplot') {
      const u = g.uPlot;
      new u({ width: 640, height: 300, scales: { x: { time: false } }, series: [{}, { stroke: 'blue', paths: () => null, points: { show: true, size: 5 } }, { stroke: 'red', paths: u.paths.stepped({ align: 1 }) }] }, [xs, ys, best], root);
    } else if (lib === 'svg') {
      const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
      root.appendChild(svg);
      g.oldPlot(svg, [{ points: xs.map((x, i) => [x, ys[i]]), dots: true }, { points: xs.map((x, i) => [x, best[i]]), line: true, step: true }], {});
    } else {
      const P = g.ObsPlot.Plot;
      root.appendChild(P.plot({ width: 640, height: 300, marks: [P.dot(xs, { x: (_: unknown, i: number) => xs[i], y: (_: unknown, i: number) => ys[i], r: 2 }), P.line(xs, { x: (_: unknown, i: number) => xs[i], y: (_: unknown, i: number) => best[i], curve: 'step-after', stroke: 'red' })] }));
    }
    root.getBoundingClientRect();
    await frames();
    return g.performance.now() - t0;
  }, { lib, n: N });
}

/** Runs in the page: a 33-decade regret on a log axis 230 px tall; the labels drawn and their smallest gap. */
async function logTicks(page: Page, lib: string, variant: string): Promise<{ labels: number; minGap: number }> {
  return page.evaluate(async ({ lib, variant }) => {
    const g = globalThis as any;
    const doc = g.document;
    const root = doc.getElementById('root');
    root.replaceChildren();
    const xs = Array.from({ length: 60 }, (_, i) => i + 1);
    const r = xs.map((i) => (i === 1 ? 28 : 10 ** (-((i - 1) * 32.3) / 59)));
    let pos: number[] = [];
    if (lib === 'uplot') {
      const charts = await import('/charts.js' as string);
      const axis = variant === 'dashboard' ? charts.yAxis('log', 'regret') : {};
      const u = new g.uPlot({ width: 640, height: 300, scales: { x: { time: false }, y: charts.scaleOpts('log') }, axes: [{}, axis], series: [{}, { stroke: 'red' }] }, [xs, r], root);
      await new Promise((res) => g.requestAnimationFrame(() => g.requestAnimationFrame(res)));
      const ax = u.axes[1];
      // No splits at all: uPlot drew no labels on this axis.
      pos = ((ax._splits ?? []) as number[]).filter((_: number, i: number) => ax._values[i] !== null && ax._values[i] !== '').map((v: number) => u.valToPos(v, 'y'));
      g.__plotHeight = u.bbox.height / g.uPlot.pxRatio;
    } else if (lib === 'svg') {
      const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('width', '640');
      svg.setAttribute('height', '300');
      root.appendChild(svg);
      g.oldPlot(svg, [{ points: xs.map((x, i) => [x, r[i]]), line: true }], { log: true });
      pos = [...svg.querySelectorAll('.axes text[text-anchor="end"]')].map((t: any) => Number(t.getAttribute('y')));
    } else {
      const P = g.ObsPlot.Plot;
      const fig = P.plot({ width: 640, height: 300, y: { type: 'log' }, marks: [P.line(xs, { x: (_: unknown, i: number) => xs[i], y: (_: unknown, i: number) => r[i] })] });
      root.appendChild(fig);
      pos = [...fig.querySelectorAll('[aria-label="y-axis tick label"] text')].map((t: any) => t.getBoundingClientRect().top);
    }
    pos.sort((a, b) => a - b);
    const gaps = pos.slice(1).map((p, i) => p - pos[i]!);
    return { labels: pos.length, minGap: gaps.length ? Math.min(...gaps) : Infinity };
  }, { lib, variant });
}

async function dashboard(page: Page, runs: number): Promise<Record<string, number>> {
  // As served in production: GP fits in a worker thread (the engine pool), not on this process's event
  // loop, which also runs the browser's driver.
  const engine = createEngineRunner(1);
  const storage = SqliteStorage.open(':memory:');
  const t = { app: await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 120_000, rateLimitPerMinute: 0 }, storage, engine }), storage };
  try {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const id = await bigStudy(t.app, N);
    const load: number[] = [], model: number[] = [], sort: number[] = [], log: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Times from the page's own clock: navigation start to the marks study.js sets when everything
      // but the model is drawn, and when the model's contour is.
      await page.goto(`${base}/ui/studies/${id}?idle_minutes=100000000`);
      await page.waitForFunction(() => (globalThis as any).performance.getEntriesByName('probnes:model').length > 0, undefined, { timeout: 120_000 });
      const marks = await page.evaluate(() => ['probnes:loaded', 'probnes:model'].map((m) => (globalThis as any).performance.getEntriesByName(m)[0].startTime as number));
      load.push(marks[0]!);
      model.push(marks[1]!);
      sort.push(await page.evaluate(async () => {
        const d = (globalThis as any).document;
        const t1 = performance.now();
        d.querySelector('#trials th[data-key="value"]').click();
        d.querySelector('#trials').getBoundingClientRect();
        return performance.now() - t1;
      }));
      log.push(await page.evaluate(async () => {
        const d = (globalThis as any).document;
        const t1 = performance.now();
        d.querySelector('label[for="value-scale-log"]').click();
        d.querySelector('#plot-best').getBoundingClientRect();
        return performance.now() - t1;
      }));
      await page.evaluate(() => (globalThis as any).localStorage.clear());
    }
    return { load: median(load), model: median(model), sort: median(sort), log: median(log) };
  } finally {
    await t.app.close();
    await t.storage.close();
    await engine.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, observable: { type: 'string' }, 'svg-ref': { type: 'string', default: 'f2ffb02~1' }, out: { type: 'string' } } });
  const lines: string[] = [];
  const say = (l: string) => (console.log(l), lines.push(l));
  const records: Record<string, unknown>[] = [];
  const runs = Number(values.runs);
  const libs = libraries(values.observable, values['svg-ref']!);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync'] });
  say(`Plotting libraries in Chromium, ${N} evaluations, median of ${runs} renders; ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}`);
  say('');
  say('| library | served (min) | gzip -9 | render 5,000 (ms) | log axis, 33 decades in 230 px: labels, min gap (px) | licence |');
  say('|---|---|---|---|---|---|');
  try {
    for (const lib of libs) {
      const files: Record<string, Buffer> = { ...lib.files };
      if (lib.name === 'svg') files['glue.js'] = Buffer.from("import { plot } from '/plot.js'; globalThis.oldPlot = plot;");
      const srv = await serve(files);
      const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
      // tsx compiles the functions handed to page.evaluate with esbuild's name helper; define it there.
      await page.addInitScript('globalThis.__name = (f) => f;');
      await page.goto(`${srv.url}/index.html`);
      if (lib.name === 'svg') await page.addScriptTag({ url: '/glue.js', type: 'module' });
      else for (const f of lib.served) await page.addScriptTag({ url: `/${f}` });
      await page.waitForFunction((n) => (n === 'svg' ? !!(globalThis as any).oldPlot : true), lib.name);
      const times: number[] = [];
      await renderOnce(page, lib.name); // warm-up (parsing, JIT)
      for (let i = 0; i < runs; i++) times.push(await renderOnce(page, lib.name));
      times.forEach((ms, i) => records.push({ kind: 'render', library: lib.name, run: i, ms }));
      const bytes = lib.served.reduce((s, f) => s + lib.files[f]!.length, 0);
      const gz = lib.served.reduce((s, f) => s + gzipSync(lib.files[f]!, { level: 9 }).length, 0);
      const ticks = lib.name === 'uplot' ? [['dashboard', await logTicks(page, 'uplot', 'dashboard')], ['default', await logTicks(page, 'uplot', 'default')]] as const : [['', await logTicks(page, lib.name, '')]] as const;
      const tickText = ticks.map(([v, t]) => `${v ? `${v}: ` : ''}${t.labels}, ${Number.isFinite(t.minGap) ? t.minGap.toFixed(1) : '–'}`).join('; ');
      for (const [v, t] of ticks) records.push({ kind: 'log-ticks', library: lib.name, variant: v || null, labels: t.labels, min_gap_px: Number.isFinite(t.minGap) ? t.minGap : null });
      say(`| ${lib.name} | ${(bytes / 1024).toFixed(1)} KiB | ${(gz / 1024).toFixed(1)} KiB | ${median(times).toFixed(1)} | ${tickText} | ${lib.licence} |`);
      await page.close();
      srv.close();
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.addInitScript('globalThis.__name = (f) => f;');
    const d = await dashboard(page, Math.min(runs, 3));
    records.push({ kind: 'dashboard', trials: N, ...d });
    say('');
    say(`Dashboard, study of ${N} trials (median of ${Math.min(runs, 3)}): page load until every plot, the table and the summary are drawn ${d.load!.toFixed(0)} ms, until the model's importance and contour are too ${d.model!.toFixed(0)} ms (the first visit fits the GP; later ones reuse its hyperparameters); re-sort the trial table ${d.sort!.toFixed(0)} ms; value plot to log axis ${d.log!.toFixed(0)} ms`);
  } finally {
    await browser.close();
  }
  if (values.out) {
    fs.mkdirSync(values.out, { recursive: true });
    fs.writeFileSync(path.join(values.out, 'results.md'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(values.out, 'runs.jsonl.gz'), gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n'));
  }
}

await main();
