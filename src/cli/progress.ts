/**
 * The demo's progress bars on stderr. At a terminal a bar redraws one line in place; otherwise (CI
 * logs, pipes, files) it writes a plain line every tenth of the budget, so a log holds about ten
 * lines and no carriage returns. DemoProgress shows the best value so far and its regret,
 * FrontProgress (several objectives) the front's size and hypervolume.
 */
import type { CliIo } from './common.js';

const WIDTH = 30;

/** Evaluations done out of `total`, drawn with what the subclass says of the search so far. */
abstract class Progress {
  protected done = 0;
  private lastDecile = 0;
  private readonly t0 = Date.now();

  constructor(
    protected readonly total: number,
    private readonly io: Pick<CliIo, 'err' | 'errIsTTY'>,
  ) {}

  /** What the bar says after the count (the best so far, the front…). */
  protected abstract status(): string;

  /** `evaluations` more are done: redraw, or write a line when a tenth of the budget is passed. */
  protected advance(evaluations: number): void {
    this.done += evaluations;
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
    const filled = Math.round(Math.min(1, this.done / this.total) * WIDTH);
    const seconds = ((Date.now() - this.t0) / 1000).toFixed(1);
    return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${this.done}/${this.total}  ${this.status()}  ${seconds}s`;
  }
}

export class DemoProgress extends Progress {
  private best = Infinity;

  constructor(
    total: number,
    private readonly optimum: number,
    io: Pick<CliIo, 'err' | 'errIsTTY'>,
  ) {
    super(total, io);
  }

  observe(value: number): void {
    if (value < this.best) this.best = value;
    this.advance(1);
  }

  protected status(): string {
    return `best ${this.best.toPrecision(6)}  regret ${Math.max(0, this.best - this.optimum).toExponential(2)}`;
  }
}

/** Several objectives: the front's size and hypervolume as the server reports them, and the share of the true front's hypervolume. */
export class FrontProgress extends Progress {
  private frontSize = 0;
  private hypervolume = 0;

  constructor(
    total: number,
    private readonly trueHypervolume: number,
    io: Pick<CliIo, 'err' | 'errIsTTY'>,
  ) {
    super(total, io);
  }

  observe(evaluations: number, frontSize: number, hypervolume: number): void {
    this.frontSize = frontSize;
    this.hypervolume = hypervolume;
    this.advance(evaluations);
  }

  protected status(): string {
    const share = this.trueHypervolume > 0 ? ` (${((100 * this.hypervolume) / this.trueHypervolume).toFixed(1)} % of the true front's)` : '';
    return `front ${this.frontSize}  hypervolume ${this.hypervolume.toPrecision(6)}${share}`;
  }
}
