/**
 * The GP kernel on a mixed space: the ARD RBF kernel on the continuous coordinates times an overlap
 * (Hamming-type) kernel per categorical parameter (ALGORITHM.md §27).
 *
 * Glossary: a mixed point x = [u, c] with u (d_c) continuous and c (m) choice indices, c_j ∈
 * {0 … K_j − 1}. Its GP input is φ(x) = [u, e_{c_1}, …, e_{c_m}] (the one-hot encodings appended:
 * d_c + Σ K_j columns), and the kernel is the ordinary ARD RBF kernel of gp/kernel.ts on φ:
 *
 *   k(x, x') = s·exp(−½ (u − u')ᵀ Λ⁻¹ (u − u')) · Π_j κ_j(c_j, c'_j),
 *   κ_j(a, b) = 1 if a = b,  exp(−½ (w_{j,a} + w_{j,b})) otherwise,   w_{j,a} = 1/ℓ²_{j,a}
 *
 * since ‖e_a − e_b‖² weighted by 1/ℓ² is w_a + w_b for a ≠ b and 0 for a = b. κ_j is the overlap
 * kernel with a weight per choice; with equal weights w it is the exponentiated Hamming kernel
 * exp(−w·1[a ≠ b]). Being an RBF kernel on an embedding it is positive definite, and the whole GP
 * machinery (MAP fit, prediction, posterior gradients in u) applies unchanged to φ(x).
 *
 * Under a categorical distribution q_j its means are finite sums (what keeps BQ closed form):
 *   τ_j(b) = Σ_a q_{j,a} κ_j(a, b),        ρ_j = Σ_a Σ_b q_{j,a} q_{j,b} κ_j(a, b).
 */

/** The one-hot part of φ for the categorical coordinates `c` (K_j columns each). */
export function oneHot(c: ArrayLike<number>, K: readonly number[]): number[] {
  const out: number[] = [];
  K.forEach((k, j) => {
    for (let a = 0; a < k; a++) out.push(a === c[j] ? 1 : 0);
  });
  return out;
}

/** φ(x) for a mixed point x = [u (dc), c (K.length)]. */
export function encodeMixed(x: ArrayLike<number>, dc: number, K: readonly number[]): number[] {
  const u = Array.from({ length: dc }, (_, i) => x[i]!);
  return [...u, ...oneHot(Array.from({ length: K.length }, (_, j) => x[dc + j]!), K)];
}

/** Column offset of parameter j's one-hot block inside φ (after the dc continuous columns). */
export function blockOffsets(dc: number, K: readonly number[]): number[] {
  const out: number[] = [];
  let o = dc;
  for (const k of K) {
    out.push(o);
    o += k;
  }
  return out;
}

/** κ_j(a, b) from the weights w_j (K_j) = 1/ℓ² of parameter j's one-hot columns. */
export function overlapKernel(w: ArrayLike<number>, a: number, b: number): number {
  return a === b ? 1 : Math.exp(-0.5 * (w[a]! + w[b]!));
}

/** τ_j(b) = Σ_a q_a κ_j(a, b): the kernel mean of one categorical factor. */
export function overlapKernelMean(w: ArrayLike<number>, q: ArrayLike<number>, b: number): number {
  let s = 0;
  for (let a = 0; a < q.length; a++) s += q[a]! * overlapKernel(w, a, b);
  return s;
}

/** ρ_j = Σ_a Σ_b q_a q_b κ_j(a, b): the double kernel mean of one categorical factor. */
export function overlapDoubleMean(w: ArrayLike<number>, q: ArrayLike<number>): number {
  let s = 0;
  for (let b = 0; b < q.length; b++) s += q[b]! * overlapKernelMean(w, q, b);
  return s;
}

/** w_j = 1/ℓ² of each categorical parameter's block of lengthscales (φ's layout). */
export function blockWeights(lengthscales: ArrayLike<number>, dc: number, K: readonly number[]): Float64Array[] {
  return blockOffsets(dc, K).map((o, j) => Float64Array.from({ length: K[j]! }, (_, a) => 1 / (lengthscales[o + a]! * lengthscales[o + a]!)));
}
