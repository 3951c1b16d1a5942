/**
 * External programs some test files need (Chromium, python3, MuJoCo with a C compiler). Where one is missing the file's tests
 * skip with a warning, so `npm test` runs on a bare machine; with CI=true they never skip: CI installs
 * every such program (.ci/run), so a missing one fails the run instead of hiding its tests.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { MUJOCO_PACKAGE, mujocoInstalled } from '../../bench/swimmer/build.js';

/** True when the program is here; otherwise a warning (false), or with CI=true an error that fails the file. */
export function required(what: string, present: boolean, install: string): boolean {
  if (present) return true;
  if (process.env.CI === 'true') throw new Error(`${what} is missing, and with CI=true its tests never skip (install: ${install})`);
  console.warn(`${what} is missing: its tests are skipped (install: ${install})`);
  return false;
}

/** The Debian package's binary, driven through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';
/** Headless, sandbox off (containers), and no background traffic of its own during a test. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-quic'];

export function chromiumPresent(): boolean {
  return required(`Chromium (${CHROMIUM})`, fs.existsSync(CHROMIUM), 'apt-get install -y chromium');
}

export function pythonPresent(): boolean {
  return required('python3', spawnSync('python3', ['--version']).status === 0, 'apt-get install -y python3 python3-venv');
}

/** Debian's MuJoCo headers and library, and cc to build bench/swimmer/rollout.c against them. */
export function mujocoPresent(): boolean {
  return required(`MuJoCo (Debian ${MUJOCO_PACKAGE}) and a C compiler`, mujocoInstalled(), `apt-get install -y ${MUJOCO_PACKAGE} gcc libc6-dev`);
}
