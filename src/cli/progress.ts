/**
 * The demo's progress bar on stderr: evaluations done, best value so far and its regret. At a
 * terminal it redraws one line in place; otherwise (CI logs, pipes, files) it writes a plain line
 * every tenth of the budget, so a log holds about ten lines and no carriage returns.
 */
import type { CliIo } from './common.js';

const WIDTH = 30;

export class DemoProgress {
  private done = 0;
  private best = Infinity;
  private lastDecile = 0;
  private readonly t0 = Date.now();

  constructor(
    private readonly total: number,
    private readonly optimum: number,
    private readonly io: Pick<CliIo, 'err' | 'errIsTTY'>,
  ) {}

  observe(value: number): void {
    this.done++;
    if (value < this.best) this.best = value;
    if (this.io.errIsTTY) {
      this.io.err(`\r${this.line()}\x1b[K`);
      return;
    }
    const decile = Math.floor((10 * this.done) / this.total);
    if (decile > this.lastDecile) {
      this.lastDecile = decile;
      this.io.err(`${this.line()}\n`);
    }
  }

  /** Ends the redrawn line (a plain log already ended each of its lines). */
  finish(): void {
    if (this.io.errIsTTY && this.done > 0) this.io.err('\n');
  }

  line(): string {
    const frac = Math.min(1, this.done / this.total);
    const filled = Math.round(frac * WIDTH);
    const seconds = ((Date.now() - this.t0) / 1000).toFixed(1);
    const regret = Math.max(0, this.best - this.optimum);
    return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${this.done}/${this.total}  best ${this.best.toPrecision(6)}  regret ${regret.toExponential(2)}  ${seconds}s`;
  }
}

/**
 * The progress bar of a study of several objectives: evaluations done, the front's size and its
 * hypervolume as the server reports them, and the share of the true front's hypervolume. Redrawn in
 * place at a terminal, a plain line per tenth of the budget otherwise (as DemoProgress).
 */
export class FrontProgress {
  private done = 0;
  private frontSize = 0;
  private hypervolume = 0;
  private lastDecile = 0;
  private readonly t0 = Date.now();

  constructor(
    private readonly total: number,
    private readonly trueHypervolume: number,
    private readonly io: Pick<CliIo, 'err' | 'errIsTTY'>,
  ) {}

  observe(evaluations: number, frontSize: number, hypervolume: number): void {
    this.done += evaluations;
    this.frontSize = frontSize;
    this.hypervolume = hypervolume;
    if (this.io.errIsTTY) {
      this.io.err(`\r${this.line()}\x1b[K`);
      return;
    }
    const decile = Math.floor((10 * this.done) / this.total);
    if (decile > this.lastDecile) {
      this.lastDecile = decile;
      this.io.err(`${this.line()}\n`);
    }
  }

  finish(): void {
    if (this.io.errIsTTY && this.done > 0) this.io.err('\n');
  }

  line(): string {
    const frac = Math.min(1, this.done / this.total);
    const filled = Math.round(frac * WIDTH);
    const seconds = ((Date.now() - this.t0) / 1000).toFixed(1);
    const share = this.trueHypervolume > 0 ? ` (${((100 * this.hypervolume) / this.trueHypervolume).toFixed(1)} % of the true front's)` : '';
    return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${this.done}/${this.total}  front ${this.frontSize}  hypervolume ${this.hypervolume.toPrecision(6)}${share}  ${seconds}s`;
  }
}
