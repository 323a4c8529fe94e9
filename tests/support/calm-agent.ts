/**
 * An agent whose runs never wait for a person by their own declaration (no approve grant, no
 * budget ceiling, no input or payment step, no delegation): what an MCP host without the Tasks
 * extension is offered. Written as the person's own agent file, `<data dir>/agents/tidy.yaml`,
 * before the plane starts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CALM_AGENT = 'tidy';
export const CALM_SYSTEM_PROMPT = 'You tidy short texts.';

export function writeCalmAgent(dataDir: string): string {
  mkdirSync(join(dataDir, 'agents'), { recursive: true });
  writeFileSync(
    join(dataDir, 'agents', `${CALM_AGENT}.yaml`),
    [
      `name: ${CALM_AGENT}`,
      'description: Tidy a short text with the local deterministic model; it never waits for a person.',
      'input:',
      '  type: object',
      '  required: [text]',
      '  additionalProperties: false',
      '  properties:',
      '    text: { type: string, minLength: 1, maxLength: 2000 }',
      'steps:',
      '  - as: summary',
      '    model:',
      '      provider: local',
      `      system: ${CALM_SYSTEM_PROMPT}`,
      '      prompt: "Tidy: {{input.text}}"',
      '      maxTokens: 32',
      '  - output:',
      '      summary: "{{steps.summary.text}}"',
      'grants:',
      '  - { kind: model, name: local }',
      '',
    ].join('\n'),
  );
  return dataDir;
}
