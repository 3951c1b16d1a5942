export * from './types.js';
export { toMat, scaledSqDist, rbfCross, kernelMatrix, thetaFromHyper, logThetaFromHyper, inverseSquaredLengthscales } from './kernel.js';
export { NOISE_FLOOR, packHyper, unpackHyper, logMarginalLikelihood, logPrior, mapObjective, mapObjectiveEvaluator, type MllResult, type MapObjective, type MapObjectiveEvaluator } from './mll.js';
export { probnesPriors, DEFAULT_PROBNES_PRIORS, boPriors, logGamma, logGammaPdf, gammaMode, sampleGamma, priorModeHyper, samplePriorHyper } from './priors.js';
export { fitGp, buildModel, defaultStartHyper } from './fit.js';
export { predict, posteriorJoint, type Prediction, type JointPrediction } from './predict.js';
export { type BasisKind, type QuadraticMean, basisSize, chooseBasis, basisMatrix, lowerInverse, quadraticFromBasis, evalQuadratic } from './basis.js';
export { remlObjectiveEvaluator, restrictedLogLikelihood, buildBasisModel, type BasisModel } from './reml.js';
