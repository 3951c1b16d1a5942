/**
 * A progress bar with ETA on stderr. On a terminal it redraws one line; otherwise (CI logs, files)
 * it prints a line every 5% so the log stays short.
 */
export class Progress {
  private done = 0;
  private failed = 0;
  private readonly t0 = Date.now();
  private lastPct = -1;
  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  tick(ok: boolean): void {
    this.done++;
    if (!ok) this.failed++;
    const pct = Math.floor((100 * this.done) / this.total);
    if (this.stream.isTTY) this.stream.write(`\r${this.line()}`);
    else if (pct >= this.lastPct + 5 || this.done === this.total) {
      this.lastPct = pct;
      this.stream.write(`${this.line()}\n`);
    }
    if (this.done === this.total && this.stream.isTTY) this.stream.write('\n');
  }

  line(): string {
    const width = 30;
    const frac = this.done / this.total;
    const filled = Math.round(frac * width);
    const elapsed = (Date.now() - this.t0) / 1000;
    const eta = this.done > 0 ? (elapsed / this.done) * (this.total - this.done) : NaN;
    const fail = this.failed ? ` ${this.failed} failed` : '';
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${(100 * frac).toFixed(1)}% elapsed ${fmtDuration(elapsed)} ETA ${fmtDuration(eta)}${fail}`;
  }
}

export function fmtDuration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.round(s % 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}
