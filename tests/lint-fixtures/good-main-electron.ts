// lint-as: src-main/electron/good.lint-fixture.ts
// expect: nothing
import { app } from 'electron';
import Database from 'better-sqlite3';
export const x = [app, Database];
