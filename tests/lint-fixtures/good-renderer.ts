// lint-as: src-renderer/src/good.lint-fixture.ts
// expect: nothing
import { commands } from '../../src-shared/ipc/contract';
import { create } from 'zustand';
export const x = [commands, create];
