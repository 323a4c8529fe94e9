// lint-as: src-renderer/src/bad.lint-fixture.ts
// expect: Node-only modules never reach the renderer bundle
import Database from 'better-sqlite3';
export const x = Database;
