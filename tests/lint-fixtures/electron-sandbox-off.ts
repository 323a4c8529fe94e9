// lint-as: src-main/electron/bad.lint-fixture.ts
// expect: sandbox stays on
export const prefs = { sandbox: false, contextIsolation: true };
