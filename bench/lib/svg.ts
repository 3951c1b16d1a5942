/**
 * Hand-written SVG figure like the paper's: one panel per task, ln(mean regret) against the number
 * of evaluations, one line per method with its 95% band (mean ± 1.96·se on the regret scale, then
 * ln, floored at LN_FLOOR), and a shared legend.
 */
import type { MethodName } from '../../src/engine/index.js';
import type { Group } from './aggregate.js';
import { taskLabel } from './aggregate.js';
import { isDistributionMethod } from './paper-reference.js';
import { lnBand, type SeedStats } from './scoring.js';

/** Scoring per method: 'best' everywhere, or the paper's (mean for distribution methods). */
export type FigureScoring = 'best' | 'paper';

const COLORS: Record<MethodName, string> = {
  'prob-cmaes': '#d62728', 'prob-xnes': '#ff7f0e', 'prob-snes': '#bcbd22',
  cmaes: '#1f77b4', 'lq-cmaes': '#393b79', xnes: '#17becf', snes: '#9467bd',
  bo: '#2ca02c', pibo: '#8c564b', random: '#7f7f7f',
};
/** bench:bbob's external peers (bench/lib/bbob-peers.ts), which are not methods of the service. */
const PEER_COLORS: Record<string, string> = { bobyqa: '#e377c2', newuoa: '#8c6d31' };

const PANEL_W = 300, PANEL_H = 220, PAD_L = 46, PAD_R = 10, PAD_T = 24, PAD_B = 30, COLS = 3, LEGEND_H = 30;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const num = (v: number): string => v.toFixed(1);

function curveOf(g: Group, scoring: FigureScoring): SeedStats[] {
  return scoring === 'paper' && isDistributionMethod(g.method) ? g.mean : g.best;
}

/** Nice tick values covering [lo, hi]. */
function ticks(lo: number, hi: number, count = 5): number[] {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(Number(t.toFixed(10)));
  return out;
}

/** One line of a panel: a method's points (n evaluations → y, with the band [lo, hi]). */
export interface PanelSeries {
  method: MethodName;
  pts: { n: number; y: number; lo: number; hi: number }[];
}

function panel(groups: readonly Group[], title: string, scoring: FigureScoring, ox: number, oy: number): string {
  const series = groups.map((g) => ({
    method: g.method,
    pts: curveOf(g, scoring).map((s, i) => { const b = lnBand(s); return { n: i + 1, y: b.ln, lo: b.lo, hi: b.hi }; }).filter((p) => !Number.isNaN(p.y)),
  }));
  const all = series.flatMap((s) => s.pts.flatMap((p) => [p.lo, p.hi]));
  // ln regret: whole nats, always showing 0 and 1.
  return drawPanel(series, title, [Math.floor(Math.min(...all, 0)), Math.ceil(Math.max(...all, 1))], Math.max(...groups.map((g) => g.budget)), ox, oy);
}

/** A framed panel at (ox, oy): y range [yLo, yHi], x from 0 to xHi evaluations, a band and a line per series. */
function drawPanel(series: readonly PanelSeries[], title: string, [yLo, yHi]: [number, number], xHi: number, ox: number, oy: number): string {
  const w = PANEL_W - PAD_L - PAD_R, h = PANEL_H - PAD_T - PAD_B;
  const X = (n: number): number => ox + PAD_L + (w * n) / xHi;
  const Y = (v: number): number => oy + PAD_T + (h * (yHi - v)) / (yHi - yLo || 1);
  const parts: string[] = [`<text x="${num(ox + PAD_L + w / 2)}" y="${num(oy + 15)}" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  parts.push(`<rect x="${num(X(0))}" y="${num(Y(yHi))}" width="${num(w)}" height="${num(h)}" fill="none" stroke="#333"/>`);
  for (const t of ticks(yLo, yHi)) {
    parts.push(`<line x1="${num(X(0))}" x2="${num(X(xHi))}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/>`);
    parts.push(`<text x="${num(X(0) - 4)}" y="${num(Y(t) + 4)}" text-anchor="end">${t}</text>`);
  }
  for (const t of ticks(0, xHi, 3)) parts.push(`<text x="${num(X(t))}" y="${num(Y(yLo) + 14)}" text-anchor="middle">${t}</text>`);
  for (const { method, pts } of series) {
    if (pts.length === 0) continue;
    const c = COLORS[method] ?? '#000';
    const upper = pts.map((p) => `${num(X(p.n))},${num(Y(p.hi))}`);
    const lower = pts.map((p) => `${num(X(p.n))},${num(Y(p.lo))}`).reverse();
    parts.push(`<polygon points="${[...upper, ...lower].join(' ')}" fill="${c}" fill-opacity="0.15" stroke="none"/>`);
    parts.push(`<polyline points="${pts.map((p) => `${num(X(p.n))},${num(Y(p.y))}`).join(' ')}" fill="none" stroke="${c}" stroke-width="1.5"/>`);
  }
  return parts.join('\n');
}

/** The legend row and the page around panels laid out COLS to a row, with a caption at the bottom. */
function page(methods: readonly MethodName[], panels: readonly ((ox: number, oy: number) => string)[], caption: string): string {
  const rows = Math.ceil(panels.length / COLS);
  const W = PANEL_W * Math.min(COLS, panels.length), H = LEGEND_H + PANEL_H * rows + 20;
  const body: string[] = [];
  methods.forEach((m, i) => {
    const x = 10 + i * 100;
    body.push(`<line x1="${x}" x2="${x + 20}" y1="15" y2="15" stroke="${COLORS[m] ?? '#000'}" stroke-width="3"/><text x="${x + 24}" y="19">${esc(m)}</text>`);
  });
  panels.forEach((draw, i) => body.push(draw(PANEL_W * (i % COLS), LEGEND_H + PANEL_H * Math.floor(i / COLS))));
  body.push(`<text x="10" y="${H - 6}">${esc(caption)}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">\n<rect width="100%" height="100%" fill="white"/>\n${body.join('\n')}\n</svg>\n`;
}

/**
 * Panels of values on a linear scale (e.g. the best surrogate value found): one panel per title, each
 * series with its band, the y range fitted to the data of the panel.
 */
export function renderValueFigure(panels: readonly { title: string; budget: number; series: PanelSeries[] }[], caption: string): string {
  const methods = [...new Set(panels.flatMap((p) => p.series.map((s) => s.method)))];
  return page(
    methods,
    panels.map((p) => (ox: number, oy: number) => {
      const all = p.series.flatMap((s) => s.pts.flatMap((q) => [q.lo, q.hi])).filter(Number.isFinite);
      const lo = Math.min(...all), hi = Math.max(...all), pad = 0.05 * (hi - lo || Math.abs(hi) || 1);
      return drawPanel(p.series, p.title, [lo - pad, hi + pad], p.budget, ox, oy);
    }),
    caption,
  );
}

export function renderFigure(groups: readonly Group[], scoring: FigureScoring): string {
  const tasks = [...new Set(groups.map((g) => taskLabel(g.fn, g.dim)))].sort();
  const methods = [...new Set(groups.map((g) => g.method))];
  const caption = scoring === 'best' ? 'best queried point, all methods' : 'paper scoring: distribution mean for ES/ProbNES, best point for BO/πBO/random';
  return page(
    methods,
    tasks.map((t) => (ox: number, oy: number) => panel(groups.filter((g) => taskLabel(g.fn, g.dim) === t), t, scoring, ox, oy)),
    `ln(mean regret) vs evaluations; 95% bands from the seed spread; ${caption}`,
  );
}

/** One ECDF line: a method variant's points (evaluations/d, share of (run, target) pairs reached). */
export interface EcdfSeries {
  label: string;
  method: string;
  points: { x: number; y: number }[];
}

/**
 * A runtime ECDF as COCO draws it: share of (run, target) pairs reached (y, 0…1) against
 * evaluations/d on a log10 axis, a step line per method (a profile variant dashed, in its method's
 * colour), for one dimension.
 */
export function renderEcdf(series: readonly EcdfSeries[], title: string, maxPerDim: number, dim: number, marks: readonly number[] = []): string {
  const W = 560, H = 380, L = 56, R = 150, T = 30, B = 46;
  const xLo = Math.log10(1 / dim), xHi = Math.log10(maxPerDim);
  const X = (v: number): number => L + ((W - L - R) * (Math.log10(v) - xLo)) / (xHi - xLo || 1);
  const Y = (y: number): number => T + (H - T - B) * (1 - y);
  const parts: string[] = [`<text x="${num((L + W - R) / 2)}" y="18" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  parts.push(`<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#333"/>`);
  for (const t of ticks(0, 1)) {
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/><text x="${L - 4}" y="${num(Y(t) + 4)}" text-anchor="end">${t}</text>`);
  }
  for (let e = Math.ceil(xLo); e <= Math.floor(xHi); e++) {
    parts.push(`<line x1="${num(X(10 ** e))}" x2="${num(X(10 ** e))}" y1="${T}" y2="${H - B}" stroke="#eee"/><text x="${num(X(10 ** e))}" y="${H - B + 14}" text-anchor="middle">${10 ** e}</text>`);
  }
  // The report's budgets (evaluations / d), dotted, so the table's columns can be read off the curves.
  for (const k of marks) {
    if (k < 1 / dim || k > maxPerDim) continue;
    parts.push(`<line x1="${num(X(k))}" x2="${num(X(k))}" y1="${T}" y2="${H - B}" stroke="#999" stroke-dasharray="2 3"/><text x="${num(k === maxPerDim ? X(k) - 2 : X(k) + 2)}" y="${H - B - 4}" fill="#666"${k === maxPerDim ? ' text-anchor="end"' : ''}>${k}·d</text>`);
  }
  parts.push(`<text x="${num((L + W - R) / 2)}" y="${H - 12}" text-anchor="middle">evaluations / d (log scale)</text>`);
  parts.push(`<text transform="translate(14 ${num((T + H - B) / 2)}) rotate(-90)" text-anchor="middle">share of (run, target) pairs</text>`);
  series.forEach((s, i) => {
    const c = COLORS[s.method as MethodName] ?? PEER_COLORS[s.method] ?? '#000';
    const dash = s.label.includes(':') ? ' stroke-dasharray="6 3"' : '';
    const path = [`${num(X(1 / dim))},${num(Y(0))}`];
    let y = 0;
    for (const p of s.points) {
      path.push(`${num(X(p.x))},${num(Y(y))}`, `${num(X(p.x))},${num(Y(p.y))}`);
      y = p.y;
    }
    path.push(`${num(X(maxPerDim))},${num(Y(y))}`);
    parts.push(`<polyline points="${path.join(' ')}" fill="none" stroke="${c}" stroke-width="1.8"${dash}/>`);
    parts.push(`<line x1="${W - R + 10}" x2="${W - R + 30}" y1="${T + 10 + 16 * i}" y2="${T + 10 + 16 * i}" stroke="${c}" stroke-width="3"${dash}/><text x="${W - R + 34}" y="${T + 14 + 16 * i}">${esc(s.label)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}
