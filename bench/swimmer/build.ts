/**
 * Compiles bench/swimmer/rollout.c against Debian's MuJoCo (package libmujoco-dev) on demand.
 *
 *   npm run build:swimmer        # compile now (or say what is missing), print the binary's path
 *
 * `rolloutBinary()` compiles when the binary is missing or older than rollout.c; it writes to a
 * temporary name and renames, so benchmark workers or test files that build at once never run a
 * half-written binary. Without MuJoCo or a C compiler it throws MissingMujocoError naming the Debian
 * package to install.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const HERE = new URL('./', import.meta.url);
export const ROLLOUT_SOURCE = fileURLToPath(new URL('rollout.c', HERE));
export const SWIMMER_MODEL = fileURLToPath(new URL('swimmer.xml', HERE));
const BUILD_DIR = fileURLToPath(new URL('build/', HERE));
export const ROLLOUT_BINARY = `${BUILD_DIR}rollout`;

/** Where Debian's libmujoco-dev puts the header rollout.c includes. */
export const MUJOCO_HEADER = '/usr/include/mujoco/mujoco.h';
export const MUJOCO_PACKAGE = 'libmujoco-dev';

export class MissingMujocoError extends Error {}

/** True when the MuJoCo headers and a C compiler are installed (the library comes with the headers). */
export function mujocoInstalled(): boolean {
  return existsSync(MUJOCO_HEADER) && spawnSync('cc', ['--version']).status === 0;
}

export function rolloutBinary(): string {
  if (existsSync(ROLLOUT_BINARY) && statSync(ROLLOUT_BINARY).mtimeMs >= statSync(ROLLOUT_SOURCE).mtimeMs) return ROLLOUT_BINARY;
  if (!existsSync(MUJOCO_HEADER)) {
    throw new MissingMujocoError(`MuJoCo is not installed (${MUJOCO_HEADER} is missing): install the Debian package ${MUJOCO_PACKAGE} (apt-get install -y ${MUJOCO_PACKAGE})`);
  }
  if (spawnSync('cc', ['--version']).status !== 0) {
    throw new MissingMujocoError('no C compiler (cc) to build the swimmer rollout: install the Debian package gcc (apt-get install -y gcc libc6-dev)');
  }
  mkdirSync(BUILD_DIR, { recursive: true });
  const tmp = `${ROLLOUT_BINARY}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const cc = spawnSync('cc', ['-O2', '-Wall', '-Wextra', '-o', tmp, ROLLOUT_SOURCE, '-lmujoco', '-lm'], { encoding: 'utf8' });
  if (cc.status !== 0) {
    rmSync(tmp, { force: true });
    const why = (cc.stderr || cc.error?.message || '').trim();
    const hint = /mujoco/i.test(why) ? ` (is the Debian package ${MUJOCO_PACKAGE} installed? apt-get install -y ${MUJOCO_PACKAGE})` : '';
    throw new MissingMujocoError(`cc failed to build ${ROLLOUT_SOURCE}${hint}:\n${why}`);
  }
  renameSync(tmp, ROLLOUT_BINARY);
  return ROLLOUT_BINARY;
}

/** The compiled model's constants as rollout.c reports them (`--info`). */
export function rolloutInfo(): Record<string, number> {
  const out = execFileSync(rolloutBinary(), [SWIMMER_MODEL, '--info'], { encoding: 'utf8' });
  return Object.fromEntries(out.trim().split('\n').map((line) => {
    const [k, v] = line.split(' ');
    return [k, Number(v)];
  }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(`${rolloutBinary()}\n`);
    process.stdout.write(`${JSON.stringify(rolloutInfo())}\n`);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
