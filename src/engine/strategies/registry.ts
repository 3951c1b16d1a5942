/**
 * The registry: the single list of strategies, keyed by the method names of names.ts.
 * Each strategy module adds itself here with one import and one entry.
 */
import type { MethodName } from './names.js';
import type { BaseState, Strategy } from './types.js';
import { cmaes } from './cmaes.js';
import { xnes } from './xnes.js';
import { snes } from './snes.js';
import { random } from './random.js';
import { bo } from './bo.js';
import { pibo } from './pibo.js';
import { probCmaes } from './prob-cmaes.js';
import { probXnes } from './prob-xnes.js';
import { probSnes } from './prob-snes.js';

export const STRATEGIES: Partial<Record<MethodName, Strategy<any>>> = {
  cmaes,
  xnes,
  snes,
  random,
  bo,
  pibo,
  'prob-cmaes': probCmaes,
  'prob-xnes': probXnes,
  'prob-snes': probSnes,
};

export function getStrategy(name: MethodName): Strategy<BaseState> {
  const s = STRATEGIES[name];
  if (!s) throw new Error(`method ${name} is not implemented`);
  return s as Strategy<BaseState>;
}

export function registeredMethods(): MethodName[] {
  return Object.keys(STRATEGIES) as MethodName[];
}
