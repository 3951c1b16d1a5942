/**
 * The server's logger: JSON lines on stdout, or pino-pretty's human-readable lines for a person at
 * a terminal.
 *
 * JSON lines go through pino's asynchronous destination (sonic-boom), which buffers what is
 * logged while its previous write to stdout is in flight. When whatever reads stdout stops reading
 * (a stuck pipe, a log collector that blocks), every request would add its lines to that buffer,
 * about 0.6 kB a request at the info level, until the process ran out of memory. The buffer is
 * bounded at LOG_BUFFER_MAX_BYTES: past it new lines are dropped, not the server. (pino-pretty's
 * transport writes through a fixed-size buffer shared with its thread, and waits when it is full.)
 */
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

/** Log lines held while stdout is not being read; more are dropped. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/** `fd`: where JSON lines go (stdout; tests pass another). */
export function createLogger(config: Pick<Config, 'logLevel' | 'logPretty'>, fd = 1): Logger {
  const options = { level: config.logLevel, base: { service: 'probnes-server' } };
  const pretty = config.logPretty === 'true' || (config.logPretty === 'auto' && fd === 1 && process.stdout.isTTY === true);
  // Human-readable only for a person at a terminal; machines get one JSON object per line.
  if (pretty) return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } });
  return pino(options, pino.destination({ dest: fd, minLength: 0, maxLength: LOG_BUFFER_MAX_BYTES }));
}
