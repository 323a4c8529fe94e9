// lint-as: src-main/peers/sub/bad.lint-fixture.ts
// expect: src-main/peers sits below
import { startPeer } from '../../plane/peer-host';
export const x = startPeer;
