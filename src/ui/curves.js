// The study page's "Intermediate values" panel: each trial's reported curve (value against step,
// GET /v1/studies/{id}/intermediate_values), trials stopped early drawn dashed and grey, and with a
// median stopping rule the median the rule compares with at each step. At most MAX_CURVES curves are
// drawn (the most recent trials, plus the best one): uPlot draws 200 lines at once without effort, but
// thousands would make every hover and zoom repaint them all. The median is computed from every trial
// read, drawn or not, as the rule computes it.
//
// The route answers in pages of at most 10 000 values (by trial id, then step); loadCurves follows
// them up to MAX_CURVE_VALUES values (20 pages), so that one refresh of a huge study stays a bounded
// download. Past the cap the panel shows the curves read (the lowest trial ids) and says so.
import { fmt, h } from './api.js';
import { chart, scaleOpts, scaleToggle, xAxis, yAxis } from './charts.js';

export const MAX_CURVES = 200;
/** Values the panel reads at most per refresh (docs/dashboard.md). */
export const MAX_CURVE_VALUES = 200_000;
/** Values per page asked of the route: its maximum. */
export const CURVE_PAGE_SIZE = 10_000;

/**
 * The curves, read page by page: `fetchPage(pageSize, token)` answers one page of GET
 * …/intermediate_values. Pages are followed until the last one or until `cap` values were read; a
 * curve split across two pages (the route cuts pages by values, not by trial) is joined again.
 * Returns {curves, values, complete}: complete is false when the cap stopped the reading.
 */
export async function loadCurves(fetchPage, cap = MAX_CURVE_VALUES, pageSize = CURVE_PAGE_SIZE) {
  const curves = [];
  let values = 0;
  let token = null;
  do {
    const page = await fetchPage(Math.min(pageSize, cap - values), token);
    for (const c of page.trials) {
      values += c.intermediate_values.length;
      const last = curves[curves.length - 1];
      if (last?.trial_id === c.trial_id) last.intermediate_values.push(...c.intermediate_values);
      else curves.push({ trial_id: c.trial_id, intermediate_values: [...c.intermediate_values] });
    }
    token = page.next_page_token ?? null;
  } while (token && values < cap);
  return { curves, values, complete: token === null };
}

/**
 * The median of a non-empty list: the middle value, or the mean of the two middle ones for an even
 * count. The same definition as the median rule's (src/domain/studies/stopping-rule.ts, numpy's
 * percentile at 50 with linear interpolation).
 */
export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 === 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** A trial counts for the median rule when it COMPLETED without being stopped (stopped trials are not peers: docs/early-stopping.md). */
const isPeer = (t) => t?.state === 'COMPLETED' && !t.stopped;

/**
 * The rule's median at each step: over the trials that completed without being stopped, their
 * values at exactly that step. Returns a Map step → {median, n}, for the steps at least one such
 * trial reported.
 */
export function stepMedians(curves, trialsById) {
  const byStep = new Map();
  for (const c of curves) {
    if (!isPeer(trialsById.get(c.trial_id))) continue;
    for (const { step, value } of c.intermediate_values) {
      const list = byStep.get(step);
      if (list) list.push(value);
      else byStep.set(step, [value]);
    }
  }
  const out = new Map();
  for (const [step, values] of byStep) out.set(step, { median: median(values), n: values.length });
  return out;
}

/** The curves to draw: the `cap` most recent trials (highest ids) and the best trial, by trial id. */
export function chooseCurves(curves, bestTrialId, cap = MAX_CURVES) {
  if (curves.length <= cap) return [...curves];
  const sorted = [...curves].sort((a, b) => a.trial_id - b.trial_id);
  const recent = sorted.slice(-cap);
  const best = bestTrialId === null || recent.some((c) => c.trial_id === bestTrialId) ? null : sorted.find((c) => c.trial_id === bestTrialId);
  return best ? [best, ...recent] : recent;
}

const STYLE = {
  best: { stroke: '#dc2626', width: 2.5 },
  running: { stroke: '#15803d', width: 1.5 },
  completed: { stroke: 'rgba(37,99,235,0.6)', width: 1.25 },
  stopped: { stroke: 'rgba(102,112,133,0.65)', width: 1.25, dash: [5, 4] },
  other: { stroke: 'rgba(180,83,9,0.6)', width: 1.25 },
  median: { stroke: '#111827', width: 2.5 },
};

function kindOf(t, bestTrialId) {
  if (!t) return 'other';
  if (t.trial_id === bestTrialId) return 'best';
  if (t.stopped) return 'stopped';
  if (t.state === 'COMPLETED') return 'completed';
  if (t.state === 'ACTIVE' || t.state === 'REQUESTED') return 'running';
  return 'other';
}

const stateText = (t) => (!t ? 'unknown trial' : t.stopped ? 'stopped early' : t.state);

/**
 * Draws the panel: the chart into `root`, the linear/log toggle into `captionScale`, the legend and
 * what was drawn into `note`; `section` is hidden when no trial reported a value. curves: the
 * intermediate_values route's `trials`; trials: every Trial resource (state, stopped); study: the
 * Study resource (its `stopping`); bestTrialId: the best observed trial's id or null; scale: the
 * chosen 'linear' / 'log' or null (automatic), setScale(kind) when the toggle changes it; cap: how
 * many recent curves to draw (MAX_CURVES); complete: false when loadCurves stopped at its cap.
 */
export function renderCurves(section, root, captionScale, note, { curves, trials, study, bestTrialId, scale, setScale, cap = MAX_CURVES, complete = true }) {
  if (curves.length === 0) {
    section.hidden = true;
    root.__chart?.destroy();
    root.__chart = null;
    root.replaceChildren();
    root.dataset.series = '0';
    return;
  }
  section.hidden = false;
  const byId = new Map(trials.map((t) => [t.trial_id, t]));
  const shown = chooseCurves(curves, bestTrialId, cap);
  const rule = study.stopping?.rule === 'median' ? study.stopping : null;
  // The median the rule compares with from min_steps on; before that step the rule does not look.
  const medians = rule ? new Map([...stepMedians(curves, byId)].filter(([s]) => s >= rule.min_steps)) : new Map();

  // Aligned data: one x (every step any drawn curve or the median has), null where a trial has no value.
  const steps = new Set(medians.keys());
  for (const c of shown) for (const v of c.intermediate_values) steps.add(v.step);
  const xs = [...steps].sort((a, b) => a - b);
  const at = new Map(xs.map((s, i) => [s, i]));
  const columns = shown.map((c) => {
    const col = new Array(xs.length).fill(null);
    for (const v of c.intermediate_values) col[at.get(v.step)] = v.value;
    return col;
  });
  const kinds = shown.map((c) => kindOf(byId.get(c.trial_id), bestTrialId));
  // Paint order: grey stopped curves first, then completed, running, and the best on top.
  const order = ['stopped', 'other', 'completed', 'running', 'best'];
  const idx = shown.map((_, i) => i).sort((a, b) => order.indexOf(kinds[a]) - order.indexOf(kinds[b]) || shown[a].trial_id - shown[b].trial_id);
  // A stopped curve is dashed whatever its colour (the best trial may have been stopped too).
  const dashOf = (c) => (byId.get(c.trial_id)?.stopped ? { dash: STYLE.stopped.dash } : {});
  const series = idx.map((i) => ({ label: `trial ${shown[i].trial_id}`, ...STYLE[kinds[i]], ...dashOf(shown[i]), points: { show: false }, spanGaps: true }));
  const data = [xs, ...idx.map((i) => columns[i])];
  const trialOf = [null, ...idx.map((i) => shown[i])];
  if (medians.size > 0) {
    series.push({ label: 'median', ...STYLE.median, points: { show: true, size: 4, fill: STYLE.median.stroke, stroke: STYLE.median.stroke }, spanGaps: true });
    data.push(xs.map((s) => medians.get(s)?.median ?? null));
    trialOf.push(null);
  }

  const values = data.slice(1).flat().filter((v) => v !== null);
  const positive = values.filter((v) => v > 0);
  const auto = positive.length === values.length && positive.length > 0 && Math.max(...positive) / Math.min(...positive) >= 100 ? 'log' : 'linear';
  const chosen = scale ?? auto;
  const kind = chosen === 'linear' ? 'linear' : positive.length === values.length ? 'log' : 'asinh';
  captionScale.replaceChildren(scaleToggle('curve-scale', ['linear', 'log'], chosen, setScale));

  // The tooltip names the line nearest the cursor at the hovered step.
  const describe = (i, u) => {
    let best = null;
    for (let s = 1; s < u.series.length; s++) {
      const v = u.data[s][i];
      if (v === null || v === undefined) continue;
      const d = Math.abs(u.valToPos(v, 'y') - u.cursor.top);
      if (d <= 40 && (best === null || d < best.d)) best = { s, v, d };
    }
    if (!best) return null;
    const step = xs[i];
    const m = medians.get(step);
    const c = trialOf[best.s];
    if (!c) return [`median of ${m.n} completed trial(s)`, `step ${step}`, `value ${fmt(best.v)}`];
    const t = byId.get(c.trial_id);
    const last = c.intermediate_values[c.intermediate_values.length - 1];
    return [
      `trial ${c.trial_id} · ${stateText(t)}${t?.stopped ? ` at step ${last.step}` : ''}${c.trial_id === bestTrialId ? ' · best' : ''}`,
      `step ${step}`,
      `value ${fmt(best.v)}`,
      ...(m ? [`median of completed ${fmt(m.median)}`] : []),
    ];
  };
  chart(root, {
    data,
    series,
    xLabel: 'step',
    scales: { y: scaleOpts(kind, values) },
    axes: [xAxis('step', 'count'), yAxis(kind, 'value')],
    tooltip: describe,
    points: values.length,
  });
  const stopped = shown.filter((c) => byId.get(c.trial_id)?.stopped).length;
  root.dataset.series = String(shown.length);
  root.dataset.stopped = String(stopped);
  root.dataset.total = String(curves.length);
  root.dataset.median = String(medians.size > 0);
  root.dataset.complete = String(complete);
  root.dataset.scale = kind;

  const key = (k, text) => h('span', { class: `curve-key curve-${k}` }, text);
  const count = (k) => kinds.filter((x) => x === k).length;
  const parts = [
    ...(count('completed') ? [key('completed', 'completed')] : []),
    ...(count('running') ? [key('running', 'running')] : []),
    ...(count('other') ? [key('other', 'failed or abandoned')] : []),
    ...(stopped ? [key('stopped', `stopped early (${stopped})`)] : []),
    ...(count('best') ? [key('best', `best (trial ${bestTrialId})`)] : []),
    ...(medians.size > 0 ? [key('median', 'median of completed trials')] : []),
  ];
  const peers = trials.filter(isPeer).length;
  const ruleText = rule
    ? ` Median rule: a trial at step s ≥ ${rule.min_steps} stops when its best value so far is worse than the median, at s, of the trials that completed without being stopped${medians.size > 0 ? ' (the black line)' : ''}${peers < rule.warmup_trials ? `; warming up, ${peers} of the ${rule.warmup_trials} completed trials it waits for` : ''}.`
    : ' The study has no stopping rule.';
  const what = shown.length < curves.length
    ? `Showing ${shown.length} of ${curves.length} trials' curves: the ${cap} most recent${shown.length > cap ? ' and the best' : ''}${medians.size > 0 ? '; the median counts all of them' : ''}.`
    : `${curves.length} trial(s).`;
  const partial = complete
    ? ''
    : ` Only the first ${MAX_CURVE_VALUES.toLocaleString('en')} values were read (trials up to ${curves[curves.length - 1].trial_id}, by trial id): the curves and the median here are of those trials.`;
  note.replaceChildren(h('div', { class: 'legend' }, ...parts), h('div', { class: 'note' }, `${what}${ruleText}${partial}`));
}
