// lint-as: src-main/electron/bad.lint-fixture.ts
// expect: contextIsolation stays on
export const prefs = { contextIsolation: false };
