// The trial table: sort by any column (click its header), filter by state or feasibility, search by
// parameter range (min/max per numeric parameter, a choice per categorical one), 100 rows a page so
// that a study of 5,000 trials stays responsive. The table records the number of matching trials in
// data-rows (tests read it).
//
// A study of several objectives has one column per objective (named, with its direction), a study
// with constraints one per constraint and a feasibility column; a trial that is not feasible (the
// server's `feasible`: reported infeasible, or a constraint above 0) is marked on its row. Values sort
// by their loss, never by reading the direction.
import { conditionText, fmt, h, objectiveLabel, objectivesOf } from './api.js';

const PAGE = 100;
const STATES = ['REQUESTED', 'ACTIVE', 'COMPLETED', 'FAILED', 'ABANDONED'];
/** The state filter's value for trials stopped early (COMPLETED ones; COMPLETED still lists them too). */
const STOPPED = 'stopped';
/** The state filter's values for trials with a result that is, or is not, feasible. */
const FEASIBLE = 'feasible', NOT_FEASIBLE = 'not-feasible';

/** The feasibility cell's text: feasible, infeasible (reported so), or which constraints are above 0. */
export function feasibilityText(study, t) {
  if (t.feasible === null || t.feasible === undefined) return '';
  if (t.feasible) return 'feasible';
  if (t.infeasible) return 'infeasible';
  const over = (study.constraints ?? []).filter((_, k) => t.constraints?.[k] > 0).map((c) => c.name);
  return over.length ? `violates ${over.join(', ')}` : 'not feasible';
}

export class TrialTable {
  constructor(root, study) {
    this.root = root;
    this.study = study;
    this.trials = [];
    this.sort = { key: 'trial_id', dir: -1 };
    this.page = 0;
    this.filters = {};
    this.build();
  }

  build() {
    const params = this.study.parameters;
    this.stateSel = h('select', { id: 'state-filter', 'aria-label': 'filter by state' }, h('option', { value: '' }, 'all states'), ...STATES.map((s) => h('option', { value: s }, s)), h('option', { value: STOPPED }, 'stopped early'), h('option', { value: FEASIBLE }, 'feasible'), h('option', { value: NOT_FEASIBLE }, 'not feasible'));
    this.stateSel.addEventListener('change', () => this.update(0));
    const ranges = params.map((p) => {
      if (p.type === 'categorical') {
        const sel = h('select', { 'data-param': p.name, 'aria-label': `${p.name} choice` }, h('option', { value: '' }, 'any'), ...p.choices.map((c, i) => h('option', { value: String(i) }, String(c))));
        sel.addEventListener('change', () => {
          this.filters[p.name] = sel.value === '' ? null : { choice: p.choices[Number(sel.value)] };
          this.update(0);
        });
        return h('label', { class: 'range' }, `${p.name} `, sel);
      }
      const lo = h('input', { type: 'number', step: 'any', placeholder: 'min', 'data-param': p.name, 'data-bound': 'min', 'aria-label': `${p.name} minimum` });
      const hi = h('input', { type: 'number', step: 'any', placeholder: 'max', 'data-param': p.name, 'data-bound': 'max', 'aria-label': `${p.name} maximum` });
      const set = () => {
        const a = lo.value === '' ? -Infinity : Number(lo.value), b = hi.value === '' ? Infinity : Number(hi.value);
        this.filters[p.name] = a === -Infinity && b === Infinity ? null : { min: a, max: b };
        this.update(0);
      };
      lo.addEventListener('input', set);
      hi.addEventListener('input', set);
      return h('label', { class: 'range' }, `${p.name} `, lo, ' – ', hi);
    });
    this.note = h('span', { class: 'note', id: 'trials-note' });
    this.prev = h('button', { type: 'button', id: 'page-prev' }, '‹ newer');
    this.next = h('button', { type: 'button', id: 'page-next' }, 'older ›');
    this.prev.addEventListener('click', () => this.update(this.page - 1));
    this.next.addEventListener('click', () => this.update(this.page + 1));
    const objectives = objectivesOf(this.study);
    const constraints = this.study.constraints ?? [];
    this.multi = objectives.length > 1;
    this.feasibility = this.multi || constraints.length > 0;
    const valueCols = this.multi ? objectives.map((o, i) => [`o:${i}`, objectiveLabel(o)]) : [['value', 'Value']];
    const cols = [['trial_id', '#'], ['state', 'State'], ['generation', 'Gen'], ['client_id', 'Client'], ...valueCols, ...constraints.map((c, k) => [`c:${k}`, c.name]), ...(this.feasibility ? [['feasible', 'Feasible']] : []), ...params.map((p) => [`p:${p.name}`, p.name]), ['completed_at', 'Completed']];
    this.head = h('tr', {}, ...cols.map(([key, label]) => {
      const th = h('th', { 'data-key': key, class: 'sortable', tabindex: '0', 'aria-sort': 'none' }, label);
      const go = () => {
        this.sort = { key, dir: this.sort.key === key ? -this.sort.dir : 1 };
        this.update(0);
      };
      th.addEventListener('click', go);
      th.addEventListener('keydown', (e) => e.key === 'Enter' && go());
      return th;
    }));
    this.body = h('tbody');
    this.table = h('table', { id: 'trials', class: 'grid' }, h('thead', {}, this.head), this.body);
    this.root.replaceChildren(h('div', { class: 'filters' }, this.stateSel, ...ranges), h('div', { class: 'pager' }, this.note, this.prev, this.next), h('div', { class: 'table-scroll' }, this.table));
  }

  setTrials(trials) {
    this.trials = trials;
    this.update(this.page);
  }

  matching() {
    const state = this.stateSel.value;
    return this.trials.filter((t) => {
      if (state === STOPPED ? !t.stopped : state === FEASIBLE ? t.feasible !== true : state === NOT_FEASIBLE ? t.feasible !== false : state && t.state !== state) return false;
      for (const [name, f] of Object.entries(this.filters)) {
        if (!f) continue;
        const v = t.parameters[name];
        if ('choice' in f ? v !== f.choice : !(v >= f.min && v <= f.max)) return false;
      }
      return true;
    });
  }

  update(page) {
    const rows = this.matching();
    const { key, dir } = this.sort;
    // Values sort by their loss (the API's value oriented so that lower is better): best first.
    // Feasible rows first on an ascending sort.
    const get = key.startsWith('p:') ? (t) => t.parameters[key.slice(2)]
      : key === 'value' ? (t) => t.loss
      : key.startsWith('o:') ? (t) => t.losses?.[Number(key.slice(2))]
      : key.startsWith('c:') ? (t) => t.constraints?.[Number(key.slice(2))]
      : key === 'feasible' ? (t) => (t.feasible === null || t.feasible === undefined ? null : t.feasible ? 0 : 1)
      : (t) => t[key];
    rows.sort((a, b) => {
      const x = get(a), y = get(b);
      if (x === y) return a.trial_id - b.trial_id;
      if (x === null || x === undefined) return 1; // missing values last, whatever the direction
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * dir;
    });
    const pages = Math.max(Math.ceil(rows.length / PAGE), 1);
    this.page = Math.min(Math.max(page, 0), pages - 1);
    const shown = rows.slice(this.page * PAGE, (this.page + 1) * PAGE);
    const constraints = this.study.constraints ?? [];
    const objectives = objectivesOf(this.study);
    // A FAILED trial's value cell holds its reason; a trial reported infeasible has no value: the cell says so.
    const valueText = (t, v) => (t.state === 'FAILED' ? (t.failure_reason ?? '') : t.infeasible ? 'infeasible' : fmt(v));
    const notFeasible = (t) => t.feasible === false;
    this.body.replaceChildren(...shown.map((t) => h('tr', { 'data-trial': t.trial_id, 'data-feasible': t.feasible === null || t.feasible === undefined ? null : String(t.feasible), class: notFeasible(t) ? 'infeasible' : null },
      h('td', { class: 'num' }, String(t.trial_id)),
      // A trial stopped early is COMPLETED with its last intermediate value: the column says "stopped".
      t.stopped ? h('td', { class: 'badge STOPPED', title: 'COMPLETED: stopped early; its value is its last intermediate value' }, 'stopped') : h('td', { class: `badge ${t.state}` }, t.state),
      h('td', { class: 'num' }, String(t.generation)),
      h('td', {}, t.client_id ?? ''),
      ...(this.multi ? objectives.map((_, i) => h('td', { class: 'num' }, valueText(t, t.values?.[i]))) : [h('td', { class: 'num' }, valueText(t, t.value))]),
      ...constraints.map((_, k) => h('td', { class: `num${t.constraints?.[k] > 0 ? ' feas-no' : ''}` }, fmt(t.constraints?.[k]))),
      ...(this.feasibility ? [h('td', { class: t.feasible === true ? 'feas-yes' : notFeasible(t) ? 'feas-no' : '', 'data-feasibility': '' }, feasibilityText(this.study, t))] : []),
      // A conditional parameter the trial did not have (its condition did not hold): "—", not a value.
      ...this.study.parameters.map((p) => (p.name in t.parameters ? h('td', { class: 'num' }, fmt(t.parameters[p.name])) : h('td', { class: 'num inactive', title: `inactive: ${p.name}, ${conditionText(p)}` }, '—'))),
      h('td', {}, t.completed_at ? new Date(t.completed_at).toLocaleString() : ''),
    )));
    const order = key === 'value' ? valuesOrder(rows, dir, (t) => t.value) : key.startsWith('o:') ? valuesOrder(rows, dir, (t) => t.values?.[Number(key.slice(2))]) : dir > 0 ? 'ascending' : 'descending';
    for (const th of this.head.children) th.setAttribute('aria-sort', th.dataset.key === key ? order : 'none');
    this.table.dataset.rows = String(rows.length);
    this.note.textContent = `${rows.length} of ${this.trials.length} trials · page ${this.page + 1} of ${pages}`;
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
  }
}

/**
 * How a value column's values read in rows sorted by loss: ascending or descending (a study that
 * maximises shows its values largest first). Taken from the first two values that differ; without
 * any, from the sort's own direction.
 */
function valuesOrder(rows, dir, valueOf) {
  let prev = null;
  for (const t of rows) {
    const v = valueOf(t);
    if (v === null || v === undefined) continue;
    if (prev !== null && v !== prev) return v > prev ? 'ascending' : 'descending';
    prev = v;
  }
  return dir > 0 ? 'ascending' : 'descending';
}

/**
 * One CSV cell. Text that starts with = + - @, a tab or a carriage return is a formula to a
 * spreadsheet (a categorical choice "=1+2", a failure reason "=HYPERLINK(…)", a client id "@x"):
 * OWASP's rule for CSV injection is to prefix it with a single quote and quote the cell, so that
 * it shows as the text it is. Numbers are written as they are (a negative number is no formula).
 */
export function csvCell(v) {
  if (v === null || v === undefined) return '';
  const text = String(v);
  if (typeof v !== 'number' && /^[=+\-@\t\r]/.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The trials as CSV. After the parameters: with several objectives one column per objective
 * (`value:<name>`), one per constraint (`constraint:<name>`), then `feasible` (the server's: true,
 * false, or empty without a result) and `infeasible` (reported so).
 */
export function csv(study, trials) {
  const names = study.parameters.map((p) => p.name);
  const objectives = objectivesOf(study);
  const multi = objectives.length > 1;
  const constraints = study.constraints ?? [];
  const q = csvCell;
  const head = ['trial_id', 'state', 'generation', 'client_id', 'source', 'value', 'stderr', ...names, ...(multi ? objectives.map((o) => `value:${o.name}`) : []), ...constraints.map((c) => `constraint:${c.name}`), 'feasible', 'infeasible', 'failure_reason', 'created_at', 'completed_at'];
  const rows = trials.map((t) => [
    t.trial_id, t.state, t.generation, t.client_id, t.source, t.value, t.stderr,
    ...names.map((n) => t.parameters[n]),
    ...(multi ? objectives.map((_, i) => t.values?.[i]) : []),
    ...constraints.map((_, k) => t.constraints?.[k]),
    t.feasible, t.infeasible ? true : t.feasible === null || t.feasible === undefined ? null : false,
    t.failure_reason, t.created_at, t.completed_at,
  ]);
  return [head, ...rows].map((r) => r.map(q).join(',')).join('\n') + '\n';
}

export function downloadCsv(study, trials) {
  const url = URL.createObjectURL(new Blob([csv(study, trials)], { type: 'text/csv' }));
  const a = h('a', { href: url, download: `${study.name || study.id}-trials.csv` });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

