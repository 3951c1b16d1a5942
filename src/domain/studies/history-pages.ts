/**
 * /history in pages: the evaluations in completion order and the per-generation distributions, each
 * page read in O(page) from what storage keeps with the study (EvaluationRecord: position, best so
 * far, best-so-far steps), never by walking every trial.
 *
 * A page holds up to `pageSize` evaluations after the cursor and up to GENERATIONS_PER_PAGE
 * generations after the generation cursor; one token carries both cursors, and the listing ends
 * when neither has more. With `stride` k > 1 the evaluations are downsampled: every k-th one
 * (index 1, 1 + k, 1 + 2k, …), every best-so-far step (so the best-so-far and regret curves are
 * exact) and the latest evaluation; a page then spans at most pageSize·k positions.
 */
import type { EvaluationRecord, SummariesStore } from '../../storage/index.js';

/** Documented limits of GET /history (docs/capacity.md). */
export const HISTORY_LIMITS = {
  defaultPageSize: 1000,
  maxPageSize: 10_000,
  maxStride: 1_000_000,
  /** Generations per page: each is one engine-state snapshot to parse, larger than an evaluation. */
  generationsPerPage: 100,
} as const;

export interface HistoryCursor {
  afterIndex: number;
  afterGeneration: number;
}

export const FIRST_PAGE: HistoryCursor = { afterIndex: 0, afterGeneration: -1 };

export function encodeCursor(c: HistoryCursor): string {
  return `${c.afterIndex}:${c.afterGeneration}`;
}

/** The cursor inside a (signed) token; null when it is not one this module wrote. */
export function decodeCursor(s: string): HistoryCursor | null {
  const m = /^(\d+):(-1|\d+)$/.exec(s);
  if (!m) return null;
  const c = { afterIndex: Number(m[1]), afterGeneration: Number(m[2]) };
  return Number.isSafeInteger(c.afterIndex) && Number.isSafeInteger(c.afterGeneration) ? c : null;
}

/** The first index > `after` of the form 1 + j·stride. */
export function nextSampled(after: number, stride: number): number {
  return after + 1 + ((stride - (after % stride)) % stride);
}

/**
 * The evaluations of one page after `afterIndex`: contiguous with stride 1; otherwise the sampled
 * positions, the steps and the latest evaluation within the page's span, merged by index. `more`
 * says whether evaluations remain after the page.
 */
export async function evaluationPage(
  storage: Pick<SummariesStore, 'listEvaluations' | 'evaluationsAt' | 'listBestSteps'>,
  studyId: string,
  total: number,
  afterIndex: number,
  pageSize: number,
  stride: number,
): Promise<{ items: EvaluationRecord[]; more: boolean }> {
  if (afterIndex >= total) return { items: [], more: false };
  if (stride === 1) {
    const items = await storage.listEvaluations(studyId, { afterIndex, limit: pageSize });
    const last = items[items.length - 1]?.index ?? total;
    return { items, more: last < total };
  }
  const first = nextSampled(afterIndex, stride);
  const sampled: number[] = [];
  for (let i = first; i <= total && sampled.length < pageSize; i += stride) sampled.push(i);
  // The span the page covers: up to the last sampled position, or the end when it is reached.
  const spanEnd = sampled.length === pageSize ? sampled[sampled.length - 1]! : total;
  if (spanEnd === total && sampled[sampled.length - 1] !== total) sampled.push(total);
  const [atSampled, steps] = await Promise.all([
    storage.evaluationsAt(studyId, sampled),
    storage.listBestSteps(studyId, { afterIndex, throughIndex: spanEnd, limit: pageSize }),
  ]);
  const byIndex = new Map<number, EvaluationRecord>();
  for (const e of [...atSampled, ...steps]) byIndex.set(e.index, e);
  const merged = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const items = merged.slice(0, pageSize);
  const last = items[items.length - 1]?.index ?? total;
  return { items, more: last < total };
}
