// A study of several objectives: the Pareto front over two objectives the user picks, and the
// hypervolume after each result (GET …/front/history).
//
// The dashboard never decides from the objectives' directions which trial is better: the front is
// the server's (GET …/front: feasible trials that no other feasible trial dominates), and the only
// ordering done here is on `losses`, the values as the methods minimise them. Points are drawn in the
// objectives' own units (the axes say name and direction); the staircase joining the front is built
// from the losses, so it steps the right way whatever the directions.
import { fmt, h, objectiveLabel, objectivesOf, paramsText } from './api.js';
import { chart, stepSeries, xAxis, yAxis } from './charts.js';

/** a is at least as good as b in both losses and better in one. */
const dominates2 = (a, b) => a.lx <= b.lx && a.ly <= b.ly && (a.lx < b.lx || a.ly < b.ly);

/**
 * The points of `pts` ({lx, ly} losses on the two axes) that no other point dominates in those two
 * losses, sorted by lx (then ly). With two objectives the server's front is all of them; with more, the
 * front's projection on two axes holds points dominated there by others (they win on a third
 * objective), and only the undominated ones form the staircase.
 */
export function projectedFront(pts) {
  const kept = pts.filter((p) => !pts.some((q) => q !== p && dominates2(q, p)));
  return kept.sort((a, b) => a.lx - b.lx || a.ly - b.ly);
}

/**
 * The staircase through front points ({x, y} in the objectives' units, {lx, ly} their losses): sorted
 * by the x loss, each step goes along x at the previous point's y to the next point's x, then along y
 * to the next point. In losses that is the boundary of the region the front dominates; the same
 * corners in values, since a corner takes one coordinate from each neighbour.
 */
export function staircase(pts) {
  const s = projectedFront(pts);
  const path = [];
  s.forEach((p, i) => {
    if (i > 0) path.push([p.x, s[i - 1].y]);
    path.push([p.x, p.y]);
  });
  return path;
}

/** The trial as lines of text: id, where it stands, each objective's value, each constraint's value, parameters. */
export function trialLines(study, t, onFront) {
  const objectives = objectivesOf(study);
  const standing = t.infeasible ? 'reported infeasible' : t.feasible === false ? 'violates a constraint' : onFront ? 'on the Pareto front' : 'feasible, dominated';
  return [
    `trial ${t.trial_id} · ${standing}`,
    ...objectives.map((o, i) => `${objectiveLabel(o)} = ${fmt(t.values?.[i])}`),
    ...(study.constraints ?? []).map((c, k) => `${c.name} = ${fmt(t.constraints?.[k])}${t.constraints?.[k] > 0 ? ' (> 0: violated)' : ''}`),
    paramsText(t.parameters),
  ];
}

const RADIUS = 3.5;

/**
 * The front plot in `root`: every feasible trial with values as a point, the front's points in red
 * joined by the staircase, trials that violate a constraint as grey crosses (unless hidden), the
 * reference point as a black +. Hover shows the nearest trial; a click pins it in `selected`.
 * opts: {study, trials, front (the /front answer), xi, yi (objective indexes), showViolating, selected}.
 */
export function frontChart(root, { study, trials, front, xi, yi, showViolating, selected }) {
  const objectives = objectivesOf(study);
  const onFront = new Set(front.trials.map((t) => t.trial_id));
  const withValues = trials.filter((t) => t.state === 'COMPLETED' && Array.isArray(t.values) && Array.isArray(t.losses));
  const at = (t, kind) => ({ t, kind, x: t.values[xi], y: t.values[yi], lx: t.losses[xi], ly: t.losses[yi] });
  // The server's front trials, drawn from the list read with them (a trial may have completed between the two reads: then it is not drawn).
  const frontPts = front.trials.map((t) => at(t, 'front'));
  const feasible = withValues.filter((t) => t.feasible === true && !onFront.has(t.trial_id)).map((t) => at(t, 'feasible'));
  const violating = withValues.filter((t) => t.feasible === false).map((t) => at(t, 'violating'));
  const drawn = [...feasible, ...(showViolating ? violating : []), ...frontPts];
  const ref = front.reference_point?.value ?? null;
  const stairs = staircase(frontPts);

  const xs = [...drawn.map((p) => p.x), ...(ref ? [ref[xi]] : [])];
  const ys = [...drawn.map((p) => p.y), ...(ref ? [ref[yi]] : [])];
  const range = (v) => {
    if (v.length === 0) return [0, 1];
    let lo = Math.min(...v), hi = Math.max(...v);
    const pad = hi > lo ? (hi - lo) * 0.06 : Math.abs(lo) * 0.1 || 1;
    return [lo - pad, hi + pad];
  };
  const rx = range(xs), ry = range(ys);

  const draw = (u) => {
    const c = u.ctx;
    const pr = globalThis.uPlot.pxRatio || 1;
    const px = (x, y) => [u.valToPos(x, 'x', true), u.valToPos(y, 'y', true)];
    c.save();
    c.beginPath();
    c.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    c.clip();
    const r = RADIUS * pr;
    c.fillStyle = 'rgba(37,99,235,0.55)';
    for (const p of feasible) {
      const [a, b] = px(p.x, p.y);
      c.beginPath();
      c.arc(a, b, r, 0, 2 * Math.PI);
      c.fill();
    }
    if (showViolating) {
      c.strokeStyle = 'rgba(102,112,133,0.9)';
      c.lineWidth = 1.5 * pr;
      for (const p of violating) {
        const [a, b] = px(p.x, p.y);
        c.beginPath();
        c.moveTo(a - r, b - r);
        c.lineTo(a + r, b + r);
        c.moveTo(a - r, b + r);
        c.lineTo(a + r, b - r);
        c.stroke();
      }
    }
    if (stairs.length) {
      c.strokeStyle = '#dc2626';
      c.lineWidth = 1.5 * pr;
      c.beginPath();
      stairs.forEach(([x, y], i) => (i ? c.lineTo(...px(x, y)) : c.moveTo(...px(x, y))));
      c.stroke();
    }
    for (const p of frontPts) {
      const [a, b] = px(p.x, p.y);
      c.beginPath();
      c.arc(a, b, r * 1.35, 0, 2 * Math.PI);
      c.fillStyle = '#dc2626';
      c.fill();
      c.strokeStyle = '#fff';
      c.lineWidth = pr;
      c.stroke();
    }
    if (ref) {
      const [a, b] = px(ref[xi], ref[yi]);
      c.strokeStyle = '#111827';
      c.lineWidth = 2 * pr;
      c.beginPath();
      c.moveTo(a - 7 * pr, b);
      c.lineTo(a + 7 * pr, b);
      c.moveTo(a, b - 7 * pr);
      c.lineTo(a, b + 7 * pr);
      c.stroke();
    }
    if (selected.trialId !== null) {
      const p = drawn.find((q) => q.t.trial_id === selected.trialId);
      if (p) {
        const [a, b] = px(p.x, p.y);
        c.strokeStyle = '#111827';
        c.lineWidth = 2 * pr;
        c.beginPath();
        c.arc(a, b, r * 2.4, 0, 2 * Math.PI);
        c.stroke();
      }
    }
    c.restore();
  };

  // The drawing is done in the draw hook; one invisible series spanning the padded ranges makes uPlot
  // range the axes (and zoom, and reset on double click) as for any chart.
  const u = chart(root, {
    height: 380,
    data: [rx, ry],
    scales: {},
    axes: [xAxis(objectiveLabel(objectives[xi])), yAxis('linear', objectiveLabel(objectives[yi]))],
    series: [{ label: 'extent', stroke: 'transparent', points: { show: false } }],
    zoomY: true,
    hooks: { draw: [draw] },
    tooltip: null,
    points: drawn.length,
  });
  root.dataset.points = String(feasible.length + frontPts.length);
  root.dataset.front = String(frontPts.length);
  root.dataset.stairs = String(projectedFront(frontPts).length);
  root.dataset.violating = String(showViolating ? violating.length : 0);
  root.dataset.x = objectives[xi].name;
  root.dataset.y = objectives[yi].name;
  // What was drawn, for people reading the page's state and for tests: trial id, kind, and the point.
  root.__drawn = drawn.map((p) => ({ trial_id: p.t.trial_id, kind: p.kind, x: p.x, y: p.y }));

  const nearest = (ev) => {
    const rect = u.over.getBoundingClientRect();
    const left = ev.clientX - rect.left, top = ev.clientY - rect.top;
    let near = null, best = 9;
    // Front points last in `drawn`: on a tie the front point wins, as it is drawn on top.
    for (const p of drawn) {
      const d = Math.hypot(u.valToPos(p.x, 'x') - left, u.valToPos(p.y, 'y') - top);
      if (d <= best) [near, best] = [p, d];
    }
    return { near, left, top };
  };
  const tip = h('div', { class: 'u-tip', hidden: true });
  u.over.appendChild(tip);
  u.over.addEventListener('mousemove', (ev) => {
    const { near, left, top } = nearest(ev);
    tip.hidden = !near;
    if (!near) return;
    tip.replaceChildren(...trialLines(study, near.t, near.kind === 'front').map((l, i) => h('div', { class: i === 0 ? 'u-tip-head' : '' }, l)));
    tip.style.left = `${left + 12 + 260 > u.over.clientWidth ? Math.max(left - 272, 0) : left + 12}px`;
    tip.style.top = `${Math.max(top - 8, 0)}px`;
  });
  u.over.addEventListener('mouseleave', () => (tip.hidden = true));
  // A click pins the trial under the cursor (a drag to zoom is no click: uPlot's drag ends in mouseup elsewhere).
  u.over.addEventListener('click', (ev) => {
    const { near } = nearest(ev);
    selected.trialId = near ? near.t.trial_id : null;
    selected.show(near ? trialLines(study, near.t, near.kind === 'front') : null, near?.t.trial_id ?? null);
    u.redraw(false);
  });
  return u;
}

/**
 * The hypervolume after each result (index = results so far, infeasible ones included), against the
 * one reference point the history states. Returns the caption's text.
 */
export function hypervolumeChart(root, study, fh) {
  const objectives = objectivesOf(study);
  const pts = fh.points;
  const ref = fh.reference_point;
  if (!ref || pts.length === 0) {
    root.__chart?.destroy();
    root.__chart = null;
    root.replaceChildren(h('p', { class: 'empty' }, 'no feasible result yet: no hypervolume'));
    root.dataset.points = '0';
    return 'Hypervolume per result';
  }
  chart(root, {
    data: [pts.map((p) => p.index), pts.map((p) => p.hypervolume)],
    series: [{ ...stepSeries('hypervolume', '#7c3aed'), points: { show: true, size: 4, fill: '#7c3aed', stroke: '#7c3aed' } }],
    scales: {},
    axes: [xAxis('result', 'count'), yAxis('linear', 'hypervolume')],
    tooltip: (i) => (pts[i] ? [`result ${pts[i].index} · trial ${pts[i].trial_id}`, `hypervolume ${fmt(pts[i].hypervolume)}`, `front: ${pts[i].front_size} trial${pts[i].front_size === 1 ? '' : 's'}`] : null),
    points: pts.length,
  });
  root.dataset.derived = String(ref.derived);
  const at = `(${objectives.map((o, i) => `${o.name} ${fmt(ref.value[i])}`).join(', ')})`;
  return ref.derived
    ? `Hypervolume after each result, against the reference point ${at}, derived from the front (nadir + 0.1·(nadir − ideal)): it moves as the front grows, and the whole curve is measured against the latest one`
    : `Hypervolume after each result, against the study's reference point ${at}`;
}
