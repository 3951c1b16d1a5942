// The model's posterior mean over two parameters (GET /v1/studies/{id}/model/grid) as filled
// contours: the grid's cells coloured by mean in 12 levels, drawn under uPlot's axes (log axes for
// log-scaled parameters), with the search distribution's 1σ and 2σ ellipses and the evaluated
// points (this generation's ringed, earlier ones grey, later ones hidden; a trial whose categorical
// choices differ from the grid's is drawn hollow: the contour is not the model at its choices).
// Hover shows the model's mean ± std at the cursor, or the nearest evaluated trial.
import { fmt, h } from './api.js';
import { chart, decadeLabel, logSplits, ramp } from './charts.js';

const LEVELS = 12;

export function contourChart(root, grid, { generation }) {
  const { x, y, mean, std, loss } = grid;
  const flat = loss.flat();
  let lo = Math.min(...flat), hi = Math.max(...flat);
  if (!(hi > lo)) hi = lo + 1;
  // Level 0 = best (the lowest loss: the API orients it): bright for the best region.
  const level = (l) => Math.min(Math.floor(((l - lo) / (hi - lo)) * LEVELS), LEVELS - 1);
  const colours = Array.from({ length: LEVELS }, (_, q) => ramp(1 - q / (LEVELS - 1)));
  const log = (a) => a.scale === 'log';
  // Cell edges halfway between grid values (in the axis' own scale).
  const edges = (a) => {
    const t = a.values.map((v) => (log(a) ? Math.log(v) : v));
    const e = t.map((v, i) => (i === 0 ? v - (t[1] - t[0]) / 2 : (t[i - 1] + v) / 2));
    e.push(t[t.length - 1] + (t[t.length - 1] - t[t.length - 2]) / 2);
    return e.map((v) => (log(a) ? Math.exp(v) : v));
  };
  const ex = edges(x), ey = edges(y);
  const shown = grid.points.filter((p) => p.generation <= generation);

  const drawField = (u) => {
    const c = u.ctx;
    c.save();
    c.beginPath();
    c.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    c.clip();
    for (let iy = 0; iy < y.values.length; iy++) {
      const y0 = u.valToPos(ey[iy], 'y', true), y1 = u.valToPos(ey[iy + 1], 'y', true);
      for (let ix = 0; ix < x.values.length; ix++) {
        const x0 = u.valToPos(ex[ix], 'x', true), x1 = u.valToPos(ex[ix + 1], 'x', true);
        c.fillStyle = colours[level(loss[iy][ix])];
        c.fillRect(x0, y1, x1 - x0 + 0.5, y0 - y1 + 0.5);
      }
    }
    const px = (p) => [u.valToPos(p[0], 'x', true), u.valToPos(p[1], 'y', true)];
    c.lineWidth = 1.5 * (globalThis.uPlot.pxRatio || 1);
    for (const e of grid.distribution.ellipses) {
      c.setLineDash(e.sigma === 1 ? [] : [6, 4]);
      c.strokeStyle = '#ffffff';
      c.beginPath();
      e.points.forEach((p, i) => (i ? c.lineTo(...px(p)) : c.moveTo(...px(p))));
      c.stroke();
    }
    c.setLineDash([]);
    const r = 3.2 * (globalThis.uPlot.pxRatio || 1);
    for (const p of shown) {
      const [a, b] = px([p.x, p.y]);
      c.beginPath();
      c.arc(a, b, p.generation === generation ? r * 1.3 : r, 0, 2 * Math.PI);
      const colour = p.generation === generation ? '#dc2626' : 'rgba(29,35,48,0.55)';
      if (p.same_choices === false) {
        c.strokeStyle = colour;
        c.stroke();
        continue;
      }
      c.fillStyle = colour;
      c.fill();
      if (p.generation === generation) {
        c.strokeStyle = '#fff';
        c.stroke();
      }
    }
    const [mx, my] = px(grid.distribution.mean);
    c.strokeStyle = '#fff';
    c.beginPath();
    c.moveTo(mx - 6, my);
    c.lineTo(mx + 6, my);
    c.moveTo(mx, my - 6);
    c.lineTo(mx, my + 6);
    c.stroke();
    c.restore();
  };

  const axis = (a, side) => {
    const base = { label: log(a) ? `${a.name} (log)` : a.name, labelSize: 18, font: '11px system-ui, sans-serif', labelFont: '12px system-ui, sans-serif', space: side === 'x' ? 60 : 30, ...(side === 'y' ? { size: 62 } : {}) };
    if (!log(a)) return { ...base, values: (_u, v) => v.map(fmt) };
    return {
      ...base,
      splits: (u, _i, min, max) => {
        const s = logSplits(min, max, (side === 'x' ? u.bbox.width : u.bbox.height) / globalThis.uPlot.pxRatio, side === 'x' ? 60 : 26);
        return s.length >= 2 ? s : [min, max];
      },
      filter: (_u, splits) => splits,
      values: (_u, v) => v.map((t) => (Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9 ? decadeLabel(t) : fmt(t))),
    };
  };
  const scale = (a, e) => ({ auto: false, range: () => [e[0], e[e.length - 1]], ...(log(a) ? { distr: 3, log: 10 } : {}) });

  const u = chart(root, {
    height: 380,
    data: [[ex[0], ex[ex.length - 1]], [null, null]],
    scales: { x: { time: false, ...scale(x, ex) }, y: scale(y, ey) },
    axes: [axis(x, 'x'), axis(y, 'y')],
    series: [{ label: 'mean', stroke: 'transparent', points: { show: false } }],
    points: shown.length,
    zoomY: true,
    hooks: { drawClear: [drawField] },
    tooltip: null,
  });
  root.dataset.cells = String(flat.length);
  root.dataset.ellipses = String(grid.distribution.ellipses.length);
  root.dataset.otherChoices = String(shown.filter((p) => p.same_choices === false).length);

  // Hover: the nearest point within 8 px, else the model at the cursor's cell.
  const tip = h('div', { class: 'u-tip', hidden: true });
  u.over.appendChild(tip);
  u.over.addEventListener('mousemove', (ev) => {
    const r = u.over.getBoundingClientRect();
    const left = ev.clientX - r.left, top = ev.clientY - r.top;
    let near = null, best = 8;
    for (const p of shown) {
      const d = Math.hypot(u.valToPos(p.x, 'x') - left, u.valToPos(p.y, 'y') - top);
      if (d < best) [near, best] = [p, d];
    }
    const xv = u.posToVal(left, 'x'), yv = u.posToVal(top, 'y');
    const ix = ex.findIndex((e, i) => i < ex.length - 1 && xv >= e && xv < ex[i + 1]);
    const iy = ey.findIndex((e, i) => i < ey.length - 1 && yv >= e && yv < ey[i + 1]);
    const lines = near
      ? [`trial ${near.trial_id} (generation ${near.generation})`, `${x.name} = ${fmt(near.x)}, ${y.name} = ${fmt(near.y)}`, `value ${fmt(near.value)}`, ...(near.same_choices === false ? ['other categorical choices than the contour\'s'] : [])]
      : ix >= 0 && iy >= 0
        ? [`model at ${x.name} = ${fmt(xv)}, ${y.name} = ${fmt(yv)}`, `mean ${fmt(mean[iy][ix])} ± ${fmt(std[iy][ix])}`]
        : null;
    tip.hidden = !lines;
    if (lines) {
      tip.replaceChildren(...lines.map((l, i) => h('div', { class: i === 0 ? 'u-tip-head' : '' }, l)));
      tip.style.left = `${left + 12 + 220 > u.over.clientWidth ? Math.max(left - 232, 0) : left + 12}px`;
      tip.style.top = `${Math.max(top - 8, 0)}px`;
    }
  });
  u.over.addEventListener('mouseleave', () => (tip.hidden = true));
  return u;
}

/** A colour key for the contour's levels: best → worst, with the model's mean at both ends (where the loss is lowest and highest). */
export function contourLegend(grid) {
  const mean = grid.mean.flat(), loss = grid.loss.flat();
  let b = 0, w = 0;
  loss.forEach((l, i) => {
    if (l < loss[b]) b = i;
    if (l > loss[w]) w = i;
  });
  const [best, worst] = [mean[b], mean[w]];
  const bar = h('span', { class: 'legend-ramp' });
  for (let q = 0; q < LEVELS; q++) {
    const s = h('span');
    s.style.background = ramp(1 - q / (LEVELS - 1));
    bar.append(s);
  }
  return h('span', { class: 'legend' }, `model mean: ${fmt(best)} `, bar, ` ${fmt(worst)}`, ' · ', h('span', { class: 'key-ring' }, '●'), ' this generation · ', h('span', { class: 'key-grey' }, '●'), ' earlier · white: 1σ (solid), 2σ (dashed) ellipses, + mean');
}
