/**
 * Storage-level tests that complete trials commit them as the loop does: with the evaluation rows
 * the domain computes for them (src/domain/results), guarded by the commit count they were
 * computed at.
 */
import { completionRows, objectiveOf, type Completion } from '../../src/domain/results/index.js';
import type { CommitResult, GenerationCommit, Storage } from '../../src/storage/index.js';

/** `c` committed with the evaluation rows of the trials it completes (and, unless given, the loaded commit count as its guard). */
export async function commitWithEvaluations(s: Storage, studyId: string, c: GenerationCommit, tenantId = 'default'): Promise<CommitResult> {
  const loaded = await s.loadLoopState(tenantId, studyId, { trialIds: [], knownRevision: null });
  if (!loaded) throw new Error(`no study ${studyId}`);
  const added: Completion[] = [
    ...(c.trialUpdates ?? []).filter((u) => u.state === 'COMPLETED' && u.expectedState !== 'COMPLETED' && u.value !== null).map((u) => ({ completedAt: u.completedAt ?? '', trialId: u.trialId, value: u.value! })),
    ...c.newTrials.flatMap((t, i) => (t.state === 'COMPLETED' && t.value != null ? [{ completedAt: t.completedAt ?? '', trialId: loaded.nextTrialId + i, value: t.value }] : [])),
  ];
  const evaluations = await completionRows(s, studyId, objectiveOf(loaded.study), loaded.lastEvaluation, added);
  return s.commitGeneration(studyId, { ...c, expectedCommitSeq: c.expectedCommitSeq ?? loaded.commitSeq, ...(evaluations.length > 0 ? { evaluations } : {}) });
}
