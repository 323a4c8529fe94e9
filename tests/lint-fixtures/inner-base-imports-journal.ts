// lint-as: src-main/base/bad.lint-fixture.ts
// expect: src-main/base sits below
import { Journal } from '../journal/journal';
export const x = Journal;
