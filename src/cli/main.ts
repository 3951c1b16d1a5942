/**
 * `probnes <command>`: the command-line entry (bin/probnes.js loads it). Each command parses its own
 * options strictly and answers --help; bad usage exits 2 with a message naming what is wrong.
 * Returns the exit code; `serve` (and `demo --keep-running`) keep the process alive until a signal.
 * Each command's module is imported only when that command runs, so `probnes keys list` never
 * loads the server, the engine or the benchmark code (bin/probnes.js measures the rest).
 */
import { processIo, type CliIo } from './common.js';

export const SERVE_USAGE = `usage: probnes serve

Starts the HTTP server, configured by environment variables (PORT, HOST, DATABASE_PATH, API_KEYS, …;
the table is in docs/configuration.md). It takes no options. SIGTERM or SIGINT shuts it down gracefully.

examples:
  probnes serve
  PORT=9000 DATABASE_PATH=/var/lib/probnes/probnes.db probnes serve
`;

export const USAGE = `usage: probnes <command> [options]

commands:
  serve                                        start the HTTP server (configured by environment variables)
  demo [--method M] [--function F] [--budget N] [--keep-running]
                                               start a server, optimise a test function through its API
                                               with a progress bar, print the best point and the dashboard URL
  bench [--methods a,b] [--functions f] [--seeds N] …
                                               run the paper benchmark, or a subset (tables, figures)
  keys create --tenant NAME [--label TEXT]     create an API key; it is printed once, only its hash is stored
  keys list [--json]                           list keys (ids, tenants, labels, dates; never the keys)
  keys revoke ID                               revoke a key; requests with it get 401 from then on
  backup DEST                                  copy the database (DATABASE_PATH) to DEST safely while it is in use

Every command answers --help (e.g. probnes demo --help).

examples:
  probnes demo --budget 30
  KEY=$(probnes keys create --tenant acme)
  probnes backup /backups/probnes-$(date +%F).db
`;

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      if (rest.length > 0) {
        const help = rest[0] === '--help' || rest[0] === '-h';
        (help ? io.out : io.err)(help ? SERVE_USAGE : `probnes serve: takes no arguments (got ${JSON.stringify(rest[0])}); it is configured by environment variables\n\n${SERVE_USAGE}`);
        return help ? 0 : 2;
      }
      // The server module owns the process from here (listen, signals, exit).
      await import('../server.js');
      return 0;
    case 'demo':
      return (await import('./demo.js')).runDemo(rest, io);
    case 'bench':
      return (await import('./bench.js')).runBench(rest, io);
    case 'keys':
      return (await import('./keys.js')).runKeys(rest, io);
    case 'backup':
      return (await import('./backup.js')).runBackup(rest, io);
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      // `probnes help demo` works like `probnes demo --help`.
      if (command === 'help' && rest[0] !== undefined) return main([rest[0], '--help'], io);
      (command === undefined ? io.err : io.out)(USAGE);
      return command === undefined ? 2 : 0;
    }
    default:
      io.err(`probnes: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      return 2;
  }
}


