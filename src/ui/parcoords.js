// Parallel coordinates on a canvas: one vertical axis per parameter (log axes for log-scaled ones,
// evenly spaced choices for categorical ones) and one per objective; each completed trial with values
// is a polyline. One objective: coloured by its rank among feasible trials (by loss: best bright,
// worst dark). Several: the front's trials (the server's /front) bright, other feasible ones dark. A
// trial that violates a constraint is grey. The best are drawn last so they stay on top. Hovering near
// an axis highlights the nearest trial's line and shows it.
import { fmt, h, objectivesOf } from './api.js';
import { ramp, rankPositions } from './charts.js';

const M = { left: 40, right: 60, top: 28, bottom: 26 };

function axisOf(p, trials) {
  if (p.type === 'categorical') {
    const choices = p.choices;
    return { name: p.name, kind: 'cat', pos: (v) => (choices.length > 1 ? choices.indexOf(v) / (choices.length - 1) : 0.5), labels: choices.map((c, i) => [choices.length > 1 ? i / (choices.length - 1) : 0.5, String(c)]) };
  }
  const log = p.scale === 'log';
  const t = (v) => (log ? Math.log10(v) : v);
  const vals = trials.map((tr) => tr.parameters[p.name]).filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo = Math.min(...vals.map(t)), hi = Math.max(...vals.map(t));
  if (p.bounds) [lo, hi] = [Math.min(lo, t(p.bounds[0])), Math.max(hi, t(p.bounds[1]))];
  if (!(hi > lo)) [lo, hi] = [lo - 1, hi + 1];
  const pos = (v) => (t(v) - lo) / (hi - lo);
  return { name: log ? `${p.name} (log)` : p.name, kind: 'num', pos, labels: [[0, fmt(log ? 10 ** lo : lo)], [1, fmt(log ? 10 ** hi : hi)]] };
}

/** A trial's objective values: `values`, or `[value]` from a resource without them; null without a result. */
const valuesOf = (t) => (Array.isArray(t.values) ? t.values : t.value !== null && t.value !== undefined ? [t.value] : null);
const GREY = 'rgba(102,112,133,0.8)';

export function parallelCoordinates(root, study, trials, front = null) {
  root.replaceChildren();
  const objectives = objectivesOf(study);
  const multi = objectives.length > 1;
  const done = trials.filter((t) => t.state === 'COMPLETED' && valuesOf(t) !== null);
  root.dataset.lines = String(done.length);
  if (done.length === 0) {
    root.append(h('p', { class: 'empty' }, 'no completed trials yet'));
    return;
  }
  const objAxes = objectives.map((o, i) => ({ ...axisOf({ name: o.name, type: 'float', scale: 'linear', bounds: null }, done.map((t) => ({ parameters: { [o.name]: valuesOf(t)[i] } }))), name: multi ? o.name : 'value' }));
  const axes = [...study.parameters.map((p) => axisOf(p, done)), ...objAxes];
  const getters = [...study.parameters.map((p) => (t) => t.parameters[p.name]), ...objectives.map((_, i) => (t) => valuesOf(t)[i])];
  // Colour position (0 = best): by loss among the feasible trials for one objective; the front first for several.
  const feasible = done.filter((t) => t.feasible !== false);
  const onFront = new Set((front?.trials ?? []).map((t) => t.trial_id));
  const pos = new Map();
  if (multi) for (const t of feasible) pos.set(t, onFront.has(t.trial_id) ? 0 : 0.8);
  else rankPositions(feasible.map((t) => t.loss)).forEach((r, j) => pos.set(feasible[j], r));
  const rank = done.map((t) => pos.get(t) ?? null);
  root.dataset.violating = String(done.length - feasible.length);

  const W = Math.max(root.clientWidth || 800, 320), H = 320;
  const dpr = globalThis.devicePixelRatio || 1;
  const canvas = h('canvas', { width: Math.round(W * dpr), height: Math.round(H * dpr), class: 'pc-canvas', role: 'img', 'aria-label': 'parallel coordinates' });
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  const tip = h('div', { class: 'u-tip', hidden: true });
  const wrap = h('div', { class: 'pc-wrap' }, canvas, tip);
  root.append(wrap);
  const ctx = canvas.getContext('2d');
  ctx.scale(dpr, dpr);
  const xs = axes.map((_, i) => M.left + (i * (W - M.left - M.right)) / Math.max(axes.length - 1, 1));
  const y = (f) => M.top + (1 - f) * (H - M.top - M.bottom);
  // An inactive parameter of a conditional study (absent from the trial) is no point on its axis: the
  // line breaks there (null) and resumes at the next axis the trial has a value for.
  const at = (g, i, t) => (g(t) === undefined ? null : [xs[i], y(axes[i].pos(g(t)))]);
  // Grey (constraint-violating) lines first, then from worst to best.
  const lines = done.map((t, j) => ({ t, pts: getters.map((g, i) => at(g, i, t)), r: rank[j] })).sort((a, b) => (b.r ?? 2) - (a.r ?? 2));
  const trace = (pts) => {
    let open = false;
    for (const p of pts) {
      if (!p) open = false;
      else if (open) ctx.lineTo(p[0], p[1]);
      else {
        ctx.moveTo(p[0], p[1]);
        open = true;
      }
    }
  };

  const draw = (hl) => {
    ctx.clearRect(0, 0, W, H);
    ctx.globalAlpha = lines.length > 1000 ? 0.35 : 0.7;
    ctx.lineWidth = 1;
    for (const l of lines) {
      ctx.strokeStyle = l.r === null ? GREY : ramp(1 - l.r);
      ctx.beginPath();
      trace(l.pts);
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
    if (hl) {
      ctx.strokeStyle = '#dc2626';
      ctx.lineWidth = 2.5;
      ctx.beginPath();
      trace(hl.pts);
      ctx.stroke();
    }
    ctx.fillStyle = '#1d2330';
    ctx.strokeStyle = '#1d2330';
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'center';
    axes.forEach((a, i) => {
      ctx.beginPath();
      ctx.moveTo(xs[i], y(0));
      ctx.lineTo(xs[i], y(1));
      ctx.lineWidth = 1;
      ctx.stroke();
      ctx.fillText(a.name, xs[i], 14);
      ctx.font = '10px system-ui, sans-serif';
      for (const [f, label] of a.labels) ctx.fillText(label, xs[i], f === 0 ? y(0) + 14 : f === 1 ? y(1) - 4 : y(f) + 3);
      ctx.font = '12px system-ui, sans-serif';
    });
  };
  draw(null);

  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    const mx = e.clientX - r.left, my = e.clientY - r.top;
    const i = xs.reduce((b, x, k) => (Math.abs(x - mx) < Math.abs(xs[b] - mx) ? k : b), 0);
    let best = null, dist = 8;
    for (const l of lines) {
      if (!l.pts[i]) continue;
      const d = Math.abs(l.pts[i][1] - my);
      if (d < dist) [best, dist] = [l, d];
    }
    draw(best);
    tip.hidden = !best;
    if (best) {
      const v = valuesOf(best.t);
      const head = `trial ${best.t.trial_id}: ${multi ? objectives.map((o, i) => `${o.name} ${fmt(v[i])}`).join(', ') : fmt(v[0])}${best.t.feasible === false ? ' (violates a constraint)' : ''}`;
      tip.replaceChildren(h('div', { class: 'u-tip-head' }, head), ...study.parameters.map((p) => h('div', {}, `${p.name} = ${fmt(best.t.parameters[p.name])}`)));
      tip.style.left = `${Math.min(mx + 12, W - 180)}px`;
      tip.style.top = `${Math.max(my - 10, 0)}px`;
    }
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
    draw(null);
  });
}
