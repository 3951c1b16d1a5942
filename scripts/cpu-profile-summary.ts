/**
 * Self time of V8 CPU profiles (node --cpu-prof, e.g. `npm run bench:load -- --cpu-prof DIR`), summed
 * over the given .cpuprofile files: by area (the package under node_modules, the source folder under
 * src/, node's internals, garbage collection, idle) and by function, largest first. Idle time (the
 * event loop waiting) is shown but left out of the percentages, which are of the busy time.
 *
 * Usage: npx tsx scripts/cpu-profile-summary.ts DIR|FILE... [--top 40]
 */
import fs from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 40;
const files = args.flatMap((a) => (fs.statSync(a).isDirectory() ? fs.readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(a, f)) : [a]));
if (files.length === 0) throw new Error('usage: cpu-profile-summary.ts DIR|FILE... [--top N]');

/** Where a function lives, coarsely: what a reader of the profile wants to attribute time to. */
function area(url: string, name: string): string {
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') return name;
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const src = url.indexOf('/src/');
  if (src >= 0) return 'src/' + url.slice(src + 5).split('/').slice(0, -1).join('/');
  return url;
}

const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
for (const file of files) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  // Each sample is charged the time until the next one (timeDeltas[i + 1]), in microseconds.
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const n = nodes.get(p.samples[i]!)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + dt);
    const key = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*?(node_modules\/|\/src\/)/, '$1')}:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + dt);
    total += dt;
  }
}
const idle = byArea.get('(idle)') ?? 0;
const busy = total - idle;
const table = (m: Map<string, number>, n: number) =>
  [...m]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, t]) => `| ${k} | ${t.toFixed(0)} | ${((100 * t) / busy).toFixed(1)} |`)
    .join('\n');
console.log(`${files.length} profile(s): ${(total / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s busy (the main thread; worker threads have their own files)\n`);
console.log(`| area | self ms | % of busy |\n|---|---|---|\n${table(byArea, 25)}\n`);
console.log(`| function | self ms | % of busy |\n|---|---|---|\n${table(byFunction, top)}`);
