// The `probnes` command's compiled form in a checkout. Starting the TypeScript loader (tsx) costs
// about 0.3 s of CPU before the first line of the CLI runs, and loading every dependency as
// hundreds of separate modules (zod, pg, @stdlib) as much again, so `probnes --help` and
// `probnes keys list` took seconds. Here src/cli/main.ts is bundled once with esbuild (the
// compiler tsx itself uses) into node_modules/.probnes-cli/, one chunk per command (main.ts
// imports each command lazily), and rebuilt only when a source file it was built from, or
// package-lock.json, has changed since. The chunks sit two directories below the project root,
// as src/cli/*.ts do, so the code's own paths relative to import.meta.url (the migrations, the
// benchmark runner, package.json) resolve the same.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'node_modules', '.probnes-cli');
const MANIFEST = path.join(OUT, 'manifest.json');
/** Packages loaded from node_modules at run time, not bundled: native addons, and what their code finds by path. */
const EXTERNAL = ['better-sqlite3', 'pg-native', 'tsx', 'esbuild', 'piscina', 'pino', 'pino-pretty', 'thread-stream', '@fastify/swagger-ui'];

const mtime = (rel) => {
  try {
    return fs.statSync(path.join(ROOT, rel)).mtimeMs;
  } catch {
    return -1;
  }
};

/** The entry module's URL if the bundle is current, else null. */
function current() {
  let m;
  try {
    m = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
  for (const [rel, t] of Object.entries(m.inputs)) if (mtime(rel) !== t) return null;
  const entry = path.join(OUT, m.entry);
  return fs.existsSync(entry) ? pathToFileURL(entry).href : null;
}

async function build() {
  const esbuild = await import('esbuild');
  // Built into a directory of this process's own, then moved into place file by file (an atomic rename;
  // the names carry content hashes): several `probnes` started at once may all build, and none reads a
  // half-written chunk of another.
  const tmp = path.join(OUT, `.build-${process.pid}-${Date.now()}`);
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'src/cli/main.ts', 'bench-args': 'bench/lib/args.ts' },
    outdir: tmp,
    entryNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS dependencies call require(); give the ES module chunks one.
    banner: { js: "import { createRequire as __probnesRequire } from 'node:module'; const require = __probnesRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'silent',
    write: true,
  });
  const inputs = { 'package-lock.json': mtime('package-lock.json') };
  for (const rel of Object.keys(result.metafile.inputs)) if (!rel.startsWith('node_modules/')) inputs[rel] = mtime(rel);
  const outputs = Object.keys(result.metafile.outputs).map((o) => path.relative(tmp, path.resolve(ROOT, o)));
  for (const o of outputs) fs.renameSync(path.join(tmp, o), path.join(OUT, o));
  fs.rmSync(tmp, { recursive: true, force: true });
  const entry = outputs.find((o) => /^main-[^/]+\.js$/.test(o));
  const benchArgs = outputs.find((o) => /^bench-args-[^/]+\.js$/.test(o));
  // Written last and atomically: a concurrent `probnes` reads either the old manifest or this one.
  const next = `${MANIFEST}.${process.pid}`;
  fs.writeFileSync(next, JSON.stringify({ entry, benchArgs, inputs, outputs }));
  fs.renameSync(next, MANIFEST);
  prune(new Set([...outputs, 'manifest.json']));
  return pathToFileURL(path.join(OUT, entry)).href;
}

/** Deletes chunks of earlier builds, once they are old enough that no running command still loads them. */
function prune(keep) {
  const cutoff = Date.now() - 10 * 60_000;
  for (const name of fs.readdirSync(OUT)) {
    const file = path.join(OUT, name);
    if (keep.has(name)) continue;
    try {
      if (fs.statSync(file).mtimeMs < cutoff) fs.rmSync(file, { recursive: true, force: true });
    } catch {
      // removed by another process meanwhile
    }
  }
}

/** URL of the compiled CLI entry (building it when stale), or null when it cannot be built (then use tsx). */
export async function compiledCli() {
  const ready = current();
  if (ready) return ready;
  try {
    return await build();
  } catch {
    return null;
  }
}
