// lint-as: src-main/runtime/bad.lint-fixture.ts
// expect: src-main/runtime sits below
import { Mcpv2Client } from '../peers/peer-client';
export const x = Mcpv2Client;
