/** Running the Python client (clients/python) from a test without blocking the event loop (the server may be in this process). */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const CLIENT_DIR = path.resolve(import.meta.dirname, '../../clients/python');

/** Runs `cmd args` in clients/python, with `env` over the process environment, to completion; its exit code and stdout + stderr. */
export function runInClientDir(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: CLIENT_DIR, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}
