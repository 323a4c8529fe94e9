// lint-as: src-main/electron/bad.lint-fixture.ts
// expect: nodeIntegration stays off
export const prefs = { nodeIntegration: true };
