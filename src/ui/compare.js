// /ui/compare?ids=a,b,c: the best-so-far curves (or simple regret, when every study has a known
// optimum) of several studies on one chart, against the number of evaluations.
import { $, all, api, fmt, h, history, setupKeyForm, showError, status } from './api.js';
import { chart, COLORS, lineSeries, scaleOpts, scaleToggle, xAxis, yAxis } from './charts.js';

export async function comparePage() {
  const params = new URLSearchParams(location.search);
  let ids = (params.get('ids') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  let scale = 'linear';
  /** Every study asked for, with its history. */
  let loaded = [];

  const draw = () => {
    const root = $('#plot-compare');
    // A study of several objectives has no best so far (its /history lists no evaluations): it is named, not drawn.
    const several = loaded.filter((d) => (d.study.objectives?.length ?? 1) > 1);
    $('#compare-note').textContent = several.length ? `Several objectives, no single best so far, not drawn: ${several.map((d) => d.study.name).join(', ')} (each study's page has its hypervolume).` : '';
    const data = loaded.filter((d) => !several.includes(d));
    if (data.length === 0) {
      root.__chart?.destroy();
      root.__chart = null;
      root.replaceChildren(h('p', { class: 'empty' }, 'choose studies below'));
      root.dataset.series = '0';
      return;
    }
    const regret = data.every((d) => d.hist.known_optimum !== null);
    const n = Math.max(...data.map((d) => d.hist.evaluations.length), 1);
    const xs = Array.from({ length: n }, (_, i) => i + 1);
    const ys = data.map((d) => xs.map((_, i) => {
      const e = d.hist.evaluations[i];
      return e ? (regret ? e.regret : e.best_so_far) : null;
    }));
    const flat = ys.flat().filter((v) => v !== null);
    const positive = flat.filter((v) => v > 0);
    const kind = scale === 'linear' ? 'linear' : regret || flat.every((v) => v > 0) ? 'log' : 'asinh';
    const floor = positive.length ? Math.min(...positive) / 10 : 1e-12;
    const drawn = kind === 'log' ? ys.map((s) => s.map((v) => (v === null ? null : Math.max(v, floor)))) : ys;
    $('#compare-caption').textContent = regret ? 'Simple regret of the best so far (every study has known_optimum)' : 'Best value so far';
    $('#compare-scale').replaceChildren(scaleToggle('compare-scale', ['linear', 'log'], scale, (k) => {
      scale = k;
      draw();
    }));
    chart(root, {
      height: 380,
      legend: true,
      data: [xs, ...drawn],
      xLabel: 'evaluation',
      series: data.map((d, i) => ({ ...lineSeries(`${d.study.name} (${d.study.method})`, COLORS[i % COLORS.length]), paths: globalThis.uPlot.paths.stepped({ align: 1 }) })),
      scales: { y: scaleOpts(kind, flat) },
      axes: [xAxis('evaluation', 'count'), yAxis(kind, regret ? 'regret' : 'best so far')],
      tooltip: (i) => [`evaluation ${i + 1}`, ...data.map((d, k) => `${d.study.name}: ${fmt(ys[k][i])}`)],
      points: flat.length,
    });
    root.dataset.series = String(data.length);
    root.dataset.scale = kind;
  };

  const load = async () => {
    try {
      const studies = await all('/v1/studies', 'studies', 100);
      const picker = $('#compare-pick');
      picker.replaceChildren(...studies.map((s) => {
        const box = h('input', { type: 'checkbox', checked: ids.includes(s.id), 'data-id': s.id });
        box.addEventListener('change', () => {
          ids = box.checked ? [...ids, s.id] : ids.filter((x) => x !== s.id);
          globalThis.history.replaceState(null, '', `/ui/compare?ids=${ids.map(encodeURIComponent).join(',')}`);
          void load();
        });
        return h('label', { class: 'pick' }, box, ` ${s.name} `, h('small', {}, s.method));
      }));
      loaded = await Promise.all(ids.map(async (id) => ({ study: await api(`/v1/studies/${encodeURIComponent(id)}`), hist: await history(id) })));
      draw();
      status(`${loaded.length} stud${loaded.length === 1 ? 'y' : 'ies'} compared`);
      document.body.dataset.loaded = 'true';
    } catch (err) {
      showError(err);
    }
  };
  setupKeyForm(load);
  await load();
}
