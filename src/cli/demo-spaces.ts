/**
 * The demo's tasks with a structured search space: categorical parameters, parameters that exist only
 * for some choices of another (docs/conditional.md, nested) and stepped ones (docs/API.md#stepped-parameters).
 * Synthetic, deterministic and cheap, with a known optimum so the demo can print the regret.
 *
 * `model-choice` imitates tuning a model family and each family's own hyperparameters: the "validation
 * loss" of three model families, each a sum of bowl-shaped terms whose minima lie on the parameters'
 * grids. The prior favours `linear` (probability 0.5), whose best loss is the worst of the three; the
 * optimum is `net` (prior 0.2) with two layers and dropout 0.2, so a method has to leave the prior's
 * favourite choice to find it.
 */
import type { ParameterSpec, ParamValue } from '../../clients/typescript/src/index.js';

export type Point = Readonly<Record<string, ParamValue>>;

export interface SpaceTask {
  readonly name: string;
  /** One line for --help and the study's header. */
  readonly summary: string;
  /** The study's `parameters`, as POST /v1/studies takes them. */
  readonly parameters: readonly ParameterSpec[];
  /** f* (minimised), and a point attaining it, with its active parameters only. */
  readonly optimum: number;
  readonly optimumPoint: Point;
  /** The loss at a point holding exactly its active parameters (throws otherwise, naming the parameter). */
  evaluate(p: Point): number;
}

/**
 * The names of the parameters active at a point, in the order of `parameters`: a parameter without a
 * condition always, one with a condition when its parent is active and takes one of its values (to any
 * depth, as the server decides it). Values compare by value and JSON type, as choices do.
 */
export function activeNames(parameters: readonly ParameterSpec[], p: Point): string[] {
  const byName = new Map(parameters.map((q) => [q.name, q]));
  const memo = new Map<string, boolean>();
  const active = (name: string, seen: Set<string>): boolean => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) throw new Error(`conditions form a cycle through ${name}`);
    const q = byName.get(name);
    if (!q) throw new Error(`no parameter ${name}`);
    const c = q.condition;
    const on = !c || (active(c.parent, new Set([...seen, name])) && c.values.some((v) => v === p[c.parent]));
    memo.set(name, on);
    return on;
  };
  return parameters.filter((q) => active(q.name, new Set())).map((q) => q.name);
}

/** The point's values, after checking that it holds exactly the active parameters (what the server hands out). */
function checked(parameters: readonly ParameterSpec[], p: Point): Point {
  const want = activeNames(parameters, p);
  const missing = want.filter((n) => !(n in p));
  const extra = Object.keys(p).filter((n) => !want.includes(n));
  if (missing.length || extra.length) {
    throw new Error(`a point with ${missing.length ? `active parameters missing (${missing.join(', ')})` : ''}${missing.length && extra.length ? ' and ' : ''}${extra.length ? `inactive or unknown parameters (${extra.join(', ')})` : ''}: ${JSON.stringify(p)}`);
  }
  return p;
}

const num = (p: Point, name: string): number => {
  const v = p[name];
  if (typeof v !== 'number') throw new Error(`${name} must be a number (got ${JSON.stringify(v)})`);
  return v;
};

const MODEL_CHOICE_PARAMETERS: readonly ParameterSpec[] = [
  { name: 'model', type: 'categorical', choices: ['linear', 'tree', 'net'], prior: { probabilities: [0.5, 0.3, 0.2] } },
  // linear: the regularisation strength, on a log scale.
  { name: 'C', type: 'float', scale: 'log', bounds: [1e-3, 1e3], condition: { parent: 'model', values: ['linear'] } },
  // tree: an even depth (a stepped int) and the share of rows each tree sees (a stepped float).
  { name: 'depth', type: 'int', bounds: [2, 16], step: 2, condition: { parent: 'model', values: ['tree'] } },
  { name: 'subsample', type: 'float', bounds: [0.5, 1], step: 0.1, condition: { parent: 'model', values: ['tree'] } },
  // net: a learning rate on a log scale, the number of layers, and dropout only with more than one layer (nested).
  { name: 'lr', type: 'float', scale: 'log', bounds: [1e-5, 1e-1], condition: { parent: 'model', values: ['net'] } },
  { name: 'layers', type: 'categorical', choices: [1, 2, 3], condition: { parent: 'model', values: ['net'] } },
  { name: 'dropout', type: 'float', bounds: [0, 0.5], step: 0.05, condition: { parent: 'layers', values: [2, 3] } },
];

/** The loss of each family at its best: linear 0.30, tree 0.22, net 0.12 (f*). */
const MODEL_CHOICE_BEST = { linear: 0.3, tree: 0.22, net: 0.12 } as const;

export const MODEL_CHOICE: SpaceTask = {
  name: 'model-choice',
  summary: 'a model family (linear, tree, net) and its own hyperparameters: conditional (two levels), log and stepped parameters',
  parameters: MODEL_CHOICE_PARAMETERS,
  optimum: MODEL_CHOICE_BEST.net,
  optimumPoint: { model: 'net', lr: 10 ** -2.5, layers: 2, dropout: 0.2 },
  evaluate(point: Point): number {
    const p = checked(MODEL_CHOICE_PARAMETERS, point);
    switch (p.model) {
      case 'linear':
        // Best at C = 10^0.5.
        return MODEL_CHOICE_BEST.linear + 0.02 * (Math.log10(num(p, 'C')) - 0.5) ** 2;
      case 'tree':
        // Best at depth 10 and subsample 0.8, both grid values.
        return MODEL_CHOICE_BEST.tree + 0.004 * (num(p, 'depth') - 10) ** 2 + 0.5 * (num(p, 'subsample') - 0.8) ** 2;
      case 'net': {
        // Best at lr = 10^-2.5; one layer underfits (+0.06); dropout best at 0.2 with two layers, 0.3 with three.
        const lr = 0.03 * (Math.log10(num(p, 'lr')) + 2.5) ** 2;
        const layers = num(p, 'layers');
        const depth = layers === 1 ? 0.06 : layers === 2 ? 0.8 * (num(p, 'dropout') - 0.2) ** 2 : 0.01 + 0.8 * (num(p, 'dropout') - 0.3) ** 2;
        return MODEL_CHOICE_BEST.net + lr + depth;
      }
      default:
        throw new Error(`model must be linear, tree or net (got ${JSON.stringify(p.model)})`);
    }
  },
};

/** The demo's structured-space tasks, by name. */
export const SPACE_TASKS: Readonly<Record<string, SpaceTask>> = { [MODEL_CHOICE.name]: MODEL_CHOICE };
export const spaceTaskNames = (): string[] => Object.keys(SPACE_TASKS);
