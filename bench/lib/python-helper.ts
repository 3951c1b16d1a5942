/**
 * A long-lived Python helper process of a benchmark (bench/peers/*.py) spoken to over stdin/stdout,
 * one JSON request per line and one JSON answer per line, one request at a time. An answer with a
 * string `error` is thrown. BLAS threads are limited to 1: the benchmarks run their own lanes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export class PythonHelper {
  private readonly child: ChildProcessWithoutNullStreams;
  private waiting: ((msg: Record<string, unknown>) => void) | null = null;
  /** The helper's first line, written once it has started. */
  readonly ready: Promise<Record<string, unknown>>;

  constructor(private readonly script: string) {
    this.child = spawn('/usr/bin/python3', [script], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1' } });
    this.child.stderr.on('data', (b: Buffer) => process.stderr.write(b));
    this.ready = new Promise((resolve) => (this.waiting = resolve));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(JSON.parse(line) as Record<string, unknown>);
    });
  }

  async request(msg: object): Promise<Record<string, unknown>> {
    const answer = new Promise<Record<string, unknown>>((resolve) => (this.waiting = resolve));
    this.child.stdin.write(`${JSON.stringify(msg)}\n`);
    const a = await answer;
    if (typeof a.error === 'string') throw new Error(`${this.script}: ${a.error}`);
    return a;
  }

  close(): void {
    this.child.stdin.end();
  }
}
