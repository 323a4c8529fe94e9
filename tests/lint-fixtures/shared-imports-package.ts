// lint-as: src-shared/protocol/bad.lint-fixture.ts
// expect: src-shared may import only zod among packages
import { create } from 'zustand';
export const x = create;
