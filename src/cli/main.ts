/**
 * `probnes <command>`: the command-line entry (bin/probnes.js loads it through tsx).
 *   serve                      run the HTTP server (configured by the environment, see src/config.ts)
 *   keys create|list|revoke    manage API keys in the database named by DATABASE_PATH
 * Returns the exit code; `serve` keeps the process alive and exits on its own.
 */
import { runKeys, type CliIo } from './keys.js';

export const USAGE = `usage: probnes <command>

commands:
  serve                                        start the HTTP server (configured by environment variables)
  keys create --tenant NAME [--label TEXT]     create an API key; it is printed once, only its hash is stored
  keys list [--json]                           list keys (ids, tenants, labels, dates; never the keys)
  keys revoke ID                               revoke a key; requests with it get 401 from then on
`;

const processIo: CliIo = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env };

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      // The server module owns the process from here (listen, signals, exit).
      await import('../server.js');
      return 0;
    case 'keys':
      return runKeys(rest, io);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.err(`probnes: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      return 2;
  }
}
