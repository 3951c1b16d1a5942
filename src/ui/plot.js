// Small SVG line/point plots for the dashboard: no library, no build step. Every point drawn as a
// marker is a <circle class="pt">, and the <svg> records how many in data-points and its y scale in
// data-scale, so tests (and people) can check what was drawn.
const NS = 'http://www.w3.org/2000/svg';
const M = { left: 64, right: 16, top: 14, bottom: 36 };

export function el(name, attrs = {}, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

/** About `count` round tick values covering [lo, hi]. */
function linearTicks(lo, hi, count = 5) {
  if (lo === hi) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

export function fmt(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

/**
 * Draw series on an SVG. series: [{points: [[x, y]], line: bool, dots: bool, cls}].
 * log: a log10 y axis (only positive y values can be drawn; callers floor them first).
 */
export function plot(svg, series, { log = false, xLabel = '', yLabel = '', empty = 'no data yet', size = [640, 300] } = {}) {
  const [W, H] = size;
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  // Bands (mean ± std) count towards the y range so they are never clipped.
  const all = series.flatMap((s) => [...s.points, ...(s.band ?? []).flatMap(([x, lo, hi]) => [[x, lo], [x, hi]])]);
  const dots = series.filter((s) => s.dots).reduce((n, s) => n + s.points.length, 0);
  svg.dataset.points = String(dots);
  svg.dataset.scale = log ? 'log' : 'linear';
  if (all.length === 0) {
    el('text', { x: W / 2, y: H / 2, class: 'empty', 'text-anchor': 'middle' }, svg).textContent = empty;
    return;
  }
  const ty = (y) => (log ? Math.log10(y) : y);
  let [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...all.map((p) => ty(p[1]))), Math.max(...all.map((p) => ty(p[1])))];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - (Math.abs(y0) || 1) * 0.1, y1 + (Math.abs(y1) || 1) * 0.1];
  if (log) [y0, y1] = [Math.floor(y0), Math.ceil(y1)];
  const pad = log ? 0 : (y1 - y0) * 0.05;
  const sx = (x) => M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right);
  const sy = (y) => H - M.bottom - ((ty(y) - (y0 - pad)) / (y1 - y0 + 2 * pad)) * (H - M.top - M.bottom);

  const axes = el('g', { class: 'axes' }, svg);
  el('line', { x1: M.left, y1: H - M.bottom, x2: W - M.right, y2: H - M.bottom }, axes);
  el('line', { x1: M.left, y1: M.top, x2: M.left, y2: H - M.bottom }, axes);
  const yTicks = log ? Array.from({ length: y1 - y0 + 1 }, (_, i) => 10 ** (y0 + i)) : linearTicks(y0 - pad, y1 + pad);
  for (const v of yTicks) {
    const y = sy(v);
    el('line', { x1: M.left, y1: y, x2: W - M.right, y2: y, class: 'grid' }, axes);
    el('text', { x: M.left - 6, y: y + 4, 'text-anchor': 'end' }, axes).textContent = log ? `1e${Math.round(Math.log10(v))}` : fmt(v);
  }
  for (const v of linearTicks(x0, x1).filter((v) => Number.isInteger(v) || x1 - x0 < 5)) {
    el('text', { x: sx(v), y: H - M.bottom + 16, 'text-anchor': 'middle' }, axes).textContent = fmt(v);
  }
  el('text', { x: (M.left + W - M.right) / 2, y: H - 4, 'text-anchor': 'middle', class: 'label' }, axes).textContent = xLabel;
  el('text', { x: 14, y: (M.top + H - M.bottom) / 2, 'text-anchor': 'middle', class: 'label', transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})` }, axes).textContent = yLabel;

  for (const s of series) {
    const g = el('g', { class: s.cls ?? '' }, svg);
    if (s.band && s.band.length > 1) {
      const up = s.band.map(([x, , hi]) => `${sx(x)},${sy(hi)}`);
      const down = s.band.map(([x, lo]) => `${sx(x)},${sy(lo)}`).reverse();
      el('polygon', { points: [...up, ...down].join(' '), class: 'band' }, g);
    }
    if (s.line && s.points.length > 1) {
      // A step line for running bests (constant until the next improvement), straight otherwise.
      const d = s.points.map(([x, y], i) => (i === 0 ? `M${sx(x)},${sy(y)}` : s.step ? `H${sx(x)}V${sy(y)}` : `L${sx(x)},${sy(y)}`));
      el('path', { d: d.join(''), class: 'line', 'data-vertices': s.points.length }, g);
    }
    if (s.dots) for (const [x, y] of s.points) el('circle', { cx: sx(x), cy: sy(y), r: 2.5, class: 'pt' }, g);
  }
}
