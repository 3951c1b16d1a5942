#!/usr/bin/env node
// The `probnes` command: registers tsx (the TypeScript loader the project runs on) in this process
// and hands over to src/cli/main.ts. In-process rather than a child node, so signals (SIGTERM for a
// graceful `serve` shutdown) and exit codes need no forwarding.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
