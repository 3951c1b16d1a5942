/**
 * The TypeScript client as a package: `npm pack` in clients/typescript builds it (tsc to dist/) and
 * gives a tarball; a throwaway project outside the repository installs it offline (it has no runtime
 * dependency), imports it from plain .mjs and creates a study on a running server, and its
 * declarations typecheck a consumer under strict TypeScript.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp } from '../helpers/app.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLIENT = path.join(ROOT, 'clients/typescript');
const quiet = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

let tmp = '';
let tarball = '';
let app: FastifyInstance;
let url = '';

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-ts-client-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: CLIENT, env: quiet });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(tmp, info!.filename);
  expect(info!.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/schema.d.ts', 'package.json']);
  const project = path.join(tmp, 'consumer');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project, env: quiet });
  app = (await makeTestApp()).app;
  url = await app.listen({ port: 0, host: '127.0.0.1' });
}, 300_000);

afterAll(async () => {
  await app?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('clients/typescript as an npm package', () => {
  it('installs from its tarball into a separate project and creates a study from an .mjs script', async () => {
    const project = path.join(tmp, 'consumer');
    const installed = JSON.parse(fs.readFileSync(path.join(project, 'node_modules/probnes-client/package.json'), 'utf8')) as { name: string; version: string };
    expect(installed).toMatchObject({ name: 'probnes-client', version: '0.1.0' });
    fs.writeFileSync(
      path.join(project, 'use.mjs'),
      [
        "import { ProbnesClient, ProbnesError } from 'probnes-client';",
        'const client = new ProbnesClient({ baseUrl: process.env.PROBNES_URL });',
        "const study = await client.createStudy({ name: 'from-the-package', parameters: [{ name: 'x', bounds: [-5, 5] }], batch_size: 2 });",
        "let missing = null; try { await client.getStudy('nope'); } catch (e) { missing = e instanceof ProbnesError ? e.code : String(e); }",
        'console.log(JSON.stringify({ id: study.id, name: study.name, missing }));',
      ].join('\n'),
    );
    const out = await run(process.execPath, ['use.mjs'], { cwd: project, env: { ...process.env, PROBNES_URL: url } });
    const printed = JSON.parse(out.stdout) as { id: string; name: string; missing: string };
    expect(printed).toMatchObject({ name: 'from-the-package', missing: 'study_not_found' });
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${printed.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'from-the-package', batch_size: 2 });
  });

  it('ships declarations that type a consumer (a wrong argument is a type error)', async () => {
    const project = path.join(tmp, 'consumer');
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types')];
    fs.writeFileSync(
      path.join(project, 'ok.ts'),
      "import { ProbnesClient } from 'probnes-client';\nconst c = new ProbnesClient({ baseUrl: 'http://127.0.0.1:8080' });\nexport const id: Promise<string> = c.createStudy({ name: 'n', parameters: [{ name: 'x', bounds: [0, 1] }] }).then((s) => s.id);\n",
    );
    fs.writeFileSync(path.join(project, 'bad.ts'), "import { ProbnesClient } from 'probnes-client';\nnew ProbnesClient({ baseUrl: 'x' }).createStudy({ name: 1 });\n");
    // One compiler run for both files (tsc takes seconds): errors in bad.ts only, so ok.ts is well typed.
    const errors = await run(process.execPath, [tsc, ...flags, 'ok.ts', 'bad.ts'], { cwd: project }).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    const files = errors.split('\n').filter((l) => / error TS/.test(l)).map((l) => l.split('(')[0]);
    expect(new Set(files), errors).toEqual(new Set(['bad.ts']));
  }, 180_000);
});
