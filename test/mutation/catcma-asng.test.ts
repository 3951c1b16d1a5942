/**
 * One categorical update of CatCMA (src/engine/strategies/catcma.ts catUpdate) worked out by hand,
 * with every quantity of the ASNG step-size adaptation checked, not only the Fisher length of the
 * step (test/engine/catcma.test.ts): a dropped (1 − β), a wrong √(β(2 − β)) or α would otherwise go
 * unseen, since q moves the same.
 *
 * One parameter, K = 3, q = (0.5, 0.3, 0.2); λ = 4 points ranked best first with choices 1, 0, 2, 2.
 * - weights (Hamano et al., GECCO 2024): μ = 2, w' = (ln 2.5, ln 2.5 − ln 2, 0, 0) = (0.916291, 0.223144)
 *   normalised: w = (0.804163, 0.195837, 0, 0);
 * - natural gradient ĝ = Σ w_i e_{c_i} − q = (0.195837, 0.804163, 0) − q = (−0.304163, 0.504163, −0.2);
 * - √F ĝ over θ = (q_1, q_2) (Akimoto et al., ICML 2019, Appendix B): h = ĝ_1 + ĝ_2 = 0.2,
 *   (√F ĝ)_a = ĝ_a/√q_a + √q_a·h/(q_K + √q_K) = (−0.211642, 1.089727); its norm² 1.232297 equals
 *   Σ_a ĝ_a²/q_a over all three entries (the Fisher norm written directly), so ‖ĝ‖_F = 1.110089;
 * - from Δ = 4: δ = 1/4, ε = δ/‖ĝ‖_F = 0.225207, q' = q + εĝ = (0.431500, 0.413541, 0.154959) (above the
 *   margin floor 0.27/2 = 0.135);
 * - ASNG (same paper, α = 1.5): β = δ/√2 = 0.176777; from s = (0.2, −0.1), γ = 0.1:
 *   s' = (1 − β)s + √(β(2 − β)) √F ĝ/‖ĝ‖_F = (0.056407, 0.474982),
 *   γ' = (1 − β)²γ + β(2 − β) = 0.390073, Δ' = Δ·exp(β(γ' − ‖s'‖²/α)) = 4.171548.
 */
import { describe, expect, it } from 'vitest';
import { catUpdate } from '../../src/engine/strategies/catcma.js';

describe('catUpdate, one step by hand', () => {
  it('moves q by εĝ and updates s, γ and Δ as ASNG says', () => {
    const out = catUpdate([[0.5, 0.3, 0.2]], { Delta: 4, gamma: 0.1, s: [0.2, -0.1] }, [[1], [0], [2], [2]]);
    const q = out.q[0]!;
    expect(q[0]).toBeCloseTo(0.4315, 5);
    expect(q[1]).toBeCloseTo(0.413541, 5);
    expect(q[2]).toBeCloseTo(0.154959, 5);
    expect(out.asng.s[0]).toBeCloseTo(0.056407, 5);
    expect(out.asng.s[1]).toBeCloseTo(0.474982, 5);
    expect(out.asng.gamma).toBeCloseTo(0.390073, 5);
    expect(out.asng.Delta).toBeCloseTo(4.171548, 5);
  });
});
