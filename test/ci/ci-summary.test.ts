/**
 * CI's last line and its never-skip rule: scripts/ci-summary.ts on the JSON report of a real vitest
 * run (so the field names are vitest's, not assumed), and test/helpers/requirements.ts under CI=true.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { summarize, summaryLine, type VitestReport } from '../../scripts/ci-summary.js';
import { required } from '../helpers/requirements.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('scripts/ci-summary.ts', () => {
  it('counts passed, failed (a file that fails at import counts once) and skipped tests of a real vitest report', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-ci-'));
    try {
      // globals: the files live outside the repository, where `import 'vitest'` would not resolve.
      fs.writeFileSync(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['*.check.mjs'], globals: true } };\n");
      fs.writeFileSync(path.join(dir, 'a.check.mjs'), "it('passes', () => {});\nit('passes too', () => {});\nit('fails', () => { throw new Error('no'); });\nit.skip('is skipped', () => {});\nit.todo('is to do');\n");
      fs.writeFileSync(path.join(dir, 'b.check.mjs'), "describe.skipIf(true)('skipped suite', () => { it('one', () => {}); it('two', () => {}); });\n");
      fs.writeFileSync(path.join(dir, 'c.check.mjs'), "throw new Error('a program is missing');\n");
      const out = path.join(dir, 'report.json');
      const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--reporter=json', `--outputFile=${out}`], {
        cwd: dir,
        env: { ...process.env, CI: 'false' },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(1);
      const counts = summarize(JSON.parse(fs.readFileSync(out, 'utf8')) as VitestReport);
      expect(counts).toEqual({ passed: 2, failed: 2, skipped: 4 });
      expect(summaryLine(counts)).toBe('tests: 2 passed, 2 failed, 4 skipped');
      // The script itself: the line on stdout, exit status 1 because something failed.
      const script = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/ci-summary.ts'), out], { cwd: ROOT, encoding: 'utf8' });
      expect(script.stdout).toBe('tests: 2 passed, 2 failed, 4 skipped\n');
      expect(script.status).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing report is a failure, not an empty success', () => {
    const script = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/ci-summary.ts'), '/nonexistent/vitest.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(script.stdout).toBe('tests: 0 passed, 1 failed, 0 skipped\n');
    expect(script.status).toBe(1);
  });
});

describe('required programs (test/helpers/requirements.ts)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('without CI=true a missing program skips its tests with a warning', () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(required('frobnicator', false, 'apt-get install -y frobnicator')).toBe(false);
    expect(warn).toHaveBeenCalledWith('frobnicator is missing: its tests are skipped (install: apt-get install -y frobnicator)');
    warn.mockRestore();
    expect(required('frobnicator', true, '…')).toBe(true);
  });

  it('with CI=true a missing program fails instead of skipping', () => {
    vi.stubEnv('CI', 'true');
    expect(() => required('frobnicator', false, 'apt-get install -y frobnicator')).toThrow('frobnicator is missing, and with CI=true its tests never skip (install: apt-get install -y frobnicator)');
    expect(required('frobnicator', true, '…')).toBe(true);
  });
});
