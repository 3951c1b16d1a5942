/**
 * The compiled fast path of bin/probnes.js (bin/cli-build.js): every --help and `keys list` run
 * from the esbuild bundle say exactly what src/cli/main.ts says when run from source, and the
 * bundle's manifest records the sources it was built from (the freshness check compares their
 * modification times). Startup CPU is measured by `npm run bench:cli`, not here.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/probnes.js');
const MANIFEST = path.join(ROOT, 'node_modules/.probnes-cli/manifest.json');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-cli-startup-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const run = promisify(execFile);

async function fromSource(argv: string[], env: NodeJS.ProcessEnv) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { ...process.env, ...env }, cwd: tmp });
  return { code, out, err };
}

describe('bin/probnes.js compiled fast path', () => {
  const env = { DATABASE_PATH: path.join(tmp, 'keys.db') };

  it.each([[['--help']], [['serve', '--help']], [['demo', '--help']], [['bench', '--help']], [['keys', '--help']], [['keys', 'list', '--help']], [['backup', '--help']], [['help', 'keys']]])('%j prints what the sources print', async (argv) => {
    const bin = await run(process.execPath, [BIN, ...argv], { env: { ...process.env, ...env }, cwd: tmp });
    const src = await fromSource(argv, env);
    expect(src.code).toBe(0);
    expect(bin.stdout).toBe(src.out);
    expect(bin.stderr).toBe(src.err);
  }, 60_000);

  it('lists keys from the bundle, and records the sources it was built from', async () => {
    await run(process.execPath, [BIN, 'keys', 'create', '--tenant', 'acme'], { env: { ...process.env, ...env }, cwd: tmp });
    const list = await run(process.execPath, [BIN, 'keys', 'list', '--json'], { env: { ...process.env, ...env }, cwd: tmp });
    const keys = JSON.parse(list.stdout) as { tenant_id?: string; tenantId?: string }[];
    expect(keys).toHaveLength(1);
    const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as { entry: string; inputs: Record<string, number> };
    for (const f of ['src/cli/main.ts', 'src/cli/keys.ts', 'src/config.ts', 'package-lock.json']) expect(manifest.inputs[f], f).toBeGreaterThan(0);
    // Every source the bundle holds is recorded with its current modification time (else the next run rebuilds).
    expect(Object.keys(manifest.inputs).every((f) => f === 'package-lock.json' || f.startsWith('src/') || f.startsWith('bench/') || f.startsWith('clients/'))).toBe(true);
    expect(fs.existsSync(path.join(path.dirname(MANIFEST), manifest.entry))).toBe(true);
  }, 60_000);
});
