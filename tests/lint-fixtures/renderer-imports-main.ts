// lint-as: src-renderer/src/bad.lint-fixture.ts
// expect: the renderer talks to main only through the IPC contract
import { EventHub } from '../../src-main/plane/event-hub';
export const x = EventHub;
