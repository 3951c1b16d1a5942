#!/usr/bin/env node
// The `probnes` command. In a compiled build without the TypeScript sources (the Docker image) it
// runs dist/src/cli/main.js. In a checkout, commands that should answer at once (every --help,
// `keys`, `backup`) run from a bundle compiled with esbuild and rebuilt when a source changes
// (bin/cli-build.js): no TypeScript loader to start, no thousand small modules to load. The
// long-running commands (serve, demo, bench) register tsx (the TypeScript loader the project
// runs on) in this process and run src/cli/main.ts, as do all commands if the bundle cannot be
// built. In-process rather than a child node, so signals (SIGTERM for a graceful `serve`
// shutdown) and exit codes need no forwarding.
import { existsSync } from 'node:fs';

const argv = process.argv.slice(2);
const source = new URL('../src/cli/main.ts', import.meta.url);
const QUICK = new Set([undefined, 'help', '--help', '-h', 'keys', 'backup']);
const quick = QUICK.has(argv[0]) || argv.includes('--help') || argv.includes('-h');

let main;
if (!existsSync(source)) {
  ({ main } = await import(new URL('../dist/src/cli/main.js', import.meta.url).href));
} else {
  const compiled = quick ? await (await import('./cli-build.js')).compiledCli() : null;
  if (compiled) {
    ({ main } = await import(compiled));
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import(source.href));
  }
}
process.exitCode = await main(argv);
