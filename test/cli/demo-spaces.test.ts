/**
 * `probnes demo --function model-choice`: a task with a categorical parameter, conditional ones two
 * levels deep, log and stepped parameters (src/cli/demo-spaces.ts). The task itself (its loss by hand,
 * its optimum off the prior's favourite choice, its refusal of points with the wrong parameters), and
 * the demo end to end through bin/probnes.js: every trial it evaluated has exactly its active
 * parameters with stepped values on their grids, the best point printed is the best trial with only
 * its active parameters; a method that cannot search categorical parameters is refused with exit 2.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { activeNames, MODEL_CHOICE } from '../../src/cli/demo-spaces.js';
import { main } from '../../src/cli/main.js';
import { getStrategy, registeredMethods } from '../../src/engine/index.js';
import { injectOk, makeTestApp } from '../helpers/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/probnes.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-cli-spaces-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const run = promisify(execFile);

type Point = Record<string, number | string | boolean>;

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { ...process.env, DATABASE_PATH: path.join(tmp, 'unused.db') }, cwd: tmp });
  return { code, out, err };
}

/** The active parameters of each branch, written out by hand (docs/cli.md lists them). */
function expectedKeys(p: Point): string[] {
  if (p.model === 'linear') return ['model', 'C'];
  if (p.model === 'tree') return ['model', 'depth', 'subsample'];
  if (p.model === 'net') return p.layers === 1 ? ['model', 'lr', 'layers'] : ['model', 'lr', 'layers', 'dropout'];
  throw new Error(`model ${String(p.model)}`);
}

/** The loss written out again from its definition (demo-spaces.ts), independently of the task's code. */
function loss(p: Point): number {
  const n = (k: string) => p[k] as number;
  if (p.model === 'linear') return 0.3 + 0.02 * (Math.log10(n('C')) - 0.5) ** 2;
  if (p.model === 'tree') return 0.22 + 0.004 * (n('depth') - 10) ** 2 + 0.5 * (n('subsample') - 0.8) ** 2;
  const lr = 0.03 * (Math.log10(n('lr')) + 2.5) ** 2;
  const rest = p.layers === 1 ? 0.06 : p.layers === 2 ? 0.8 * (n('dropout') - 0.2) ** 2 : 0.01 + 0.8 * (n('dropout') - 0.3) ** 2;
  return 0.12 + lr + rest;
}

/** The grids, as the server hands their values out (decimal values rounded once to a double). */
const DEPTHS = [2, 4, 6, 8, 10, 12, 14, 16];
const SUBSAMPLES = [0.5, 0.6, 0.7, 0.8, 0.9, 1];
const DROPOUTS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5];

describe('the model-choice task', () => {
  it('has the loss written in its definition, at points of every branch', () => {
    const points: Point[] = [
      { model: 'linear', C: 1 },
      { model: 'linear', C: 1e-3 },
      { model: 'tree', depth: 2, subsample: 0.5 },
      { model: 'tree', depth: 10, subsample: 0.8 },
      { model: 'net', lr: 1e-3, layers: 1 },
      { model: 'net', lr: 10 ** -2.5, layers: 3, dropout: 0.3 },
      { model: 'net', lr: 1e-5, layers: 2, dropout: 0 },
    ];
    const byHand = [0.305, 0.3 + 0.02 * 12.25, 0.22 + 0.256 + 0.045, 0.22, 0.12 + 0.0075 + 0.06, 0.13, 0.12 + 0.03 * 6.25 + 0.032];
    points.forEach((p, i) => {
      expect(MODEL_CHOICE.evaluate(p), JSON.stringify(p)).toBeCloseTo(byHand[i]!, 12);
      expect(MODEL_CHOICE.evaluate(p)).toBeCloseTo(loss(p), 12);
    });
  });

  it('attains f* at its optimum point, and nowhere on a fine scan of the space does better', () => {
    expect(MODEL_CHOICE.evaluate(MODEL_CHOICE.optimumPoint)).toBeCloseTo(MODEL_CHOICE.optimum, 14);
    expect(MODEL_CHOICE.optimum).toBe(0.12);
    const logs = (lo: number, hi: number) => Array.from({ length: 401 }, (_, i) => 10 ** (lo + ((hi - lo) * i) / 400));
    let min = Infinity;
    for (const C of logs(-3, 3)) min = Math.min(min, MODEL_CHOICE.evaluate({ model: 'linear', C }));
    for (const depth of DEPTHS) for (const subsample of SUBSAMPLES) min = Math.min(min, MODEL_CHOICE.evaluate({ model: 'tree', depth, subsample }));
    for (const lr of logs(-5, -1)) {
      min = Math.min(min, MODEL_CHOICE.evaluate({ model: 'net', lr, layers: 1 }));
      for (const layers of [2, 3]) for (const dropout of DROPOUTS) min = Math.min(min, MODEL_CHOICE.evaluate({ model: 'net', lr, layers, dropout }));
    }
    expect(min).toBeGreaterThanOrEqual(MODEL_CHOICE.optimum - 1e-12);
    expect(min).toBeCloseTo(MODEL_CHOICE.optimum, 10);
  });

  it('puts the optimum off the prior\'s most probable choice, whose best is worse', () => {
    const model = MODEL_CHOICE.parameters[0]!;
    expect(model.type).toBe('categorical');
    if (model.type !== 'categorical') return;
    const probs = model.prior!.probabilities!;
    const favourite = model.choices[probs.indexOf(Math.max(...probs))];
    expect(favourite).toBe('linear');
    expect(MODEL_CHOICE.optimumPoint.model).not.toBe(favourite);
    expect(MODEL_CHOICE.evaluate({ model: 'linear', C: 10 ** 0.5 })).toBeCloseTo(0.3, 12);
  });

  it('declares a log float, a stepped int, a stepped float and a condition on a conditional parent', () => {
    const byName = Object.fromEntries(MODEL_CHOICE.parameters.map((p) => [p.name, p]));
    expect(byName.C).toMatchObject({ scale: 'log', condition: { parent: 'model', values: ['linear'] } });
    expect(byName.lr).toMatchObject({ scale: 'log', condition: { parent: 'model', values: ['net'] } });
    expect(byName.depth).toMatchObject({ type: 'int', step: 2 });
    expect(byName.subsample).toMatchObject({ type: 'float', step: 0.1 });
    expect(byName.layers).toMatchObject({ type: 'categorical', condition: { parent: 'model', values: ['net'] } });
    expect(byName.dropout).toMatchObject({ step: 0.05, condition: { parent: 'layers', values: [2, 3] } });
  });

  it('activeNames follows conditions to any depth, a child inactive when its parent is', () => {
    const ps = MODEL_CHOICE.parameters;
    expect(activeNames(ps, { model: 'net', layers: 2 })).toEqual(['model', 'lr', 'layers', 'dropout']);
    expect(activeNames(ps, { model: 'net', layers: 1 })).toEqual(['model', 'lr', 'layers']);
    // layers = 2 left over from another branch does not make dropout active: its parent is not.
    expect(activeNames(ps, { model: 'tree', layers: 2 })).toEqual(['model', 'depth', 'subsample']);
    // Choices compare by JSON type too: "2" is not the choice 2.
    expect(activeNames(ps, { model: 'net', layers: '2' })).toEqual(['model', 'lr', 'layers']);
  });

  it('refuses a point with an inactive, unknown or missing parameter, naming it', () => {
    expect(() => MODEL_CHOICE.evaluate({ model: 'net', lr: 1e-3, layers: 1, dropout: 0.1 })).toThrow(/inactive or unknown parameters \(dropout\)/);
    expect(() => MODEL_CHOICE.evaluate({ model: 'linear', C: 1, depth: 4 })).toThrow(/inactive or unknown parameters \(depth\)/);
    expect(() => MODEL_CHOICE.evaluate({ model: 'net', lr: 1e-3, layers: 2 })).toThrow(/active parameters missing \(dropout\)/);
    expect(() => MODEL_CHOICE.evaluate({ model: 'linear', C: 1, extra: 1 })).toThrow(/\(extra\)/);
  });
});

describe('probnes demo --function model-choice', () => {
  it('optimises through bin/probnes.js: every trial holds exactly its active parameters on their grids, and the best point printed is the best trial\'s', async () => {
    const db = path.join(tmp, 'model-choice.db');
    const { stdout, stderr } = await run(process.execPath, [BIN, 'demo', '--function', 'model-choice', '--budget', '30', '--db', db], { cwd: ROOT, env: { ...process.env, ENGINE_WORKERS: '0' } });
    expect(stderr).toMatch(/prob-cmaes on model-choice \(7 parameters: .*f\* = 0\.12 at model=net lr=0\.00316228 layers=2 dropout=0\.2\), 30 evaluations/);
    expect(stderr.split('\n').filter((l) => l.startsWith('[')).at(-1)).toMatch(/^\[#{30}\] 30\/30 {2}best /);

    const conn = new Database(db, { readonly: true });
    let trials: { trial_id: number; parameters: Point; value: number }[];
    try {
      trials = (conn.prepare("SELECT trial_id, parameters, json_extract(outcome, '$.value') AS value FROM trials WHERE state = 'COMPLETED' ORDER BY trial_id").all() as { trial_id: number; parameters: string; value: number }[])
        .map((r) => ({ ...r, parameters: JSON.parse(r.parameters) as Point }));
    } finally {
      conn.close();
    }
    expect(trials).toHaveLength(30);
    for (const t of trials) {
      const p = t.parameters;
      expect(Object.keys(p).sort(), JSON.stringify(p)).toEqual(expectedKeys(p).sort());
      if ('depth' in p) expect(DEPTHS).toContain(p.depth);
      if ('subsample' in p) expect(SUBSAMPLES).toContain(p.subsample);
      if ('dropout' in p) expect(DROPOUTS).toContain(p.dropout);
      if ('C' in p) expect(p.C).toBeGreaterThanOrEqual(1e-3);
      if ('lr' in p) expect(p.lr).toBeLessThanOrEqual(1e-1);
      expect(t.value).toBeCloseTo(loss(p), 12);
    }
    // The search went beyond one family.
    expect(new Set(trials.map((t) => t.parameters.model)).size).toBeGreaterThan(1);

    const line = /^best point: (.*) \(trial (\d+)\)$/m.exec(stdout);
    expect(line, stdout).not.toBeNull();
    const printed: Point = Object.fromEntries(line![1]!.split(' ').map((kv) => {
      const [k, v] = kv.split('=') as [string, string];
      return [k, /^-?[\d.]+(e-?\d+)?$/.test(v) ? Number(v) : v];
    }));
    // Exactly the active parameters of its choice, in the study's order.
    expect(Object.keys(printed)).toEqual(expectedKeys(printed));
    const best = trials.reduce((a, b) => (b.value < a.value ? b : a));
    expect(Number(line![2])).toBe(best.trial_id);
    for (const [k, v] of Object.entries(best.parameters)) {
      // Printed to 6 significant digits; a choice as itself.
      expect(printed[k]).toBe(typeof v === 'number' ? Number(v.toPrecision(6)) : v);
    }
    const value = /^best value: (\S+) {2}f\* = (\S+) {2}regret (\S+)$/m.exec(stdout);
    expect(value, stdout).not.toBeNull();
    expect(Number(value![1])).toBeCloseTo(best.value, 7);
    expect(Number(value![2])).toBe(0.12);
    expect(Number(value![3])).toBeCloseTo(best.value - 0.12, 6);
    expect(stdout).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/studies\/[0-9a-f-]{36} /m);
  }, 120_000);

  const able = registeredMethods().filter((m) => getStrategy(m).categorical === true);

  // The refusal of a method without categorical parameters: demo-spaces-refusal.test.ts (a stand-in, since every method has them).

  it('offers exactly the methods whose facts say categorical, as GET /v1/methods reports them', async () => {
    expect(able).toEqual(expect.arrayContaining(['prob-cmaes', 'cmaes', 'bo', 'random']));
    const t = await makeTestApp();
    try {
      const listed = (await injectOk(t.app, 'GET', '/v1/methods')) as { methods: { name: string; categorical: boolean }[] };
      expect(listed.methods.filter((m) => m.categorical).map((m) => m.name).sort()).toEqual([...able].sort());
    } finally {
      await t.app.close();
    }
    const help = await cli(['demo', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/with categorical, conditional and stepped parameters: model-choice/);
    expect(help.out.replace(/\s+/g, ' ')).toContain(`(only the methods that search categorical parameters: ${able.join(', ')})`);
    expect(help.out).toMatch(/probnes demo --function model-choice/);
  });

  it.each([
    [['--dim', '3'], /--dim: model-choice has a fixed space of 7 parameters; leave out --dim/],
    [['--method', 'cmaes', '--batch', '1'], /--batch: cmaes .* needs at least 2/],
  ])('%j is bad usage (exit 2)', async (extra, message) => {
    const r = await cli(['demo', '--function', 'model-choice', ...extra]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('lists model-choice among the functions when one is unknown', async () => {
    const r = await cli(['demo', '--function', 'nope']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/one of .*branin.*truss2d, model-choice/);
  });
});
