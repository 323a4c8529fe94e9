// lint-as: src-main/plane/good.lint-fixture.ts
// expect: nothing
import { Journal } from '../journal/journal';
import { Runtime } from '../runtime/runtime';
import { createLogger } from '../base/logger';
import { PeerSupervisor } from '../peers/peer-supervisor';
export const x = [Journal, Runtime, createLogger, PeerSupervisor];
