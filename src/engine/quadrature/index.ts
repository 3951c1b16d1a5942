export { kernelMeans, kernelMeansFor, prepareKernelMeasure, kernelMeanAt, integralPriorVariance, logDetLambda, covMat, type KernelMeasure, type Points, type CovInput } from './measure.js';
export { bqIntegral, expectedGradient, type BqIntegral, type ExpectedGradient } from './bq.js';
export { sampledGradient, type SampledGradient } from './sampled.js';
export { prepareBatchSelection, type BatchSelector } from './batch.js';
export { quadraticMoments, type QuadraticMoments } from './quadratic.js';
