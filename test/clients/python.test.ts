/**
 * The Python client (clients/python) against the real server process: start the server on a free
 * port with a temporary database, then run the client's unittest suite and its example with
 * PROBNES_URL pointing at it, so `npm test` covers the client in CI.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLIENT_DIR = path.join(ROOT, 'clients/python');
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasPython) console.warn('Python client tests skipped: python3 is not installed');

let server: ChildProcess | undefined;
let base = '';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-py-'));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a command to completion without blocking the event loop (the server is our child). */
function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: CLIENT_DIR, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  if (!hasPython) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: path.join(tmp, 'py.db'), LOG_LEVEL: 'warn', LOG_PRETTY: 'false', ENGINE_WORKERS: '2' },
    stdio: 'ignore',
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server did not become ready');
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!hasPython)('Python client', () => {
  it('passes its unittest suite against the real server', async () => {
    const r = await run('python3', ['-m', 'unittest', '-v', 'test_client'], { PROBNES_URL: base, PYTHONDONTWRITEBYTECODE: '1' });
    if (r.code !== 0) console.error(r.out);
    expect(r.code).toBe(0);
    const ran = /Ran (\d+) tests?/.exec(r.out);
    expect(Number(ran?.[1])).toBeGreaterThanOrEqual(10);
    expect(r.out).toMatch(/\nOK\s*$/);
  });

  it('runs the example: a Branin study optimised by 4 workers', async () => {
    const r = await run('python3', ['example.py', base, '--quiet', '--budget', '24'], { PYTHONDONTWRITEBYTECODE: '1' });
    if (r.code !== 0) console.error(r.out);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/24 evaluations \(0 failed\) .* by \['branin-0', 'branin-1', 'branin-2', 'branin-3'\]/);
    const best = Number(/best value ([\d.]+)/.exec(r.out)?.[1]);
    // Branin's minimum is 0.397887; any point found is at least that.
    expect(best).toBeGreaterThanOrEqual(0.397887);
    expect(Number.isFinite(best)).toBe(true);
  });
});
