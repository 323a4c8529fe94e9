/**
 * The Add-server form's text into the contract's request: each wrong field gets its own error,
 * naming the line for the multi-line fields, and a secret written in an env or header line is
 * never repeated in an error.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_MCP_SERVER_FORM, mcpServerRequestOf, parseEnvLines, parseHeaderLines, type McpServerFormValues } from './mcp-server-form';

const form = (patch: Partial<McpServerFormValues>): McpServerFormValues => ({ ...EMPTY_MCP_SERVER_FORM, ...patch });

describe('the Add MCP server form', () => {
  it('builds a stdio request: one argument per line, env KEY=VALUE lines (a value may hold "=")', () => {
    const out = mcpServerRequestOf(form({ name: 'everything', command: 'node', args: '/x/dist/index.js\n\nstdio\r\n', env: 'API_KEY=a=b\nDEBUG=' }));
    expect(out).toEqual({ request: { name: 'everything', config: { transport: 'stdio', command: 'node', args: ['/x/dist/index.js', 'stdio'], env: { API_KEY: 'a=b', DEBUG: '' } } } });
  });

  it('builds an HTTP request with its headers, ignoring the stdio fields', () => {
    const out = mcpServerRequestOf(form({ name: 'remote', transport: 'http', command: 'ignored', url: ' http://127.0.0.1:3001/mcp ', headers: 'Authorization: Bearer s3cret\nX-Team:  blue ' }));
    expect(out).toEqual({ request: { name: 'remote', config: { transport: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer s3cret', 'X-Team': 'blue' } } } });
  });

  it('names each wrong field: the name, a missing command, a command with its arguments on one line', () => {
    expect(mcpServerRequestOf(form({ name: 'Everything', command: 'node' }))).toEqual({ errors: { name: expect.stringMatching(/^Lowercase letters/) } });
    expect(mcpServerRequestOf(form({ name: '', command: '' }))).toEqual({ errors: { name: expect.stringMatching(/required/), command: expect.any(String) } });
    expect(mcpServerRequestOf(form({ name: 'x', command: 'npx -y server-everything' }))).toEqual({ errors: { command: expect.stringMatching(/own line/) } });
  });

  it('refuses a URL that is not http(s), and an empty one', () => {
    expect(mcpServerRequestOf(form({ name: 'r', transport: 'http', url: 'ftp://example.com/mcp' }))).toEqual({ errors: { url: expect.stringMatching(/http:\/\/ or https:\/\//) } });
    expect(mcpServerRequestOf(form({ name: 'r', transport: 'http', url: 'not a url' }))).toEqual({ errors: { url: expect.any(String) } });
    expect(mcpServerRequestOf(form({ name: 'r', transport: 'http' }))).toEqual({ errors: { url: expect.stringMatching(/endpoint/) } });
  });

  it('names the bad env or header line and never repeats its value', () => {
    const env = parseEnvLines('GOOD=1\nTOKEN sk-live-abcdef');
    expect(env).toEqual({ error: expect.stringMatching(/^Line 2: /) });
    expect(JSON.stringify(env)).not.toContain('sk-live-abcdef');
    expect(parseEnvLines('1BAD=x')).toEqual({ error: expect.stringMatching(/^Line 1: "1BAD" is not an environment variable name/) });
    expect(parseEnvLines('A=1\nA=2')).toEqual({ error: 'Line 2: A is set twice.' });
    const headers = parseHeaderLines('Authorization Bearer sk-live-abcdef');
    expect(headers).toEqual({ error: expect.stringMatching(/^Line 1: write Name: value/) });
    expect(JSON.stringify(headers)).not.toContain('sk-live-abcdef');
    expect(parseHeaderLines('X-A: 1\nx-a: 2')).toEqual({ error: 'Line 2: x-a is given twice.' });
    expect(parseHeaderLines('Bad Name: v')).toEqual({ error: expect.stringMatching(/not an HTTP header name/) });
    const out = mcpServerRequestOf(form({ name: 'x', command: 'node', env: 'SECRET_KEY hunter2hunter2' }));
    expect(out).toEqual({ errors: { env: expect.stringMatching(/^Line 1/) } });
    expect(JSON.stringify(out)).not.toContain('hunter2');
  });
});
