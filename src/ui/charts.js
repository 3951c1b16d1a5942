// Line and point charts on uPlot (served from its npm package as /ui/vendor/uPlot.iife.min.js, which
// defines the global uPlot): axes with ticks thinned to the space available, log axes with one
// label per k decades (k chosen so labels never overlap), a symmetric-log axis when values are not
// all positive, hover tooltips, drag to zoom (double-click resets). Each chart's root element records
// what was drawn in data-* attributes (points, y scale), so tests and people can check it.
import { fmt, h } from './api.js';

const U = () => globalThis.uPlot;
export const COLORS = ['#2563eb', '#dc2626', '#15803d', '#b45309', '#7c3aed', '#0891b2', '#be185d', '#4d7c0f', '#9a3412', '#334155'];
/** Minimum pixels between two labels of a y axis (one text line plus a gap). */
const Y_LABEL_GAP = 26;

/**
 * Log-axis ticks: every k-th decade between the scale's limits, with k the smallest step that
 * leaves at least Y_LABEL_GAP px between labels (1e1 … 1e-32 in 230 px gives every 4th decade).
 */
export function logSplits(min, max, px, gap = Y_LABEL_GAP) {
  const lo = Math.floor(Math.log10(min) + 1e-9), hi = Math.ceil(Math.log10(max) - 1e-9);
  const decades = Math.max(hi - lo, 1);
  const fit = Math.max(Math.floor(px / gap), 1);
  const step = Math.max(1, Math.ceil(decades / fit));
  const out = [];
  for (let k = Math.ceil(lo / step) * step; k <= hi; k += step) out.push(10 ** k);
  return out;
}

const sup = (k) => String(k).replace(/[-0-9]/g, (c) => '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'['-0123456789'.indexOf(c)]);
export const decadeLabel = (v) => {
  if (!(v > 0)) return '';
  const k = Math.round(Math.log10(v));
  return k === 0 ? '1' : k === 1 ? '10' : `10${sup(k)}`;
};

/**
 * Scale options for a y (or x) axis: 'linear', 'log' (positive values; zeros are floored by the
 * caller) or 'asinh' (symmetric log: log-like far from 0, linear near it, for values of both signs).
 */
export function scaleOpts(kind, values = []) {
  if (kind === 'log') {
    return { distr: 3, log: 10, range: (_u, min, max) => (min > 0 && max > 0 ? [10 ** Math.floor(Math.log10(min) + 1e-9), 10 ** Math.ceil(Math.log10(max) - 1e-9 || 1e-9)] : [1, 10]) };
  }
  if (kind === 'asinh') {
    const mags = values.filter((v) => Number.isFinite(v) && v !== 0).map(Math.abs).sort((a, b) => a - b);
    // Linear within ±(a small magnitude of the data): its 5th percentile.
    const lin = mags.length ? mags[Math.floor(mags.length * 0.05)] : 1;
    return { distr: 4, asinh: lin };
  }
  return {};
}

/** Axis options for a y axis of the given kind. */
export function yAxis(kind, label) {
  const base = { label, size: 62, labelSize: 18, gap: 4, font: '11px system-ui, sans-serif', labelFont: '12px system-ui, sans-serif', space: Y_LABEL_GAP };
  if (kind === 'log') {
    // Our own filter keeps every split: uPlot's default for log axes blanks labels it finds crowded.
    return { ...base, splits: (u, _i, min, max) => logSplits(min, max, u.bbox.height / U().pxRatio), filter: (_u, splits) => splits, values: (_u, vals) => vals.map(decadeLabel) };
  }
  return { ...base, values: (_u, vals) => vals.map(fmt) };
}

/** Tick steps of a count axis (evaluations, generations): whole numbers only. */
const INTEGER_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];

export function xAxis(label, kind = 'linear', format = fmt) {
  const base = { label, labelSize: 18, font: '11px system-ui, sans-serif', labelFont: '12px system-ui, sans-serif', space: 60 };
  if (kind === 'log') return { ...base, splits: (u, _i, min, max) => logSplits(min, max, u.bbox.width / U().pxRatio, 60), filter: (_u, splits) => splits, values: (_u, vals) => vals.map(decadeLabel) };
  if (kind === 'count') return { ...base, incrs: INTEGER_INCRS, values: (_u, vals) => vals.map(format) };
  return { ...base, values: (_u, vals) => vals.map(format) };
}

/** Hover tooltip: `describe(idx)` returns lines for the data index under the cursor (or null). */
export function tooltipPlugin(describe) {
  let tip;
  return {
    hooks: {
      init: (u) => {
        tip = h('div', { class: 'u-tip', hidden: true });
        u.over.appendChild(tip);
        u.over.addEventListener('mouseleave', () => (tip.hidden = true));
      },
      setCursor: (u) => {
        const { idx, left, top } = u.cursor;
        const lines = idx === null || idx === undefined || left < 0 ? null : describe(idx, u);
        if (!lines) {
          tip.hidden = true;
          return;
        }
        tip.replaceChildren(...lines.map((l, i) => h('div', { class: i === 0 ? 'u-tip-head' : '' }, l)));
        tip.hidden = false;
        const w = u.over.clientWidth;
        tip.style.left = `${left + 12 + tip.offsetWidth > w ? Math.max(left - 12 - tip.offsetWidth, 0) : left + 12}px`;
        tip.style.top = `${Math.max(top - 8, 0)}px`;
      },
    },
  };
}

/**
 * A uPlot chart in `root` (replaced on every call: toggles and refreshes rebuild it, cheap at
 * 5,000 points). opts: {data, series, scales, axes, tooltip, height, points}.
 */
export function chart(root, opts) {
  root.replaceChildren();
  root.__chart?.destroy();
  const width = Math.max(root.clientWidth || root.parentElement?.clientWidth || 600, 240);
  const u = new (U())(
    {
      width,
      height: opts.height ?? 280,
      legend: { show: opts.legend ?? false },
      cursor: { drag: { x: true, y: opts.zoomY ?? false, setScale: true }, points: { size: 7 }, focus: { prox: 16 } },
      scales: { ...opts.scales, x: { time: false, ...opts.scales?.x } },
      axes: opts.axes,
      series: [{ label: opts.xLabel ?? 'x' }, ...opts.series],
      plugins: opts.tooltip ? [tooltipPlugin(opts.tooltip)] : [],
      hooks: opts.hooks ?? {},
    },
    opts.data,
    root,
  );
  root.__chart = u;
  root.dataset.points = String(opts.points ?? 0);
  return u;
}

/** A points-only series (scatter) of the given colour. */
export const pointsSeries = (label, stroke, size = 5) => ({ label, stroke, fill: stroke, width: 0, paths: () => null, points: { show: true, size, width: 0, fill: stroke, stroke } });

/** A stepped line (running best: constant until the next improvement). */
export const stepSeries = (label, stroke) => ({ label, stroke, width: 2, paths: U().paths.stepped({ align: 1 }), points: { show: false } });

/** A plain line. */
export const lineSeries = (label, stroke, width = 2) => ({ label, stroke, width, points: { show: false }, spanGaps: false });

/** Radio buttons linear / log (or symmetric log) that call onChange(kind). */
export function scaleToggle(name, kinds, current, onChange) {
  const box = h('span', { class: 'toggle', role: 'radiogroup', 'aria-label': `${name} axis scale` });
  for (const k of kinds) {
    const id = `${name}-${k}`;
    const input = h('input', { type: 'radio', name, id, value: k, checked: k === current });
    input.addEventListener('change', () => input.checked && onChange(k));
    box.append(input, h('label', { for: id }, k === 'asinh' ? 'sym-log' : k));
  }
  return box;
}

/** Colour of a value in [0, 1]: a perceptually ordered ramp (viridis control points, linear in RGB). */
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
export function ramp(t) {
  const x = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), 1) * (RAMP.length - 1);
  const i = Math.min(Math.floor(x), RAMP.length - 2);
  const f = x - i;
  const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** Rank-based colour position of each loss (the API's value oriented so that lower is better; robust to outliers): 0 = best, 1 = worst. */
export function rankPositions(losses) {
  const order = losses.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
  const pos = new Array(losses.length);
  order.forEach(([, i], r) => (pos[i] = losses.length > 1 ? r / (losses.length - 1) : 0));
  return pos;
}
