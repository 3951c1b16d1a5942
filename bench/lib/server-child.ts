/**
 * The real server (src/server.ts) as a child process on a free loopback port with a database of its
 * own in a temporary directory, for the benchmarks that drive it over HTTP from another language.
 * Resolves once /readyz answers (or after 60 s, when the first request will say what is wrong).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.js';

export async function startBenchServer(prefix: string): Promise<{ base: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'db.sqlite'), LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    stop: () => {
      server.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
