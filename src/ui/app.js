// The study dashboard: plain ES modules served by the server, talking to the public /v1 API with
// the API key the user pasted (kept in localStorage). No inline scripts, so a strict CSP holds.
import { el, fmt, plot } from './plot.js';

const KEY = 'probnes_api_key';
const REFRESH_MS = 3000;
const MAX_ROWS = 500;
const $ = (sel) => document.querySelector(sel);

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
  }
}

async function api(path) {
  const key = localStorage.getItem(KEY);
  const res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

/** Every item of a paginated list route. */
async function all(path, field) {
  const items = [];
  let token = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(`${path}${sep}page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    items.push(...page[field]);
    token = page.next_page_token;
  } while (token);
  return items;
}

function status(text, isError = false) {
  const p = $('#status');
  p.textContent = text;
  p.classList.toggle('error', isError);
}

function showError(err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    status(`${err.message} — paste an API key above.`, true);
    $('#api-key').focus();
  } else {
    status(`Could not load: ${err.message}`, true);
  }
}

function setupKeyForm(reload) {
  const input = $('#api-key');
  input.value = localStorage.getItem(KEY) ?? '';
  $('#key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = input.value.trim();
    if (v) localStorage.setItem(KEY, v);
    else localStorage.removeItem(KEY);
    reload();
  });
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

// ---- /ui: the list of studies ----
async function studiesPage() {
  const load = async () => {
    try {
      const studies = await all('/v1/studies', 'studies');
      const body = $('#studies tbody');
      body.replaceChildren();
      for (const s of studies) {
        const tr = document.createElement('tr');
        const a = document.createElement('a');
        a.href = `/ui/studies/${encodeURIComponent(s.id)}`;
        a.textContent = s.name;
        cell(tr, '').appendChild(a);
        cell(tr, s.method);
        cell(tr, s.state, `badge ${s.state}`);
        cell(tr, String(s.generation), 'num');
        cell(tr, `${s.trial_counts.COMPLETED}${s.max_trials ? ` / ${s.max_trials}` : ''}`, 'num');
        cell(tr, String(s.trial_counts.ACTIVE), 'num');
        cell(tr, new Date(s.created_at).toLocaleString());
        body.appendChild(tr);
      }
      status(studies.length === 0 ? 'No studies yet: create one with POST /v1/studies.' : `${studies.length} stud${studies.length === 1 ? 'y' : 'ies'}`);
    } catch (err) {
      showError(err);
    }
  };
  setupKeyForm(load);
  await load();
}

// ---- /ui/studies/{id}: one study ----
const paramsText = (p) => Object.entries(p ?? {}).map(([k, v]) => `${k}=${fmt(v)}`).join(', ');

function renderSummary(study, best) {
  document.title = `${study.name} · ProbNES`;
  $('#study-name').textContent = study.name;
  const badge = $('#study-state');
  badge.textContent = study.state;
  badge.className = `badge ${study.state}`;
  $('#best-observed').textContent = best.observed ? fmt(best.observed.value) : '–';
  $('#best-observed-params').textContent = best.observed ? `trial ${best.observed.trial_id}: ${paramsText(best.observed.parameters)}` : 'no completed trials yet';
  const e = best.estimated;
  $('#best-estimated').textContent = e.predicted_value === null ? 'no model prediction' : `${fmt(e.predicted_value)} ± ${fmt(e.predicted_std)}`;
  $('#best-estimated-params').textContent = paramsText(e.parameters);
  const facts = { method: study.method, direction: study.direction, batch: study.batch_size, generation: study.generation, trials: Object.entries(study.trial_counts).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ') || 'none', 'known optimum': study.known_optimum ?? '–' };
  const dl = $('#study-facts');
  dl.replaceChildren();
  for (const [k, v] of Object.entries(facts)) {
    dl.appendChild(Object.assign(document.createElement('dt'), { textContent: k }));
    dl.appendChild(Object.assign(document.createElement('dd'), { textContent: String(v) }));
  }
}

function renderCurves(history) {
  const ev = history.evaluations;
  plot($('#plot-best'), [
    { points: ev.map((e) => [e.index, e.value]), dots: true, cls: 'values' },
    { points: ev.map((e) => [e.index, e.best_so_far]), line: true, step: true, cls: 'best' },
  ], { xLabel: 'evaluation', yLabel: 'value' });

  const svg = $('#plot-regret');
  if (history.known_optimum === null) {
    $('#regret-caption').textContent = 'Simple regret (needs known_optimum on the study)';
    plot(svg, [], { empty: 'no known_optimum: regret is not defined' });
    return;
  }
  const r = ev.map((e) => [e.index, e.regret]);
  const positive = r.map((p) => p[1]).filter((v) => v > 0);
  // Log scale once regret spans two decades or more; zeros (optimum reached) sit on a floor below the smallest positive value.
  const log = positive.length > 0 && Math.max(...positive) / Math.min(...positive) >= 100;
  const floor = log ? Math.min(...positive) / 10 : 0;
  const pts = log ? r.map(([x, y]) => [x, Math.max(y, floor)]) : r;
  $('#regret-caption').textContent = `Simple regret (best so far − ${fmt(history.known_optimum)})${log ? ', log scale' : ''}`;
  plot(svg, [{ points: pts, line: true, step: true, dots: true, cls: 'regret' }], { log, xLabel: 'evaluation', yLabel: 'regret' });
}

function renderDistribution(study, history) {
  const box = $('#dist-plots');
  box.replaceChildren();
  const gens = history.generations;
  study.parameters.forEach((p, i) => {
    const log = p.scale === 'log';
    // Mean is in user units, std in the parameter's transformed scale (ln for log parameters).
    const m = gens.map((g) => [g.generation, log ? Math.log(g.mean[p.name]) : g.mean[p.name]]);
    const band = gens.map((g, j) => [g.generation, m[j][1] - g.std[i], m[j][1] + g.std[i]]);
    const fig = document.createElement('figure');
    fig.appendChild(Object.assign(document.createElement('figcaption'), { textContent: log ? `ln(${p.name})` : p.name }));
    const svg = el('svg', { class: 'plot small', 'data-parameter': p.name });
    fig.appendChild(svg);
    box.appendChild(fig);
    plot(svg, [{ points: m, band, line: true, dots: true, cls: 'mean' }], { xLabel: 'generation', yLabel: log ? `ln ${p.name}` : p.name, size: [420, 240] });
  });
}

function renderTrials(study, trials) {
  const body = $('#trials tbody');
  body.replaceChildren();
  const newest = trials.slice(-MAX_ROWS).reverse();
  for (const t of newest) {
    const tr = document.createElement('tr');
    cell(tr, String(t.trial_id), 'num');
    cell(tr, t.state, `badge ${t.state}`);
    cell(tr, String(t.generation), 'num');
    cell(tr, t.client_id ?? '');
    cell(tr, t.state === 'FAILED' ? (t.failure_reason ?? '') : fmt(t.value), 'num');
    cell(tr, paramsText(t.parameters), 'params');
    cell(tr, t.completed_at ? new Date(t.completed_at).toLocaleTimeString() : '');
    body.appendChild(tr);
  }
  body.parentElement.dataset.rows = String(newest.length);
  $('#trials-note').textContent = trials.length > MAX_ROWS ? `Newest ${MAX_ROWS} of ${trials.length} trials; the CSV has all of them.` : `${trials.length} trials, newest first.`;
}

function csv(study, trials) {
  const names = study.parameters.map((p) => p.name);
  const q = (v) => (v === null || v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v));
  const head = ['trial_id', 'state', 'generation', 'client_id', 'source', 'value', 'stderr', ...names, 'failure_reason', 'created_at', 'completed_at'];
  const rows = trials.map((t) => [t.trial_id, t.state, t.generation, t.client_id, t.source, t.value, t.stderr, ...names.map((n) => t.parameters[n]), t.failure_reason, t.created_at, t.completed_at]);
  return [head, ...rows].map((r) => r.map(q).join(',')).join('\n') + '\n';
}

async function studyPage() {
  const id = decodeURIComponent(location.pathname.split('/').pop());
  let timer = null;
  let latest = null;
  const load = async () => {
    clearTimeout(timer);
    try {
      const base = `/v1/studies/${encodeURIComponent(id)}`;
      const [study, history, best, trials] = await Promise.all([api(base), api(`${base}/history`), api(`${base}/best`), all(`${base}/trials`, 'trials')]);
      latest = { study, trials };
      renderSummary(study, best);
      renderCurves(history);
      renderDistribution(study, history);
      renderTrials(study, trials);
      const live = study.state === 'ACTIVE';
      status(`Updated ${new Date().toLocaleTimeString()}${live ? ` · refreshing every ${REFRESH_MS / 1000} s while ACTIVE` : ''}`);
      document.body.dataset.loaded = 'true';
      if (live) timer = setTimeout(load, REFRESH_MS);
    } catch (err) {
      showError(err);
      // A transient failure of an ACTIVE study's refresh should not stop the refreshing.
      if (latest?.study.state === 'ACTIVE') timer = setTimeout(load, REFRESH_MS);
    }
  };
  $('#csv').addEventListener('click', () => {
    if (!latest) return;
    const url = URL.createObjectURL(new Blob([csv(latest.study, latest.trials)], { type: 'text/csv' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: `${latest.study.name || id}-trials.csv` });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  setupKeyForm(load);
  await load();
}

if (document.body.dataset.page === 'study') void studyPage();
else void studiesPage();
