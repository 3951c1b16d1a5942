/**
 * The logger's buffer is bounded (src/logger.ts): when nothing reads the log any more, lines past
 * LOG_BUFFER_MAX_BYTES are dropped instead of held. The log here is a FIFO nobody reads (Linux
 * and macOS; mkfifo), opened non-blocking so that writes to it stall as a stuck pipe's do.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, LOG_BUFFER_MAX_BYTES } from '../../src/logger.js';

describe('createLogger', () => {
  it('holds at most LOG_BUFFER_MAX_BYTES of lines while the log is not read, dropping the rest', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-log-'));
    const fifo = path.join(dir, 'log');
    execFileSync('mkfifo', [fifo]);
    // The read end must be open for the write end to open; it is never read.
    const r = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const w = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    try {
      const logger = createLogger({ logLevel: 'info', logPretty: 'false' }, w);
      const dest = (logger as unknown as Record<symbol, NodeJS.EventEmitter & { write(s: string): boolean; destroy(): void }>)[pino.symbols.streamSym]!;
      // Counted as pino hands them over (it calls the destination's write for every line).
      let written = 0;
      const write = dest.write.bind(dest);
      dest.write = (s: string) => ((written += Buffer.byteLength(s)), write(s));
      let dropped = 0;
      dest.on('drop', (data: string) => (dropped += Buffer.byteLength(data)));
      // Twice the bound in lines of about 1 kB, logged while the first write is still stalled.
      const line = 'x'.repeat(1000);
      for (let n = 0; written < 2 * LOG_BUFFER_MAX_BYTES; n++) logger.info({ n, line }, 'a request');
      // What was not dropped is held, or in the pipe's own buffer (64 kB) or the write under way (16 kB).
      expect(dropped).toBeGreaterThan(0);
      expect(written - dropped).toBeLessThanOrEqual(LOG_BUFFER_MAX_BYTES + 64 * 1024 + 16 * 1024);
      // The stalled write is retried on a timer; once the pipe is closed under it, it fails.
      dest.on('error', () => undefined);
      dest.destroy();
    } finally {
      fs.closeSync(w);
      fs.closeSync(r);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
