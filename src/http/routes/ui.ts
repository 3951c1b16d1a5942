/**
 * The study dashboard: the static files of src/ui, read once at startup and served with their
 * content types, plus the plotting library (uPlot, MIT) served from its npm package so the page
 * needs no CDN and works offline. No build step; the pages call the public /v1 API from the
 * browser, so the UI needs no routes of its own beyond these files. Scripts are files of this
 * origin only (no inline script), so the Content-Security-Policy of security.ts holds.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const PAGES = ['index.html', 'study.html', 'compare.html'];
/** The library's minified browser build (defines the global `uPlot`) and its stylesheet. */
const VENDOR: Record<string, string> = { 'uPlot.iife.min.js': 'dist/uPlot.iife.min.js', 'uPlot.min.css': 'dist/uPlot.min.css' };

/** src/ui next to the sources (tsx), or copied next to the compiled code (dist/src/ui). */
function uiDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../ui'), path.resolve(here, '../../../../src/ui')];
  const found = candidates.find((d) => fs.existsSync(path.join(d, 'index.html')));
  if (!found) throw new Error(`dashboard files not found in ${candidates.join(' or ')}`);
  return found;
}

function uplotDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
}

interface File {
  body: Buffer;
  type: string;
}

export async function uiRoutes(app: FastifyInstance): Promise<void> {
  const dir = uiDir();
  const files = new Map<string, File>();
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type) files.set(name, { body: fs.readFileSync(path.join(dir, name)), type });
  }
  const lib = uplotDir();
  const vendor = new Map<string, File>();
  for (const [name, rel] of Object.entries(VENDOR)) vendor.set(name, { body: fs.readFileSync(path.join(lib, rel)), type: TYPES[path.extname(name)]! });

  // Our files revalidate every time (a stale app.js after an upgrade is worse); the library's are
  // versioned by the package and may be cached for a day.
  const send = (reply: FastifyReply, f: File, cache: string) => reply.type(f.type).header('cache-control', cache).send(f.body);
  const page = (name: string) => (_req: unknown, reply: FastifyReply) => send(reply, files.get(name)!, 'no-cache');

  const hide = { schema: { hide: true } };
  app.get('/ui', hide, page('index.html'));
  app.get('/ui/', hide, page('index.html'));
  app.get('/ui/studies/:study_id', hide, page('study.html'));
  app.get('/ui/compare', hide, page('compare.html'));
  for (const [name, f] of files) if (!PAGES.includes(name)) app.get(`/ui/${name}`, hide, (_req, reply) => send(reply, f, 'no-cache'));
  for (const [name, f] of vendor) app.get(`/ui/vendor/${name}`, hide, (_req, reply) => send(reply, f, 'public, max-age=86400'));
}
