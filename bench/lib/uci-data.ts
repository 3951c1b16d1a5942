/**
 * The regression data sets of the UCI surrogate benchmark (bench/uci.ts), shipped as CSV files in
 * bench/data/uci/ (provenance and licences in the README there). Each row: the inputs, then the target
 * in the last column; a header line names the columns.
 */
import { readFileSync } from 'node:fs';

export interface UciDatasetInfo {
  /** The target column (the last one). */
  target: string;
  /** The paper's data set this one is, or the paper's data sets it stands in for (bench/data/uci/README.md). */
  paper: { is: string } | { substitutesFor: string };
}

export const UCI_DATASETS: Record<string, UciDatasetInfo> = {
  biomass: { target: 'HHV', paper: { substitutesFor: 'Airfoil Self-Noise (d = 5) and Combined Cycle Power Plant (d = 4)' } },
  concrete: { target: 'compressive_strength', paper: { is: 'Concrete Compressive Strength' } },
  diabetes: { target: 'progression', paper: { substitutesFor: 'Heart Disease (d = 13) and Fertility (d = 9)' } },
  'breast-cancer': { target: 'malignant', paper: { substitutesFor: 'Breast Cancer Wisconsin (Prognostic): the diagnostic set with the same 30 features' } },
};

export const UCI_DATA_DIR = new URL('../data/uci/', import.meta.url);

export interface UciData {
  name: string;
  /** Input column names, in order. */
  columns: string[];
  target: string;
  /** Rows × inputs. */
  X: number[][];
  y: number[];
}

export function loadUciData(name: string): UciData {
  const info = UCI_DATASETS[name];
  if (!info) throw new RangeError(`unknown data set ${name}; known: ${Object.keys(UCI_DATASETS).join(', ')}`);
  const lines = readFileSync(new URL(`${name}.csv`, UCI_DATA_DIR), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const header = lines[0].split(',');
  if (header[header.length - 1] !== info.target) throw new Error(`${name}.csv: the last column is ${header[header.length - 1]}, expected ${info.target}`);
  const rows = lines.slice(1).map((line, i) => {
    const cells = line.split(',').map(Number);
    if (cells.length !== header.length || cells.some((v) => !Number.isFinite(v))) throw new Error(`${name}.csv line ${i + 2}: expected ${header.length} numbers`);
    return cells;
  });
  return { name, columns: header.slice(0, -1), target: info.target, X: rows.map((r) => r.slice(0, -1)), y: rows.map((r) => r[r.length - 1]) };
}
