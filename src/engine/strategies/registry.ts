/**
 * The registry: every method, by name, with its descriptor (types.ts StrategyDescriptor) and its
 * facts (types.ts MethodFacts). This is the one list of methods: the API's enum, option schemas and
 * checks, GET /v1/methods, the cost of a study, the engine's light calls and the model views all
 * derive from it. Adding a method is its own module plus one name and one entry in each table here;
 * the compiler checks that every name has its entries.
 */
import type { BaseState, MethodFacts, StoredState, StrategyDescriptor } from './types.js';
import type { Options } from './options.js';
import { METHOD_NAMES, DEFAULT_METHOD, type MethodName } from './methods.js';
import { InvalidInputError } from '../errors.js';
import { cmaes } from './cmaes.js';
import { lqCmaes } from './lq-cmaes.js';
import { xnes } from './xnes.js';
import { snes } from './snes.js';
import { random } from './random.js';
import { bo } from './bo.js';
import { pibo } from './pibo.js';
import { probCmaes } from './prob-cmaes.js';
import { probXnes } from './prob-xnes.js';
import { probSnes } from './prob-snes.js';

export { METHOD_NAMES, DEFAULT_METHOD, type MethodName };

export const STRATEGIES: Readonly<Record<MethodName, StrategyDescriptor<any>>> = {
  'prob-cmaes': probCmaes,
  'prob-xnes': probXnes,
  'prob-snes': probSnes,
  cmaes,
  'lq-cmaes': lqCmaes,
  xnes,
  snes,
  bo,
  pibo,
  random,
};

const PROBNES: MethodFacts = { family: 'probnes', hasModel: true, ranksGeneration: false, searchDistribution: true, readsHistory: true, multiObjective: true, constraints: true };
const BO: MethodFacts = { family: 'bo', hasModel: true, ranksGeneration: false, searchDistribution: false, readsHistory: true, multiObjective: true, constraints: true };
const ES: MethodFacts = { family: 'evolution-strategy', hasModel: false, ranksGeneration: true, searchDistribution: true, readsHistory: false, multiObjective: false, constraints: false };

export const METHOD_FACTS: Readonly<Record<MethodName, MethodFacts>> = {
  'prob-cmaes': PROBNES,
  'prob-xnes': PROBNES,
  'prob-snes': PROBNES,
  cmaes: ES,
  // CMA-ES with a global linear/quadratic surrogate (Hansen 2019).
  'lq-cmaes': { ...ES, hasModel: true, readsHistory: true },
  xnes: ES,
  snes: ES,
  bo: BO,
  pibo: BO,
  random: { family: 'random', hasModel: false, ranksGeneration: false, searchDistribution: false, readsHistory: false, multiObjective: true, constraints: true },
};

/** The facts of a method (METHOD_FACTS). */
export function methodFacts(name: MethodName): MethodFacts {
  if (!isMethodName(name)) throw new Error(`unknown method ${String(name)}`);
  return METHOD_FACTS[name];
}

export function isMethodName(x: string): x is MethodName {
  return Object.hasOwn(STRATEGIES, x);
}

export function getStrategy(name: MethodName): StrategyDescriptor<BaseState> {
  if (!isMethodName(name)) throw new Error(`unknown method ${String(name)}`);
  return STRATEGIES[name];
}

/** Every method (all of them are implemented). */
export function registeredMethods(): MethodName[] {
  return [...METHOD_NAMES];
}

/**
 * A stored state of any version its method wrote, as the version the method writes now (each
 * strategy's `migrate`). Throws InvalidInputError when the method cannot read it.
 */
export function migrateState(stored: StoredState): BaseState {
  if (!isMethodName(stored.method)) throw new InvalidInputError(`unknown method ${JSON.stringify(stored.method)}`);
  return STRATEGIES[stored.method].migrate(stored);
}

/**
 * Effective options: the method's defaults for the chosen profile, overridden by what the user gave
 * (and, from benchmark code, bench options, which have no defaults here: the strategy resolves them).
 */
export function resolveOptions(method: MethodName, d: number, given: Options = {}): Options {
  const profileName = typeof given.profile === 'string' ? given.profile : 'default';
  return { ...getStrategy(method).defaults(d, profileName), ...given };
}
