/**
 * The last line of a CI run (.ci/run), from vitest's JSON report: `tests: N passed, N failed,
 * N skipped`. A test file that failed before any of its tests ran (an import error, a program
 * missing under CI=true) counts as one failure; skipped counts skipped and todo tests. Exit status 1
 * when anything failed or nothing passed.
 *
 *   node --import tsx scripts/ci-summary.ts test-artifacts/vitest.json
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The fields of vitest's JSON reporter (Jest's format) that the summary reads. */
export interface VitestReport {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  testResults?: { status: string; assertionResults?: unknown[] }[];
}

export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}

export function summarize(report: VitestReport): TestCounts {
  const failedFiles = (report.testResults ?? []).filter((s) => s.status === 'failed' && (s.assertionResults ?? []).length === 0).length;
  return {
    passed: report.numPassedTests ?? 0,
    failed: (report.numFailedTests ?? 0) + failedFiles,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

export function summaryLine(c: TestCounts): string {
  return `tests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? 'test-artifacts/vitest.json';
  let counts: TestCounts;
  try {
    counts = summarize(JSON.parse(readFileSync(file, 'utf8')) as VitestReport);
  } catch (e) {
    console.error(`no test report at ${file}: ${(e as Error).message}`);
    counts = { passed: 0, failed: 1, skipped: 0 };
  }
  console.log(summaryLine(counts));
  process.exitCode = counts.failed > 0 || counts.passed === 0 ? 1 : 0;
}
