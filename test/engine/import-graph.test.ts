/**
 * The shape of the source's imports (ARCHITECTURE.md rules 1 and 11: imports one way, small modules): the engine's
 * modules import one another without a cycle (type-only imports count: a cycle of types is still a
 * cycle a reader has to untangle), the domain's modules and folders import one another without a cycle, and the
 * domain keeps no loose module beside its index (every module lives in a folder). The graph is read from the relative import specifiers of src/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** file → the files it imports or re-exports (relative specifiers only; `import type` included). */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(root)) {
    const deps: string[] = [];
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)) {
      const target = resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'));
      deps.push(target.endsWith('.ts') ? target : `${target}.ts`);
    }
    graph.set(file, deps.filter((d) => d.startsWith(root)));
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan): each is an import cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(SRC, w));
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('import graph', () => {
  it('finds a cycle when there is one (the detector itself)', () => {
    const g = new Map([['/a.ts', ['/b.ts']], ['/b.ts', ['/c.ts']], ['/c.ts', ['/a.ts']], ['/d.ts', ['/a.ts']]]);
    expect(cycles(g)).toHaveLength(1);
    expect(cycles(g)[0]).toHaveLength(3);
  });

  it('src/engine has no import cycle (the strategies name methods through methods.ts, not the registry)', () => {
    const graph = importGraph(join(SRC, 'engine'));
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles(graph)).toEqual([]);
  });

  it('src/domain has no import cycle between its modules', () => {
    const graph = importGraph(join(SRC, 'domain'));
    expect(graph.size).toBeGreaterThan(30);
    expect(cycles(graph)).toEqual([]);
  });

  it('src/domain\'s folders import one another without a cycle (a folder is a layer)', () => {
    const domain = join(SRC, 'domain');
    const folderOf = (f: string) => relative(domain, f).split('/')[0]!;
    const folders = new Map<string, string[]>();
    for (const [file, deps] of importGraph(domain)) {
      if (relative(domain, file) === 'index.ts') continue;
      const from = `/${folderOf(file)}`;
      const to = deps.map((d) => `/${folderOf(d)}`).filter((d) => d !== from && d !== '/index.ts');
      folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])]);
    }
    expect(folders.size).toBeGreaterThan(5);
    expect(cycles(folders)).toEqual([]);
  });

  it('src/domain keeps no loose module beside index.ts', () => {
    const loose = readdirSync(join(SRC, 'domain')).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
    expect(loose).toEqual([]);
  });
});
