export * from './storage.js';
export { SqliteStorage, type SqliteStorageOptions } from './sqlite/sqlite-storage.js';
export { MigrationError, loadMigrations, type Migration } from './sqlite/migrate.js';
