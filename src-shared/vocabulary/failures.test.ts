import { describe, expect, it } from 'vitest';
import { checkRecordBody } from '../journal/records';
import { Mcpv2Error } from '../protocol/mcpv2';
import { NO_SPEND } from './spend';
import { FailureCodeSchema } from './failures';

const failed = (code: string) => ({ step: 0, key: 'a'.repeat(64), disposition: 'Landed', error: { code, message: 'it failed' }, spend: NO_SPEND });

describe('failure codes', () => {
  it('hold exactly the MCPv2 error table as a skill run’s codes', () => {
    expect(FailureCodeSchema.options.filter((c) => c.startsWith('mcpv2:'))).toEqual(Object.values(Mcpv2Error).map((c) => `mcpv2:${c}`));
  });

  it('a record still reads a code this build does not write (one an older build wrote)', () => {
    expect(FailureCodeSchema.safeParse('HTTP_401').success).toBe(false);
    expect(checkRecordBody('EffectFailed', 1, failed('HTTP_401'))).toMatchObject({ known: true, body: expect.anything() });
    expect(checkRecordBody('RunSealed', 1, { outcome: 'failed', error: { code: 'HTTP_401', message: 'x' }, spend: NO_SPEND, records: 3 })).toMatchObject({ known: true, body: expect.anything() });
    expect(checkRecordBody('EffectFailed', 1, failed('McpTimeout'))).toMatchObject({ known: true, body: expect.anything() });
  });
});
