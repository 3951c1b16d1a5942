export * from './storage.js';
export { SqliteStorage, type SqliteStorageOptions } from './sqlite/sqlite-storage.js';
export { MigrationError, loadMigrations, type Migration } from './sqlite/migrate.js';
export { PostgresStorage, type PostgresStorageOptions } from './postgres/postgres-storage.js';
export { loadPostgresMigrations } from './postgres/migrate.js';
