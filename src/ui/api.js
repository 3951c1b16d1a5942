// What every dashboard page shares: calls to the public /v1 API with the API key the user pasted
// (kept in localStorage), number formatting, the status line and the key form. Plain ES modules,
// no inline scripts, so the page's strict Content-Security-Policy holds.
const KEY = 'probnes_api_key';
export const $ = (sel, root = document) => root.querySelector(sel);

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
  }
}

export async function api(path, init = {}) {
  const key = localStorage.getItem(KEY);
  const headers = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(path, { ...init, headers });
  const body = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

/** Every item of a paginated list route. */
export async function all(path, field, pageSize = 1000) {
  const items = [];
  let token = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(`${path}${sep}page_size=${pageSize}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    items.push(...page[field]);
    token = page.next_page_token;
  } while (token);
  return items;
}

/** The whole /history: its pages merged (evaluations and generations arrive in separate page runs). */
export async function history(studyId) {
  const out = { known_optimum: null, evaluations: [], generations: [] };
  let token = null;
  do {
    const page = await api(`/v1/studies/${encodeURIComponent(studyId)}/history?page_size=10000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    out.known_optimum = page.known_optimum;
    out.evaluations.push(...page.evaluations);
    out.generations.push(...page.generations);
    token = page.next_page_token ?? null;
  } while (token);
  return out;
}

/**
 * The Pareto front (GET …/front, every page): its trials, reference point, hypervolume and counts.
 * The front is the server's (feasible, non-dominated on the losses): the dashboard never works out
 * from directions which trial is better.
 */
export async function front(studyId) {
  let out = null;
  let token = null;
  do {
    const page = await api(`/v1/studies/${encodeURIComponent(studyId)}/front?page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    if (out) out.trials.push(...page.trials);
    else out = { ...page, trials: [...page.trials] };
    token = page.next_page_token ?? null;
  } while (token);
  return out;
}

/** The hypervolume after each result (GET …/front/history, every page), against one reference point. */
export async function frontHistory(studyId) {
  const out = { reference_point: null, points: [] };
  let token = null;
  do {
    const page = await api(`/v1/studies/${encodeURIComponent(studyId)}/front/history?page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    out.reference_point = page.reference_point;
    out.points.push(...page.points);
    token = page.next_page_token ?? null;
  } while (token);
  return out;
}

/** The study's objectives: its `objectives`, or for a study resource from before them, one named "value" in `direction`. */
export const objectivesOf = (study) => (study.objectives?.length ? study.objectives : [{ name: 'value', direction: study.direction ?? 'minimize' }]);

/** An objective's axis or column label: its name and direction (which way is better is the user's to read; the dashboard ranks by losses). */
export const objectiveLabel = (o) => `${o.name} (${o.direction})`;

export function fmt(v) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

export const paramsText = (p) => Object.entries(p ?? {}).map(([k, v]) => `${k}=${fmt(v)}`).join(', ');

/**
 * A choice as a condition names it: a number or boolean as itself, a string bare unless it would read as
 * something else (a number, a boolean, empty, padded, or holding the list's own punctuation), then quoted.
 */
export function choiceText(v) {
  if (typeof v !== 'string') return String(v);
  const ambiguous = v === '' || v.trim() !== v || /[,{}"]/.test(v) || v === 'true' || v === 'false' || Number.isFinite(Number(v));
  return ambiguous ? JSON.stringify(v) : v;
}

/** A conditional parameter's condition (docs/conditional.md) as text, e.g. "only when kernel ∈ {rbf}"; '' without one. */
export function conditionText(p) {
  const c = p.condition;
  if (!c) return '';
  return `only when ${c.parent} ∈ {${c.values.map(choiceText).join(', ')}}`;
}

/**
 * One parameter of the study resource as a line of text: its type, scale, bounds and step (a
 * stepped parameter takes only the values low + k·step; an int's step 1 is the default and goes
 * unsaid), or a categorical one's number of choices; then, for a conditional parameter, when it
 * is active (its parent's condition is on the parent's own line). Bounds and step are printed
 * exactly, not rounded like values: they define the grid. Plain text: the page inserts it as a
 * text node, never as markup.
 */
export function parameterText(p) {
  const cond = conditionText(p);
  const tail = cond ? `, ${cond}` : '';
  if (p.type === 'categorical') return `${p.name}: categorical, ${p.choices.length} choice${p.choices.length === 1 ? '' : 's'}${tail}`;
  const parts = [p.type];
  if (p.scale === 'log') parts.push('log');
  if (p.bounds) parts.push(`[${p.bounds[0]}, ${p.bounds[1]}]`);
  if (p.step !== null && p.step !== undefined && !(p.type === 'int' && p.step === 1)) parts.push(`step ${p.step}`);
  return `${p.name}: ${parts.join(' ')}${tail}`;
}

export function status(text, isError = false) {
  const p = $('#status');
  p.textContent = text;
  p.classList.toggle('error', isError);
}

export function showError(err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    status(`${err.message} — paste an API key above.`, true);
    $('#api-key').focus();
  } else {
    status(`Could not load: ${err.message}`, true);
    // A fault of the page itself (not an answer of the API) also goes to the console, with its stack.
    if (!(err instanceof ApiError)) console.error(err);
  }
}

export function setupKeyForm(reload) {
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

/** An element with attributes and children (text or nodes). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'class') node.className = v;
    else if (k in node && typeof v !== 'string') node[k] = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

// ---- idle studies: ACTIVE, no max_trials, no commit (suggestion, result) for a while ----
const IDLE_KEY = 'probnes_idle_minutes';
export const DEFAULT_IDLE_MINUTES = 10;

/** Minutes without activity after which a study without max_trials counts as idle: ?idle_minutes=, else the saved setting. */
export function idleMinutes() {
  const q = Number(new URLSearchParams(location.search).get('idle_minutes'));
  if (Number.isFinite(q) && q > 0) return q;
  const saved = Number(localStorage.getItem(IDLE_KEY));
  return Number.isFinite(saved) && saved > 0 ? saved : DEFAULT_IDLE_MINUTES;
}

export function saveIdleMinutes(m) {
  localStorage.setItem(IDLE_KEY, String(m));
}

/** Milliseconds the study has been idle, or 0 when it is not idle (finished, paused, bounded, or recently active). */
export function idleFor(study, now = Date.now()) {
  if (study.state !== 'ACTIVE' || study.max_trials !== null) return 0;
  const quiet = now - Date.parse(study.updated_at);
  return quiet >= idleMinutes() * 60_000 ? quiet : 0;
}

export function duration(ms) {
  const m = Math.round(ms / 60_000);
  return m < 90 ? `${m} min` : m < 48 * 60 ? `${(m / 60).toFixed(1)} h` : `${(m / 1440).toFixed(1)} days`;
}
