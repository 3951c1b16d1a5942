/**
 * The probnes CLI: every command answers --help with usage and an example, bad usage exits 2 with a
 * message naming the problem, `demo` optimises through its own HTTP API and prints the best point and
 * the dashboard URL, `bench` delegates to bench/paper.ts, `backup` copies a live WAL database.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BRANIN_FSTAR } from '../../src/engine/benchmarks/classic.js';
import { SqliteStorage } from '../../src/storage/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/probnes.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-cli-cmd-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const run = promisify(execFile);

async function cli(argv: string[], env: NodeJS.ProcessEnv = { DATABASE_PATH: path.join(tmp, 'unused.db') }) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { ...process.env, ...env }, cwd: tmp });
  return { code, out, err };
}

describe('probnes --help', () => {
  it('lists every command', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['serve', 'demo', 'bench', 'keys create', 'keys list', 'keys revoke', 'backup']) expect(r.out).toContain(`  ${c}`);
    expect(r.out).toMatch(/examples:/);
  });

  it.each([
    [['serve', '--help'], /usage: probnes serve/],
    [['demo', '--help'], /usage: probnes demo[\s\S]*--method[\s\S]*--function[\s\S]*--dim[\s\S]*--budget[\s\S]*--port[\s\S]*--keep-running[\s\S]*examples:/],
    [['keys', '--help'], /usage: probnes keys[\s\S]*create[\s\S]*list[\s\S]*revoke[\s\S]*examples:/],
    [['keys', 'create', '--help'], /usage: probnes keys create --tenant NAME[\s\S]*example:/],
    [['keys', 'list', '-h'], /usage: probnes keys list[\s\S]*example:/],
    [['keys', 'revoke', '--help'], /usage: probnes keys revoke ID[\s\S]*example:/],
    [['backup', '--help'], /usage: probnes backup DEST[\s\S]*examples:/],
    [['help', 'demo'], /usage: probnes demo/],
  ])('%j prints usage and an example on stdout, exit 0, touching no database', async (argv, usage) => {
    const db = path.join(tmp, `help-${argv.join('-')}.db`);
    const r = await cli(argv, { DATABASE_PATH: db });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(usage);
    expect(r.err).toBe('');
    expect(fs.existsSync(db)).toBe(false);
  });

  it('bench --help shows its usage and the runner\'s own options', async () => {
    const r = await cli(['bench', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/usage: probnes bench[\s\S]*examples:[\s\S]*runner options \(bench\/paper\.ts\):/);
    // These come from bench/lib/args.ts, not from the CLI's text.
    for (const o of ['--methods', '--functions', '--seeds', '--budget', '--resume', '--out']) expect(r.out).toContain(o);
  }, 60_000);
});

describe('bad usage exits 2 and names the problem', () => {
  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [[], /usage: probnes <command>/],
    [['serve', '--port', '1'], /takes no arguments/],
    [['demo', '--bogus'], /Unknown option '--bogus'/],
    [['demo', 'extra'], /unexpected argument "extra"/],
    [['demo', '--budget', '0'], /--budget must be an integer from 1 to 100000 \(got "0"\)/],
    [['demo', '--budget', '2.5'], /--budget must be an integer/],
    [['demo', '--budget'], /--budget.*argument missing/],
    [['demo', '--method', 'sgd'], /--method: unknown method "sgd"; one of .*prob-cmaes/],
    [['demo', '--function', 'nope'], /--function: unknown function "nope"; one of .*branin.*zdt1, zdt2, zdt3, dtlz2, truss2d/],
    [['demo', '--function', 'zdt1', '--dim', '1'], /--dim must be an integer from 2 to 100 \(got "1"\)/],
    [['demo', '--function', 'truss2d', '--method', 'cmaes'], /--method: cmaes does not search truss2d \(2 objectives with constraints\); one of .*prob-cmaes/],
    [['demo', '--dim', '3'], /--dim: branin is defined only in 2 dimensions \(got 3\)/],
    [['demo', '--method', 'cmaes', '--batch', '1'], /--batch: cmaes .* needs at least 2/],
    [['demo', '--port', '70000'], /--port must be an integer from 0 to 65535/],
    [['backup'], /expected 1 argument, got 0/],
    [['backup', 'a', 'b'], /expected 1 argument, got 2/],
    [['keys', 'create', '--tenant'], /argument missing/],
  ])('%j', async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('bench passes a bad option to the runner, which refuses it with exit 2', async () => {
    const r = await cli(['bench', '--methods', 'nope', '--out', path.join(tmp, 'bench-bad')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown or unregistered method nope/);
  }, 60_000);
});

describe('probnes demo', () => {
  it('runs Branin with a budget of 30 through bin/probnes.js: plain progress lines, best point, regret, dashboard URL', async () => {
    const { stdout, stderr } = await run(process.execPath, [BIN, 'demo', '--budget', '30'], { cwd: ROOT, env: { ...process.env, ENGINE_WORKERS: '0' } });
    // Not a terminal: one plain line per tenth of the budget, no carriage returns.
    expect(stderr).not.toContain('\r');
    const bars = stderr.split('\n').filter((l) => l.startsWith('['));
    expect(bars.length).toBe(10);
    expect(bars.at(-1)).toMatch(/^\[#{30}\] 30\/30 {2}best /);

    const point = stdout.match(/^best point: x1=(\S+) x2=(\S+) \(trial (\d+)\)$/m);
    expect(point, stdout).not.toBeNull();
    const [x1, x2] = [Number(point![1]), Number(point![2])];
    expect(x1).toBeGreaterThanOrEqual(-5); // Branin's box, which the server projects onto
    expect(x1).toBeLessThanOrEqual(10);
    expect(x2).toBeGreaterThanOrEqual(0);
    expect(x2).toBeLessThanOrEqual(15);
    const value = stdout.match(/^best value: (\S+) {2}f\* = (\S+) {2}regret (\S+)$/m);
    expect(value, stdout).not.toBeNull();
    // f* of Branin is 10/(8π) exactly (src/engine/benchmarks/classic.ts); regret = best − f*.
    expect(Number(value![2])).toBeCloseTo(BRANIN_FSTAR, 7);
    expect(Number(value![3])).toBeCloseTo(Number(value![1]) - BRANIN_FSTAR, 3);
    // The best of 30 Branin evaluations from a prior spanning the box is far from a random point's
    // ~50 (the box's mean value); 10 is a loose bound any working loop meets.
    expect(Number(value![1])).toBeLessThan(10);
    expect(stdout).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/studies\/[0-9a-f-]{36} /m);
  }, 120_000);

  it('with --keep-running and --db, stays up serving the dashboard and the study until SIGINT, then exits 0', async () => {
    const db = path.join(tmp, 'demo-keep.db');
    const child = spawn(process.execPath, [BIN, 'demo', '--budget', '9', '--method', 'random', '--db', db, '--keep-running'], { cwd: ROOT, env: { ...process.env, ENGINE_WORKERS: '0' } });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (b: Buffer) => {
          stdout += b.toString();
          const m = stdout.match(/^dashboard: (\S+)$/m);
          if (m) resolve(m[1]!);
        });
        void exited.then(() => reject(new Error(`exited early: ${stderr}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      const api = url.replace('/ui/studies/', '/v1/studies/');
      const study = (await (await fetch(api)).json()) as { trial_counts: Record<string, number>; method: string };
      expect(study.method).toBe('random');
      expect(study.trial_counts.COMPLETED).toBe(9);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // The study was kept in the given file.
    const conn = new Database(db, { readonly: true });
    try {
      expect(conn.prepare("SELECT count(*) AS n FROM trials WHERE state = 'COMPLETED'").get()).toEqual({ n: 9 });
    } finally {
      conn.close();
    }
  }, 120_000);
});

describe('probnes demo with several objectives', () => {
  /** The front's lines: trial id, objective values and the point, as the demo prints them. */
  function frontLines(out: string): { trial: number; f: number[]; x: number[] }[] {
    return [...out.matchAll(/^ {2}trial (\d+): ((?:f\d+=\S+ ?)+) {2}at ((?:x\d+=\S+ ?)+)$/gm)].map((m) => ({
      trial: Number(m[1]),
      f: m[2]!.trim().split(' ').map((kv) => Number(kv.split('=')[1])),
      x: m[3]!.trim().split(' ').map((kv) => Number(kv.split('=')[1])),
    }));
  }

  it('zdt1: prints the server\'s front (ZDT1 values of its points, none dominating another) and its hypervolume beside the true front\'s', async () => {
    const r = await cli(['demo', '--function', 'zdt1', '--dim', '4', '--budget', '30'], { ENGINE_WORKERS: '0' });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/on zdt1 \(4-D, 2 objectives\), 30 evaluations/);
    expect(r.err.split('\n').filter((l) => l.startsWith('[')).at(-1)).toMatch(/^\[#{30}\] 30\/30 {2}front \d+ {2}hypervolume \S+ \(\S+ % of the true front's\)/);
    const head = /^front: (\d+) trials? of 30 evaluations, by f1:$/m.exec(r.out);
    expect(head, r.out).not.toBeNull();
    const front = frontLines(r.out);
    expect(front).toHaveLength(Math.min(12, Number(head![1])));
    for (const p of front) {
      // ZDT1 (Zitzler, Deb & Thiele 2000): f1 = x1, g = 1 + 9/(d−1)·Σ_{i≥2} x_i, f2 = g·(1 − √(f1/g)); printed to 6 digits.
      const g = 1 + (9 / 3) * (p.x[1]! + p.x[2]! + p.x[3]!);
      expect(p.f[0]).toBeCloseTo(p.x[0]!, 4);
      // Relative to the value printed, absolute at the front's end where f2 = 0 (x1 = g = 1).
      const f2 = g * (1 - Math.sqrt(p.x[0]! / g));
      expect(Math.abs(p.f[1]! - f2)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(f2)));
    }
    // The server's front: no printed point is at least as good in both objectives and better in one than another.
    for (const p of front) for (const q of front) if (p !== q) expect(q.f[0]! <= p.f[0]! && q.f[1]! <= p.f[1]! && (q.f[0]! < p.f[0]! || q.f[1]! < p.f[1]!)).toBe(false);
    expect(front.map((p) => p.f[0])).toEqual([...front.map((p) => p.f[0])].sort((a, b) => a! - b!));
    // The true front dominates every point, so no hypervolume against r = (1.1, 1.1) exceeds its 1.1² − 1/3 (zdt.ts).
    const hv = /^hypervolume: (\S+) against r = \(1\.1, 1\.1\); the true front's (\S+) \((\S+) %\)$/m.exec(r.out);
    expect(hv, r.out).not.toBeNull();
    expect(Number(hv![2])).toBeCloseTo(1.1 * 1.1 - 1 / 3, 7);
    expect(Number(hv![1])).toBeGreaterThanOrEqual(0);
    expect(Number(hv![1])).toBeLessThanOrEqual(Number(hv![2]));
    expect(r.out).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/studies\/\S+ /m);
  }, 120_000);

  it('truss2d: a constrained task says how many evaluations were feasible, and its front meets the constraint', async () => {
    const r = await cli(['demo', '--function', 'truss2d', '--budget', '24'], { ENGINE_WORKERS: '0' });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/on truss2d \(3-D, 2 objectives, 1 constraint\)/);
    const head = /^front: (\d+) trials? of (\d+) evaluations, (\d+) of them feasible, by f1:$/m.exec(r.out);
    expect(head, r.out).not.toBeNull();
    expect(Number(head![2])).toBe(24);
    expect(Number(head![3])).toBeLessThanOrEqual(24);
    // Feasible: the stress f2 at most 10⁵ kPa (src/engine/benchmarks/truss.ts: c1 = S − 10⁵ ≤ 0).
    for (const p of frontLines(r.out)) expect(p.f[1]).toBeLessThanOrEqual(1e5);
    if (Number(head![1]) > 0) expect(r.out).toMatch(/^hypervolume: \S+ against r = \(/m);
  }, 120_000);
});

describe('probnes bench', () => {
  it('runs a tiny configuration through bench/paper.ts and writes its report', async () => {
    const out = path.join(tmp, 'bench-tiny');
    const r = await cli(['bench', '--methods', 'random', '--functions', 'branin', '--seeds', '1', '--budget', '6', '--workers', '1', '--out', out]);
    expect(r.code, r.err).toBe(0);
    const runs = fs.readFileSync(path.join(out, 'runs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { method: string; function: string; values: number[] });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ method: 'random', function: 'branin' });
    expect(runs[0]!.values).toHaveLength(6);
    expect(fs.existsSync(path.join(out, 'results.md'))).toBe(true);
    expect(r.out).toContain('branin'); // the tables, streamed to stdout
  }, 120_000);
});

describe('probnes backup', () => {
  it('copies commits that are still only in the WAL, which a copy of the main file misses', async () => {
    const db = path.join(tmp, 'live.db');
    const storage = SqliteStorage.open(db);
    try {
      // Committed, acknowledged, and (while this connection stays open) only in live.db-wal.
      await storage.ensureTenant('acme', '2025-01-01T00:00:00.000Z');
      expect(fs.statSync(`${db}-wal`).size).toBeGreaterThan(0);

      const naive = path.join(tmp, 'naive.db');
      fs.copyFileSync(db, naive);
      const dest = path.join(tmp, 'backup.db');
      const r = await cli(['backup', dest], { DATABASE_PATH: db });
      expect(r.code, r.err).toBe(0);
      expect(r.err).toMatch(/integrity ok/);

      const tenants = (file: string) => {
        const conn = new Database(file, { readonly: true });
        try {
          return (conn.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'tenants'").get() as { n: number }).n === 0
            ? []
            : conn.prepare('SELECT id FROM tenants').all();
        } finally {
          conn.close();
        }
      };
      expect(tenants(dest)).toContainEqual({ id: 'acme' });
      expect(tenants(naive)).not.toContainEqual({ id: 'acme' });

      // Never overwrites; a missing source is an error, not a new empty database.
      const again = await cli(['backup', dest], { DATABASE_PATH: db });
      expect(again.code).toBe(1);
      expect(again.err).toMatch(/already exists/);
      const missing = await cli(['backup', path.join(tmp, 'x.db')], { DATABASE_PATH: path.join(tmp, 'nope.db') });
      expect(missing.code).toBe(1);
      expect(fs.existsSync(path.join(tmp, 'nope.db'))).toBe(false);
    } finally {
      await storage.close();
    }
  });
});
