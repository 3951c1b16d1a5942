/**
 * ε-support-vector regression with an RBF kernel, k(x, x') = exp(−γ‖x − x'‖²), trained and evaluated
 * by libsvm itself (the libsvm-js package: libsvm compiled to WebAssembly), the same solver scikit-learn's
 * SVR wraps. The prediction is libsvm's decision function f(x) = Σ_i α_i k(s_i, x) − ρ over the support
 * vectors s_i.
 *
 * libsvm-js is CommonJS and exports a promise of the class (the WebAssembly module loads
 * asynchronously); under Node it prints one "wasm streaming compile failed … falling back to
 * ArrayBuffer instantiation" line on stderr while loading, which is harmless.
 */
import { createRequire } from 'node:module';

interface LibsvmModel {
  train(samples: number[][], labels: number[]): void;
  predictOne(sample: number[]): number;
  serializeModel(): string;
}
interface LibsvmClass {
  new (options: Record<string, unknown>): LibsvmModel;
  SVM_TYPES: { EPSILON_SVR: number };
  KERNEL_TYPES: { RBF: number };
}

let libsvm: Promise<LibsvmClass> | null = null;
function loadLibsvm(): Promise<LibsvmClass> {
  libsvm ??= createRequire(import.meta.url)('libsvm-js/wasm.js') as Promise<LibsvmClass>;
  return libsvm;
}

export interface SvrParams {
  /** Box constraint C. */
  C: number;
  /** Half-width of the ε-insensitive tube. */
  epsilon: number;
  /** RBF inverse length scale γ. */
  gamma: number;
}

export interface Svr {
  params: SvrParams;
  predict(x: readonly number[]): number;
  /** libsvm's model file (support vectors, their coefficients α_i, ρ), as svm_save_model writes it. */
  modelText(): string;
}

/**
 * Trains on rows X with targets y. libsvm's other settings are its defaults (tolerance 1e-3,
 * shrinking on), which are scikit-learn SVR's defaults too.
 */
export async function fitSvr(X: readonly number[][], y: readonly number[], params: SvrParams): Promise<Svr> {
  const SVM = await loadLibsvm();
  const model = new SVM({ type: SVM.SVM_TYPES.EPSILON_SVR, kernel: SVM.KERNEL_TYPES.RBF, cost: params.C, epsilon: params.epsilon, gamma: params.gamma, quiet: true });
  model.train(X.map((r) => [...r]), [...y]);
  return { params, predict: (x) => model.predictOne([...x]), modelText: () => model.serializeModel() };
}
