#!/usr/bin/env node
// The `probnes` command. In a checkout it registers tsx (the TypeScript loader the project runs on)
// in this process and runs src/cli/main.ts; in a compiled build without the TypeScript sources (the
// Docker image) it runs dist/src/cli/main.js. In-process rather than a child node, so signals
// (SIGTERM for a graceful `serve` shutdown) and exit codes need no forwarding.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import(new URL('../dist/src/cli/main.js', import.meta.url).href));
}
process.exitCode = await main(process.argv.slice(2));
