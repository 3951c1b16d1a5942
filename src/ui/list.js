// /ui: the list of studies, with an idle badge for ACTIVE studies without max_trials that have had
// no activity for the configured minutes, and check boxes to overlay several studies' curves.
import { $, all, duration, h, idleFor, setupKeyForm, showError, status } from './api.js';

export async function studiesPage() {
  const chosen = new Set();
  const compare = $('#compare');
  const sync = () => {
    compare.disabled = chosen.size < 1;
    compare.textContent = `Compare selected (${chosen.size})`;
  };
  compare.addEventListener('click', () => (location.href = `/ui/compare?ids=${[...chosen].map(encodeURIComponent).join(',')}`));
  const load = async () => {
    try {
      const studies = await all('/v1/studies', 'studies', 100);
      $('#studies tbody').replaceChildren(...studies.map((s) => {
        const idle = idleFor(s);
        const box = h('input', { type: 'checkbox', 'aria-label': `select ${s.name}`, checked: chosen.has(s.id), 'data-id': s.id });
        box.addEventListener('change', () => {
          if (box.checked) chosen.add(s.id);
          else chosen.delete(s.id);
          sync();
        });
        return h('tr', {},
          h('td', {}, box),
          h('td', {}, h('a', { href: `/ui/studies/${encodeURIComponent(s.id)}` }, s.name)),
          h('td', {}, s.method),
          h('td', { class: `badge ${idle ? 'IDLE' : s.state}`, title: idle ? `ACTIVE, no activity for ${duration(idle)}` : '' }, idle ? 'IDLE' : s.state),
          h('td', { class: 'num' }, String(s.generation)),
          h('td', { class: 'num' }, `${s.trial_counts.COMPLETED}${s.max_trials ? ` / ${s.max_trials}` : ''}`),
          h('td', { class: 'num' }, String(s.trial_counts.ACTIVE)),
          h('td', {}, new Date(s.updated_at).toLocaleString()),
        );
      }));
      sync();
      status(studies.length === 0 ? 'No studies yet: create one with POST /v1/studies.' : `${studies.length} stud${studies.length === 1 ? 'y' : 'ies'}`);
      document.body.dataset.loaded = 'true';
    } catch (err) {
      showError(err);
    }
  };
  setupKeyForm(load);
  await load();
}
