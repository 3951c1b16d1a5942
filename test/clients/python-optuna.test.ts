/**
 * The Optuna bridge of the Python client (probnes_client.optuna.ProbnesSampler) against the real
 * server process, with Debian's python3-optuna under /usr/bin/python3: study.optimize (with n_jobs
 * threads), a pruner, Optuna's RDB storage, enqueued trials, stepped and categorical parameters,
 * a define-by-run space (one server study), a server that goes away mid-run (through a stoppable
 * proxy, in both on_server_error modes), failure text, the user's stopping rule, and studies of
 * several objectives with constraints_func, whose best_trials are the server's front
 * (clients/python/test_optuna.py), and the MLP example on a small budget. With CI=true a missing
 * python3-optuna or python3-sklearn fails the file instead of skipping it (.ci/run installs them).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { required } from '../helpers/requirements.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLIENT_DIR = path.join(ROOT, 'clients/python');
const PYTHON = '/usr/bin/python3';
const present = required(
  "Debian's python3-optuna and python3-sklearn (for /usr/bin/python3)",
  fs.existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import optuna, sklearn']).status === 0,
  'apt-get install -y python3-optuna python3-sklearn',
);

let server: ServerProcess | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-optuna-'));

function run(args: string[], env: Record<string, string>, cwd = CLIENT_DIR): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  if (!present) return;
  server = await startServer(path.join(tmp, 'optuna.db'), { env: { ENGINE_WORKERS: '2' }, readyTimeoutMs: 55_000 });
});

afterAll(async () => {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!present)('Optuna bridge', () => {
  it('passes its unittest suite against the real server', async () => {
    const r = await run(['-m', 'unittest', '-v', 'test_optuna'], { PROBNES_URL: server!.base });
    if (r.code !== 0) console.error(r.out);
    expect(r.code).toBe(0);
    expect(Number(/Ran (\d+) tests?/.exec(r.out)?.[1])).toBe(29);
    expect(r.out).toMatch(/\nOK\s*$/);
  }, 600_000);

  it('runs the MLP example on a small budget and writes one result per sampler and seed', async () => {
    const out = path.join(tmp, 'mlp.jsonl');
    const r = await run(['examples/optuna_mlp.py', '--url', server!.base, '--trials', '4', '--seeds', '1', '--max-iter', '5', '--out', out], { PYTHONPATH: CLIENT_DIR }, ROOT);
    if (r.code !== 0) console.error(r.out);
    expect(r.code).toBe(0);
    const rows = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { sampler: string; best_accuracy: number; accuracies: number[] });
    expect(rows.map((x) => x.sampler).sort()).toEqual(['cmaes', 'probnes', 'tpe']);
    for (const row of rows) {
      expect(row.accuracies).toHaveLength(4);
      expect(row.best_accuracy).toBe(Math.max(...row.accuracies));
      expect(row.best_accuracy).toBeGreaterThan(0.1);
    }
  }, 600_000);
});
