/**
 * A plain Nelder–Mead simplex minimiser (standard coefficients 1, 2, ½, ½), used only to compute
 * reference optima of tasks whose f* has no closed form (the GP marginal-likelihood task) and to
 * re-derive published optima in tests. Derivative-free on purpose: it checks the objective alone.
 */
export interface NelderMeadResult {
  x: number[];
  f: number;
  iterations: number;
}

export function nelderMead(
  f: (x: number[]) => number,
  x0: readonly number[],
  opts: { step?: number; maxIter?: number; ftol?: number; xtol?: number } = {},
): NelderMeadResult {
  const d = x0.length;
  const step = opts.step ?? 0.5;
  const maxIter = opts.maxIter ?? 5000 * d;
  const ftol = opts.ftol ?? 1e-14;
  const xtol = opts.xtol ?? 1e-12;
  const simplex: { x: number[]; f: number }[] = [{ x: [...x0], f: f([...x0]) }];
  for (let i = 0; i < d; i++) {
    const x = [...x0];
    x[i] += step;
    simplex.push({ x, f: f(x) });
  }
  const lerp = (a: number[], b: number[], t: number): number[] => a.map((v, k) => v + t * (b[k] - v));
  let it = 0;
  for (; it < maxIter; it++) {
    simplex.sort((a, b) => a.f - b.f);
    const best = simplex[0], worst = simplex[d];
    const spread = Math.max(...simplex.map((p) => Math.max(...p.x.map((v, k) => Math.abs(v - best.x[k])))));
    if (worst.f - best.f <= ftol * (Math.abs(best.f) + 1e-300) && spread <= xtol) break;
    const centroid = Array(d).fill(0);
    for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) centroid[k] += simplex[i].x[k] / d;
    const xr = lerp(centroid, worst.x, -1); // reflection through the centroid
    const fr = f(xr);
    if (fr < best.f) {
      const xe = lerp(centroid, worst.x, -2);
      const fe = f(xe);
      simplex[d] = fe < fr ? { x: xe, f: fe } : { x: xr, f: fr };
    } else if (fr < simplex[d - 1].f) {
      simplex[d] = { x: xr, f: fr };
    } else {
      const outside = fr < worst.f;
      const xc = outside ? lerp(centroid, xr, 0.5) : lerp(centroid, worst.x, 0.5);
      const fc = f(xc);
      if (fc < Math.min(fr, worst.f)) simplex[d] = { x: xc, f: fc };
      else {
        // Shrink towards the best vertex.
        for (let i = 1; i <= d; i++) {
          const x = lerp(best.x, simplex[i].x, 0.5);
          simplex[i] = { x, f: f(x) };
        }
      }
    }
  }
  simplex.sort((a, b) => a.f - b.f);
  return { x: simplex[0].x, f: simplex[0].f, iterations: it };
}
