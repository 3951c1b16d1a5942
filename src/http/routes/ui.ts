/**
 * The study dashboard: a few static files from src/ui, read once at startup and served with their
 * content types. No build step and no static-file dependency; the pages call the public /v1 API
 * from the browser, so the UI needs no routes of its own beyond these files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const ASSETS = ['app.js', 'plot.js', 'style.css'] as const;

/** src/ui next to the sources (tsx), or copied next to the compiled code (dist/src/ui). */
function uiDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../ui'), path.resolve(here, '../../../../src/ui')];
  const found = candidates.find((d) => fs.existsSync(path.join(d, 'index.html')));
  if (!found) throw new Error(`dashboard files not found in ${candidates.join(' or ')}`);
  return found;
}

export async function uiRoutes(app: FastifyInstance): Promise<void> {
  const dir = uiDir();
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of ['index.html', 'study.html', ...ASSETS]) {
    files.set(name, { body: fs.readFileSync(path.join(dir, name)), type: TYPES[path.extname(name)]! });
  }
  const send = (reply: FastifyReply, name: string) => {
    const f = files.get(name)!;
    // Revalidate every time: the files are tiny and a stale app.js after an upgrade is worse.
    return reply.type(f.type).header('cache-control', 'no-cache').send(f.body);
  };

  const hide = { schema: { hide: true } };
  app.get('/ui', hide, (_req, reply) => send(reply, 'index.html'));
  app.get('/ui/', hide, (_req, reply) => send(reply, 'index.html'));
  app.get('/ui/studies/:study_id', hide, (_req, reply) => send(reply, 'study.html'));
  for (const name of ASSETS) app.get(`/ui/${name}`, hide, (_req, reply) => send(reply, name));
}
