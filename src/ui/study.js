// /ui/studies/{id}: one study. Summary and notes, value and regret curves (for several objectives the
// Pareto front and the hypervolume per result instead: front.js), the trials' intermediate
// values (when any were reported), the search distribution
// over generations, parallel coordinates and slice plots, the model's parameter importance and
// contour (any generation), and the trial table. Refreshes every 3 s (longer when a load is slow) while the study is ACTIVE,
// except when it has been idle (no max_trials and no activity for the configured minutes).
import { $, all, api, duration, fmt, front as readFront, frontHistory, h, history, idleFor, idleMinutes, objectiveLabel, objectivesOf, parameterText, paramsText, saveIdleMinutes, setupKeyForm, showError, status } from './api.js';
import { chart, lineSeries, pointsSeries, scaleOpts, scaleToggle, stepSeries, xAxis, yAxis } from './charts.js';
import { contourChart, contourLegend } from './contour.js';
import { frontChart, hypervolumeChart } from './front.js';
import { loadCurves, renderCurves } from './curves.js';
import { parallelCoordinates } from './parcoords.js';
import { downloadCsv, TrialTable } from './table.js';

/** The server's facts about a method (GET /v1/methods, read once per page); null when unknown or unreadable (asked again next time). */
let methods = null;
async function methodInfo(name) {
  methods ??= api('/v1/methods').then((r) => r.methods, () => (methods = null));
  return (await methods)?.find((m) => m.name === name) ?? null;
}

const REFRESH_MS = 3000;
/** A refresh waits at least this many times as long as the last load took, so a large study is not re-read back to back. */
const REFRESH_LOAD_FACTOR = 5;
const SCALE_KEY = 'probnes_value_scale';

/** 'log' when every value is positive, else 'asinh' (symmetric log); the linear/log toggle picks between it and linear. */
const logKind = (values) => (values.every((v) => v > 0) ? 'log' : 'asinh');

/** More than one objective: the front replaces the best value (docs/multi-objective.md). */
export const isMulti = (study) => objectivesOf(study).length > 1;

/** Feasible results of results: a count of the server's `feasible` flags, shown when constraints or infeasible reports make it differ. */
function feasibleCounts(trials) {
  const results = trials.filter((t) => t.state === 'COMPLETED' && t.feasible !== null && t.feasible !== undefined);
  return { results: results.length, feasible: results.filter((t) => t.feasible === true).length };
}

function renderSummary(study, best, idle, trials, front) {
  document.title = `${study.name} · ProbNES`;
  $('#study-name').textContent = study.name;
  const badge = $('#study-state');
  badge.textContent = idle ? 'IDLE' : study.state;
  badge.className = `badge ${idle ? 'IDLE' : study.state}`;
  badge.title = idle ? `ACTIVE, but no activity for ${duration(idle)}` : '';
  const objectives = objectivesOf(study);
  const counts = feasibleCounts(trials);
  const constrained = (study.constraints ?? []).length > 0 || counts.feasible < counts.results;
  if (isMulti(study)) {
    // No single best: the front's size and hypervolume (GET …/best's `front`, the same as GET …/front).
    $('#best-title').textContent = 'Pareto front';
    const size = best.front?.size ?? front?.front_size ?? 0;
    $('#best-observed').textContent = `${size} trial${size === 1 ? '' : 's'}`;
    const ref = front?.reference_point;
    $('#best-observed-params').textContent = ref
      ? `hypervolume ${fmt(best.front?.hypervolume ?? front.hypervolume)} against (${objectives.map((o, i) => `${o.name} ${fmt(ref.value[i])}`).join(', ')})${ref.derived ? ', a reference point derived from the front' : ''} · ${counts.feasible} feasible of ${counts.results} results`
      : 'no feasible result yet';
    $('#best-observed').dataset.frontSize = String(size);
  } else {
    $('#best-title').textContent = 'Best observed';
    $('#best-observed').textContent = best.observed ? fmt(best.observed.value) : '–';
    $('#best-observed-params').textContent = best.observed
      ? `trial ${best.observed.trial_id}: ${paramsText(best.observed.parameters)}${constrained ? ` · feasible trials only (${counts.feasible} of ${counts.results} results)` : ''}`
      : constrained && counts.results ? `no feasible result yet (${counts.results} results)` : 'no completed trials yet';
  }
  const e = best.estimated;
  // With several objectives the method's model is of a scalarisation of them (ALGORITHM.md §32.2), not of one objective: its prediction is not shown as a value.
  $('#estimate-title').textContent = isMulti(study) ? 'Search distribution mean' : 'Model estimate (distribution mean)';
  $('#best-estimated').textContent = isMulti(study) ? '' : e.predicted_value === null ? 'no model prediction' : `${fmt(e.predicted_value)} ± ${fmt(e.predicted_std)}`;
  $('#best-estimated-params').textContent = paramsText(e.parameters);
  const facts = {
    method: study.method,
    ...(isMulti(study)
      ? { objectives: objectives.map(objectiveLabel).join(', '), 'reference point': study.reference_point ? study.reference_point.map(fmt).join(', ') : 'derived from the front' }
      : { direction: study.direction }),
    ...((study.constraints ?? []).length ? { constraints: `${study.constraints.map((c) => c.name).join(', ')} (feasible when every value ≤ 0)` } : {}),
    batch: study.batch_size,
    parameters: study.parameters.map(parameterText).join('; '),
    generation: study.generation,
    trials: Object.entries(study.trial_counts).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ') || 'none',
    ...(constrained ? { feasible: `${counts.feasible} of ${counts.results} results` } : {}),
    'max trials': study.max_trials ?? '–',
    'known optimum': study.known_optimum ?? '–',
    updated: new Date(study.updated_at).toLocaleString(),
  };
  $('#study-facts').replaceChildren(...Object.entries(facts).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]));
}

// ---- notes: the study's metadata, its `notes` entry editable (PATCH /v1/studies/{id} metadata) ----
function renderMetadata(study, editing) {
  const { notes, ...rest } = study.metadata ?? {};
  const entries = Object.entries(rest);
  $('#metadata').replaceChildren(...(entries.length ? entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : JSON.stringify(v))]) : [h('dd', { class: 'note' }, 'no other metadata')]));
  if (!editing) $('#notes').value = typeof notes === 'string' ? notes : notes === undefined ? '' : JSON.stringify(notes);
}

function setupNotes(id, onSaved) {
  const form = $('#notes-form');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const msg = $('#notes-status');
    msg.textContent = 'saving…';
    try {
      // Read the metadata again just before writing, so keys set elsewhere in the meantime survive.
      const fresh = await api(`/v1/studies/${encodeURIComponent(id)}`);
      const updated = await api(`/v1/studies/${encodeURIComponent(id)}`, { method: 'PATCH', body: JSON.stringify({ metadata: { ...fresh.metadata, notes: $('#notes').value } }) });
      msg.textContent = `saved ${new Date().toLocaleTimeString()}`;
      onSaved(updated);
    } catch (err) {
      msg.textContent = `not saved: ${err.message}`;
    }
  });
}

// ---- progress: value per evaluation with the running best; simple regret ----
function renderProgress(view, hist, trialsById, scale) {
  const ev = hist.evaluations;
  const xs = ev.map((e) => e.index);
  const values = ev.map((e) => e.value);
  const kind = scale === 'linear' ? 'linear' : logKind(values);
  const describe = (i) => {
    const e = ev[i];
    if (!e) return null;
    const t = trialsById.get(e.trial_id);
    return [`evaluation ${e.index} · trial ${e.trial_id}`, `value ${fmt(e.value)} (best so far ${fmt(e.best_so_far)})`, ...(t ? Object.entries(t.parameters).map(([k, v]) => `${k} = ${fmt(v)}`) : [])];
  };
  // /history lists feasible results only (docs/multi-objective.md): with constraints or infeasible reports the caption says so.
  const counts = feasibleCounts(view.latest.trials);
  $('#best-caption').textContent = (view.study.constraints ?? []).length || counts.feasible < counts.results
    ? `Objective value per feasible evaluation (${counts.feasible} of ${counts.results} results) and best so far`
    : 'Objective value per evaluation and best so far';
  $('#value-scale').replaceChildren(scaleToggle('value-scale', ['linear', 'log'], scale, view.setScale));
  $('#plot-best').dataset.scale = kind;
  chart($('#plot-best'), {
    data: [xs, values, ev.map((e) => e.best_so_far)],
    series: [pointsSeries('value', 'rgba(37,99,235,0.6)', 5), stepSeries('best so far', '#dc2626')],
    scales: { y: scaleOpts(kind, values) },
    axes: [xAxis('evaluation', 'count'), yAxis(kind, 'value')],
    tooltip: describe,
    points: ev.length,
  });
  $('#plot-best').dataset.scale = kind;

  const reg = $('#plot-regret');
  if (hist.known_optimum === null) {
    $('#regret-caption').textContent = 'Simple regret (needs known_optimum on the study)';
    reg.__chart?.destroy();
    reg.__chart = null;
    reg.replaceChildren(h('p', { class: 'empty' }, 'no known_optimum: regret is not defined'));
    reg.dataset.points = '0';
    reg.dataset.scale = 'none';
    $('#regret-scale').replaceChildren();
    return;
  }
  const r = ev.map((e) => e.regret);
  const positive = r.filter((v) => v > 0);
  const auto = positive.length > 0 && Math.max(...positive) / Math.min(...positive) >= 100 ? 'log' : 'linear';
  const rScale = view.regretScale ?? auto;
  // Zeros (optimum reached) cannot sit on a log axis: they are drawn on a floor a decade below the smallest positive regret.
  const floor = positive.length ? Math.min(...positive) / 10 : 1e-12;
  const drawn = rScale === 'log' ? r.map((v) => Math.max(v, floor)) : r;
  $('#regret-caption').textContent = `Simple regret (best so far − ${fmt(hist.known_optimum)})${rScale === 'log' && r.some((v) => v <= 0) ? `; 0 drawn at ${fmt(floor)}` : ''}`;
  $('#regret-scale').replaceChildren(scaleToggle('regret-scale', ['linear', 'log'], rScale, view.setRegretScale));
  chart(reg, {
    data: [xs, drawn],
    series: [{ ...stepSeries('regret', '#b45309'), points: { show: true, size: 4, fill: '#b45309', stroke: '#b45309' } }],
    scales: { y: scaleOpts(rScale) },
    axes: [xAxis('evaluation', 'count'), yAxis(rScale, 'regret')],
    tooltip: (i) => (ev[i] ? [`evaluation ${ev[i].index} · trial ${ev[i].trial_id}`, `regret ${fmt(r[i])}`, `value ${fmt(ev[i].value)}`] : null),
    points: ev.length,
  });
  reg.dataset.scale = rScale;
}

// ---- several objectives: the Pareto front over two chosen objectives, and the hypervolume per result ----
const FRONT_VIOLATING_KEY = 'probnes_front_violating';

/** The axis selects (the first two objectives by default), the toggle for constraint-violating trials, and the pinned trial. */
function setupFront(view) {
  const objectives = objectivesOf(view.study);
  const opt = (o, i, sel) => h('option', { value: String(i), selected: sel }, objectiveLabel(o));
  const xs = h('select', { id: 'front-x', 'aria-label': 'x objective' }, ...objectives.map((o, i) => opt(o, i, i === 0)));
  const ys = h('select', { id: 'front-y', 'aria-label': 'y objective' }, ...objectives.map((o, i) => opt(o, i, i === 1)));
  const violating = h('input', { type: 'checkbox', id: 'front-violating', checked: localStorage.getItem(FRONT_VIOLATING_KEY) !== 'hide' });
  for (const c of [xs, ys]) c.addEventListener('change', () => view.paint());
  // The model views show the y objective too (the slices' one).
  ys.addEventListener('change', () => view.drawModel());
  violating.addEventListener('change', () => {
    localStorage.setItem(FRONT_VIOLATING_KEY, violating.checked ? 'show' : 'hide');
    view.paint();
  });
  const pinned = $('#front-selected');
  view.selected = {
    trialId: null,
    show: (lines, trialId) => {
      pinned.dataset.trial = trialId === null ? '' : String(trialId);
      pinned.replaceChildren(...(lines ?? []).map((l, i) => h('div', { class: i === 0 ? 'u-tip-head' : '' }, l)));
    },
  };
  $('#front-controls').replaceChildren(
    h('label', {}, 'x ', xs),
    h('label', {}, ' y ', ys),
    h('label', { class: 'toggle' }, violating, ' trials that violate a constraint'),
  );
  $('#front-section').hidden = false;
  $('#progress-section').hidden = true;
  $('#parameters-note').textContent = '(completed trials with values: the front\'s bright, other feasible ones dark, those that violate a constraint grey)';
}

function renderFront(view) {
  const { trials, front, frontHist } = view.latest;
  const root = $('#plot-front');
  const xi = Number($('#front-x').value), yi = Number($('#front-y').value);
  const note = $('#front-note');
  const reported = trials.filter((t) => t.infeasible === true).length;
  root.dataset.infeasible = String(reported);
  if (xi === yi) {
    root.__chart?.destroy();
    root.__chart = null;
    root.replaceChildren(h('p', { class: 'empty' }, 'choose two different objectives'));
    root.dataset.points = '0';
    root.dataset.front = '0';
    note.replaceChildren();
  } else {
    frontChart(root, { study: view.study, trials, front, xi, yi, showViolating: $('#front-violating').checked, selected: view.selected });
    const many = objectivesOf(view.study).length > 2;
    note.replaceChildren(
      h('span', { class: 'legend' }, h('span', { class: 'key-front' }, '●'), ' on the front (the server\'s: feasible, not dominated) · ', h('span', { class: 'key-feasible' }, '●'), ' feasible · ', h('span', { class: 'key-violating' }, '×'), ' violates a constraint · ', h('span', { class: 'key-ref' }, '+'), ` reference point${front.reference_point?.derived ? ' (derived)' : ''}`),
      h('div', { class: 'note' }, `${front.front_size} trial${front.front_size === 1 ? '' : 's'} on the front of ${front.feasible_count} feasible of ${front.evaluation_count} results.${reported ? ` ${reported} reported infeasible (no values: not drawn).` : ''}${many ? ' With more than two objectives, front points can be dominated in these two: the staircase joins those that are not.' : ''}`),
    );
  }
  const caption = hypervolumeChart($('#plot-hypervolume'), view.study, frontHist);
  $('#hv-caption').textContent = caption;
}

// ---- the search distribution: mean ± std per parameter over generations ----
function renderDistribution(study, hist) {
  const box = $('#dist-plots');
  const gens = hist.generations;
  const numeric = study.parameters.filter((p) => p.type !== 'categorical');
  box.replaceChildren(...numeric.map((p) => h('figure', {}, h('figcaption', {}, p.scale === 'log' ? `ln(${p.name})` : p.name), h('div', { class: 'chart small', 'data-parameter': p.name }))));
  numeric.forEach((p, i) => {
    const log = p.scale === 'log';
    // Mean in user units, std in the parameter's transformed scale (ln for log parameters).
    const m = gens.map((g) => (log ? Math.log(g.mean[p.name]) : g.mean[p.name]));
    chart(box.querySelector(`[data-parameter="${CSS.escape(p.name)}"]`), {
      height: 200,
      data: [gens.map((g) => g.generation), m, gens.map((g, j) => m[j] - g.std[i]), gens.map((g, j) => m[j] + g.std[i])],
      series: [{ ...lineSeries('mean', '#2563eb'), points: { show: true, size: 4 } }, lineSeries('−1σ', 'rgba(37,99,235,0.35)', 1), lineSeries('+1σ', 'rgba(37,99,235,0.35)', 1)],
      axes: [xAxis('generation', 'count'), yAxis('linear', log ? `ln ${p.name}` : p.name)],
      tooltip: (j) => (gens[j] ? [`generation ${gens[j].generation}`, `mean ${fmt(gens[j].mean[p.name])}`, `std ${fmt(gens[j].std[i])}${log ? ' (ln units)' : ''}`] : null),
      points: gens.length,
    });
  });
}

// ---- slices: an objective's value against each parameter ----
/**
 * One point per trial with a value of objective `oi` (the one objective, or the one picked for the front
 * plot's y axis): feasible trials blue, trials that violate a constraint grey (a second series).
 */
function renderSlices(study, trials, scale, oi) {
  const objective = objectivesOf(study)[oi];
  const valueOf = (t) => (Array.isArray(t.values) ? t.values[oi] : oi === 0 ? t.value : null) ?? null;
  const done = trials.filter((t) => t.state === 'COMPLETED' && valueOf(t) !== null);
  const label = objectivesOf(study).length > 1 ? objectiveLabel(objective) : 'value';
  const box = $('#slice-plots');
  box.replaceChildren(...study.parameters.map((p) => h('figure', {}, h('figcaption', {}, `${label} vs ${p.name}`), h('div', { class: 'chart small', 'data-slice': p.name }))));
  const kind = scale === 'linear' ? 'linear' : logKind(done.map(valueOf));
  const violates = (t) => t.feasible === false;
  for (const p of study.parameters) {
    const cat = p.type === 'categorical';
    // A trial where the parameter was inactive (a conditional study) has no value: it is not on this slice.
    const xOf = (t) => (!(p.name in t.parameters) ? NaN : cat ? p.choices.indexOf(t.parameters[p.name]) : t.parameters[p.name]);
    const pts = done.map((t) => [xOf(t), valueOf(t), t]).filter(([x]) => Number.isFinite(x)).sort((a, b) => a[0] - b[0]);
    const el = box.querySelector(`[data-slice="${CSS.escape(p.name)}"]`);
    const xLog = !cat && p.scale === 'log';
    const anyViolating = pts.some((q) => violates(q[2]));
    chart(el, {
      height: 200,
      data: [pts.map((q) => q[0]), pts.map((q) => (violates(q[2]) ? null : q[1])), ...(anyViolating ? [pts.map((q) => (violates(q[2]) ? q[1] : null))] : [])],
      series: [pointsSeries(p.name, 'rgba(37,99,235,0.6)', 5), ...(anyViolating ? [{ ...pointsSeries('violates a constraint', '#667085', 6), points: { show: true, size: 6, width: 1.5, stroke: '#667085', fill: '#fff' } }] : [])],
      scales: { x: { ...(xLog ? { distr: 3, log: 10 } : {}), ...(cat ? { range: [-0.5, p.choices.length - 0.5] } : {}) }, y: scaleOpts(kind, pts.map((q) => q[1])) },
      axes: [cat ? { ...xAxis(p.name), splits: () => p.choices.map((_, i) => i), values: (_u, v) => v.map((i) => String(p.choices[i] ?? '')) } : xAxis(p.name, xLog ? 'log' : 'linear'), yAxis(kind, label)],
      tooltip: (i) => (pts[i] ? [`trial ${pts[i][2].trial_id}${violates(pts[i][2]) ? ' · violates a constraint' : ''}`, `${p.name} = ${fmt(pts[i][2].parameters[p.name])}`, `${label} ${fmt(pts[i][1])}`] : null),
      points: pts.length,
    });
    el.dataset.violating = String(pts.filter((q) => violates(q[2])).length);
  }
}

// ---- the model: importance and contour, any generation ----

/** Several objectives: the objective the model views show, the front plot's y one (as the slices); null for one objective. */
function modelObjective(study) {
  if (!isMulti(study)) return null;
  const ys = $('#front-y');
  return objectivesOf(study)[ys ? Number(ys.value) : 0] ?? objectivesOf(study)[0];
}

async function renderImportance(id, generation, objective) {
  const box = $('#importance');
  try {
    const query = [...(generation === null ? [] : [`generation=${generation}`]), ...(objective ? [`objective=${encodeURIComponent(objective.name)}`] : [])];
    const v = await api(`/v1/studies/${encodeURIComponent(id)}/model/importance${query.length ? `?${query.join('&')}` : ''}`);
    const top = Math.max(...v.parameters.map((p) => p.relevance_interval?.[1] ?? p.relevance));
    const rows = [...v.parameters].sort((a, b) => b.relevance - a.relevance).map((p) => {
      const track = h('span', { class: 'imp-track' });
      const bar = h('span', { class: 'imp-bar' });
      bar.style.width = `${(100 * p.relevance) / top}%`;
      track.append(bar);
      if (p.relevance_interval) {
        const wh = h('span', { class: 'imp-whisker' });
        wh.style.left = `${(100 * p.relevance_interval[0]) / top}%`;
        wh.style.width = `${(100 * (p.relevance_interval[1] - p.relevance_interval[0])) / top}%`;
        track.append(wh);
      }
      const ri = p.relevance_interval ? ` (95%: ${fmt(p.relevance_interval[0])}–${fmt(p.relevance_interval[1])})` : '';
      // A categorical parameter has no length scale: its relevance comes from its choices' weights.
      if (p.type === 'categorical') {
        return h('div', { class: 'imp-row imp-categorical', 'data-parameter': p.name, 'data-type': 'categorical' }, h('span', { class: 'imp-name' }, p.name), track, h('span', { class: 'imp-text' }, `relevance ${fmt(p.relevance)}${ri} · categorical`));
      }
      const unit = p.scale === 'log' ? ' (in ln units)' : '';
      const ci = p.lengthscale_interval ? ` (95%: ${fmt(p.lengthscale_interval[0])}–${fmt(p.lengthscale_interval[1])})` : '';
      return h('div', { class: 'imp-row', 'data-parameter': p.name, 'data-type': 'numeric' }, h('span', { class: 'imp-name' }, p.name), track, h('span', { class: 'imp-text' }, `relevance ${fmt(p.relevance)} · length scale ${fmt(p.lengthscale)}${ci}${unit}`));
    });
    const how = v.source === 'method' ? 'the GP the method fitted' : 'a GP fitted to the study\'s points for this view (the method has no model of its own, or had not fitted one by this generation)';
    const unc = v.uncertainty === 'joint' ? 'Laplace approximation' : v.uncertainty === 'conditional' ? 'Laplace approximation with the other hyperparameters held fixed' : 'unavailable';
    const categorical = v.parameters.some((p) => p.type === 'categorical')
      ? ' A categorical parameter\'s relevance is that of a numeric parameter the model varies with as much across its prior (read from the kernel\'s weights of its choices).'
      : '';
    const of = objective ? ` Of ${objectiveLabel(objective)}, the front plot's y objective.` : '';
    box.replaceChildren(...rows, h('p', { class: 'note' }, `Generation ${v.generation}: ${how}, ${v.n_points} points.${of} Relevance = prior std / length scale (larger: the objective changes faster along the parameter); bars show the estimate, whiskers the 95% interval (${unc}).${categorical}`));
    box.dataset.source = v.source;
  } catch (err) {
    box.replaceChildren(h('p', { class: 'empty' }, err.code === 'model_unavailable' ? err.message : `importance unavailable: ${err.message}`));
    box.dataset.source = 'none';
  }
}

function setupModel(view) {
  const study = view.study;
  const numeric = study.parameters.filter((p) => p.type !== 'categorical');
  const section = $('#model-section');
  if (numeric.length < 2) {
    $('#contour-controls').replaceChildren(h('p', { class: 'note' }, 'The contour needs two numeric parameters.'));
  } else {
    const opt = (p, sel) => h('option', { value: p.name, selected: sel }, p.name);
    const xs = h('select', { id: 'contour-x', 'aria-label': 'x parameter' }, ...numeric.map((p, i) => opt(p, i === 0)));
    const ys = h('select', { id: 'contour-y', 'aria-label': 'y parameter' }, ...numeric.map((p, i) => opt(p, i === 1)));
    const slider = h('input', { type: 'range', id: 'generation', min: '0', max: String(study.generation), value: String(study.generation), step: '1', 'aria-label': 'generation' });
    const label = h('output', { id: 'generation-label', for: 'generation' }, `generation ${study.generation}`);
    let timer = null;
    const redraw = () => {
      clearTimeout(timer);
      label.textContent = `generation ${slider.value} of ${slider.max}`;
      timer = setTimeout(() => view.drawModel(), 150);
    };
    // One choice selector per categorical parameter: the contour is the model at those choices
    // (model/grid's `fixed`); "most probable" leaves the choice to the search distribution.
    const choiceSelects = study.parameters
      .filter((p) => p.type === 'categorical')
      .map((p) => h('select', { 'data-choice': p.name, 'aria-label': `${p.name} choice` }, h('option', { value: '' }, 'most probable'), ...p.choices.map((c, i) => h('option', { value: String(i) }, String(c)))));
    for (const c of [xs, ys, ...choiceSelects]) c.addEventListener('change', () => view.drawModel());
    slider.addEventListener('input', redraw);
    $('#contour-controls').replaceChildren(
      h('label', {}, 'x ', xs),
      h('label', {}, ' y ', ys),
      ...choiceSelects.map((sel) => h('label', {}, ` ${sel.dataset.choice} `, sel)),
      h('label', { class: 'slider' }, ' ', slider, ' ', label),
    );
  }
  section.hidden = false;
}

async function drawModel(view) {
  const id = view.study.id;
  const slider = $('#generation');
  const generation = slider ? Number(slider.value) : null;
  const objective = modelObjective(view.study);
  await renderImportance(id, generation, objective);
  const root = $('#plot-contour');
  const xs = $('#contour-x'), ys = $('#contour-y');
  if (!xs) return;
  if (xs.value === ys.value) {
    root.replaceChildren(h('p', { class: 'empty' }, 'choose two different parameters'));
    return;
  }
  // The choices asked for (by index into the study's choices, so that 1 and "1" stay apart).
  const chosen = Object.create(null);
  for (const sel of document.querySelectorAll('#contour-controls select[data-choice]')) {
    const p = view.study.parameters.find((q) => q.name === sel.dataset.choice);
    if (p && sel.value !== '') chosen[p.name] = p.choices[Number(sel.value)];
  }
  const fixedQuery = Object.keys(chosen).length ? `&fixed=${encodeURIComponent(JSON.stringify(chosen))}` : '';
  try {
    const g = await api(`/v1/studies/${encodeURIComponent(id)}/model/grid?x=${encodeURIComponent(xs.value)}&y=${encodeURIComponent(ys.value)}&n=40&generation=${generation}${fixedQuery}${objective ? `&objective=${encodeURIComponent(objective.name)}` : ''}`);
    contourChart(root, g, { generation: g.generation });
    if (!performance.getEntriesByName('probnes:model').length) performance.mark('probnes:model');
    root.dataset.generation = String(g.generation);
    root.dataset.objective = g.objective;
    const categoricalNames = view.study.parameters.filter((p) => p.type === 'categorical').map((p) => p.name);
    root.dataset.choices = JSON.stringify(Object.fromEntries(categoricalNames.map((n) => [n, g.fixed[n]])));
    const fixed = Object.entries(g.fixed);
    // A method without a search distribution (the server's list says which: GET /v1/methods): its
    // state's "distribution" is the prior's spread around a centre (bo, pibo: the best point so far).
    const info = await methodInfo(view.study.method);
    const noDistribution = info && !info.search_distribution ? ` ${view.study.method} keeps no search distribution: the ellipses show the prior's spread around its current centre.` : '';
    // Numeric parameters at the distribution's mean; categorical ones at the choice picked, else the most probable.
    // On a conditional space the server picks, among the most probable choices, one under which both axes apply.
    const free = view.study.parameters.some((p) => p.condition) ? ' (most probable where the axes apply)' : ' (most probable)';
    const held = fixed.map(([k, v]) => `${k}=${fmt(v)}${categoricalNames.includes(k) && !(k in chosen) ? free : ''}`).join(', ');
    const choicesNote = categoricalNames.length ? ' Hollow points are trials with other categorical choices.' : '';
    // Several objectives: the model of one of them (the front plot's y), a GP fitted for the view (the method's models a scalarisation).
    const multiNote = objective ? ` The model of ${objectiveLabel(objective)}, the front plot's y objective (choose another there); trials reported infeasible have no value and are not drawn.` : '';
    $('#contour-note').replaceChildren(contourLegend(g), h('div', { class: 'note' }, `${g.source === 'method' ? 'The method\'s GP' : 'A GP fitted for this view'} at generation ${g.generation} (${g.n_points} points)${fixed.length ? `; other parameters at: ${held}` : ''}.${choicesNote}${multiNote}${noDistribution} Drag to zoom, double-click to reset.`));
  } catch (err) {
    root.__chart?.destroy();
    root.__chart = null;
    root.replaceChildren(h('p', { class: 'empty' }, err.message));
    root.dataset.generation = 'none';
    $('#contour-note').replaceChildren();
  }
}

export async function studyPage() {
  const id = decodeURIComponent(location.pathname.split('/').pop());
  let timer = null;
  const view = {
    study: null,
    latest: null,
    scale: localStorage.getItem(SCALE_KEY) === 'log' ? 'log' : 'linear',
    regretScale: null,
    curveScale: null,
    table: null,
    modelReady: false,
    /** Several objectives: the trial pinned on the front plot (set up with it). */
    selected: null,
    setScale: (k) => {
      view.scale = k;
      localStorage.setItem(SCALE_KEY, k);
      paint();
    },
    setRegretScale: (k) => {
      view.regretScale = k;
      paint();
    },
    setCurveScale: (k) => {
      view.curveScale = k;
      paint();
    },
    drawModel: () => drawModel(view),
  };
  const paint = () => {
    const { hist, trials, curves, curvesComplete, best } = view.latest;
    const byId = new Map(trials.map((t) => [t.trial_id, t]));
    const multi = isMulti(view.study);
    // Several objectives: no value to follow, so the front and the hypervolume take the place of the value and regret curves.
    if (multi) renderFront(view);
    else renderProgress(view, hist, byId, view.scale);
    renderCurves($('#intermediate-section'), $('#plot-intermediate'), $('#curve-scale'), $('#intermediate-note'), {
      curves,
      trials,
      study: view.study,
      bestTrialId: best.observed?.trial_id ?? null,
      scale: view.curveScale,
      setScale: view.setCurveScale,
      complete: curvesComplete,
    });
    // The slices show the front plot's y objective (the one objective otherwise).
    renderSlices(view.study, trials, view.scale, multi ? Number($('#front-y').value) : 0);
  };
  view.paint = () => view.latest && paint();

  let every = REFRESH_MS;
  const load = async () => {
    clearTimeout(timer);
    const started = performance.now();
    try {
      const base = `/v1/studies/${encodeURIComponent(id)}`;
      const curvePage = (size, token) => api(`${base}/intermediate_values?page_size=${size}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
      // Whether the study has several objectives decides what else to read: known after the first load
      // (a study's objectives never change), so only the first load reads the study on its own first.
      const multi = isMulti(view.study ?? (await api(base)));
      const [study, hist, best, trials, intermediate, front, frontHist] = await Promise.all([
        api(base),
        history(id),
        api(`${base}/best`),
        all(`${base}/trials`, 'trials'),
        loadCurves(curvePage),
        multi ? readFront(id) : null,
        multi ? frontHistory(id) : null,
      ]);
      const idle = idleFor(study);
      const newGeneration = view.study && view.study.generation !== study.generation;
      view.study = study;
      view.latest = { hist, trials, curves: intermediate.curves, curvesComplete: intermediate.complete, best, front, frontHist };
      renderSummary(study, best, idle, trials, front);
      renderMetadata(study, document.activeElement === $('#notes'));
      if (multi && !view.selected) setupFront(view);
      paint();
      renderDistribution(study, hist);
      parallelCoordinates($('#plot-parallel'), study, trials, front);
      if (!view.table) view.table = new TrialTable($('#trials-box'), study);
      view.table.setTrials(trials);
      // The model's views come from the engine (a GP fit for methods without one): drawn when they
      // arrive, without holding up the rest of the page.
      if (!view.modelReady) {
        view.modelReady = true;
        // Several objectives: the views show one of them (the front plot's y), set up above.
        setupModel(view);
        void view.drawModel();
      } else if (newGeneration && $('#generation')) {
        // Follow the newest generation only when the slider was on the newest one.
        const s = $('#generation');
        const atEnd = s.value === s.max;
        s.max = String(study.generation);
        if (atEnd) {
          s.value = s.max;
          void view.drawModel();
        }
      }
      const live = study.state === 'ACTIVE' && !idle;
      every = Math.max(REFRESH_MS, Math.round((REFRESH_LOAD_FACTOR * (performance.now() - started)) / 1000) * 1000);
      status(`Updated ${new Date().toLocaleTimeString()}${live ? ` · refreshing every ${every / 1000} s while ACTIVE` : idle ? ` · idle for ${duration(idle)} (no max_trials, no activity for ${idleMinutes()} min or more): not refreshing` : ''}`);
      $('#refresh').hidden = live;
      if (document.body.dataset.loaded !== 'true') performance.mark('probnes:loaded');
      document.body.dataset.loaded = 'true';
      document.body.dataset.refreshing = String(live);
      if (live) timer = setTimeout(load, every);
    } catch (err) {
      showError(err);
      // A transient failure of an ACTIVE study's refresh should not stop the refreshing.
      if (view.study?.state === 'ACTIVE' && !idleFor(view.study)) timer = setTimeout(load, every);
    }
  };
  $('#csv').addEventListener('click', () => view.latest && downloadCsv(view.study, view.latest.trials));
  $('#refresh').addEventListener('click', () => load());
  const idleInput = $('#idle-minutes');
  idleInput.value = String(idleMinutes());
  idleInput.addEventListener('change', () => {
    const m = Number(idleInput.value);
    if (Number.isFinite(m) && m > 0) {
      saveIdleMinutes(m);
      void load();
    }
  });
  setupNotes(id, (updated) => {
    view.study = updated;
    renderMetadata(updated, false);
  });
  setupKeyForm(load);
  await load();
}

