/** The parameters of a client study spec as numeric ones (the examples' are all numeric), for checks that read priors and bounds. */
import { isNumericParameter, type StudySpec } from '../../clients/typescript/src/index.js';

type ParameterIn = StudySpec['parameters'][number];
export type NumericParameterIn = Exclude<ParameterIn, { type: 'categorical' }>;

/** Every parameter, narrowed by the client's isNumericParameter; throws on a categorical one (a check that reads priors and bounds would not apply). */
export function numericSpecs(ps: readonly ParameterIn[]): NumericParameterIn[] {
  return ps.map((p) => {
    if (!isNumericParameter(p)) throw new TypeError(`parameter ${p.name} is categorical`);
    return p;
  });
}
