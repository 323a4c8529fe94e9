/**
 * MCP (Model Context Protocol) as the plane speaks it both ways: the servers a user declares
 * for the plane's agents to call (`<data dir>/mcp-servers.json`), what the plane shows of them,
 * and the plane's own endpoint that MCP hosts reach. The wire itself is the official SDK's.
 *
 * Secrets: a server's `env` values and `headers` values are credentials more often than not.
 * They are kept in the file (0600, in the private data dir) and handed to the transport; a view
 * never carries them (only their names), so they cannot reach the UI, a log or the journal.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';

/** The protocol revisions this plane speaks, newest first (the one it prefers first). */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25'] as const;
export const McpProtocolVersionSchema = z.enum(MCP_PROTOCOL_VERSIONS);

/** A server's name: how steps, grants (`mcp:<server>/<tool>`) and the CLI name it. */
export const McpServerNameSchema = deferred(() => z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,62}$/, 'a lowercase name: letters, digits and dashes, starting with a letter'));

const Env = deferred(() => z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string()));
const Headers = deferred(() => z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'an HTTP header name'), z.string()));

export const McpStdioConfigSchema = deferred(() => z
  .object({
    transport: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: Env.default({}),
    /** Working directory of the server process; the data dir's workspace when absent. */
    cwd: z.string().min(1).optional(),
  })
  .strict());

export const McpHttpConfigSchema = deferred(() => z
  .object({
    transport: z.literal('http'),
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//.test(u), 'an http:// or https:// URL'),
    headers: Headers.default({}),
  })
  .strict());

export const McpServerConfigSchema = deferred(() => z.discriminatedUnion('transport', [McpStdioConfigSchema, McpHttpConfigSchema]));
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** `<data dir>/mcp-servers.json`: `{servers: {<name>: config}}`. */
export const McpServersFileSchema = deferred(() => z
  .object({
    servers: z.record(McpServerNameSchema, McpServerConfigSchema).default({}),
  })
  .strict());
export type McpServersFile = z.infer<typeof McpServersFileSchema>;

export const McpToolInfoSchema = deferred(() => z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
}));
export const McpPromptInfoSchema = deferred(() => z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(z.object({ name: z.string(), description: z.string().optional(), required: z.boolean().optional() })).default([]),
}));
export const McpResourceInfoSchema = deferred(() => z.object({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
}));

export const McpConnectionStateSchema = z.enum(['disconnected', 'connecting', 'connected', 'failed']);

/** What the plane shows of one declared server: its config without secret values, and its state. */
export const McpServerViewSchema = deferred(() => z.object({
  name: McpServerNameSchema,
  transport: z.enum(['stdio', 'http']),
  /** stdio: the command and its arguments. */
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  /** The names of the environment variables given to it (values are never shown). */
  envNames: z.array(z.string()).optional(),
  /** http: the endpoint. */
  url: z.string().optional(),
  /** The names of the headers sent (values are never shown). */
  headerNames: z.array(z.string()).optional(),
  state: McpConnectionStateSchema,
  /** The revision the handshake settled on, while connected. */
  negotiatedVersion: z.string().optional(),
  /** The server's own name and version, as it announced them. */
  serverInfo: z.object({ name: z.string(), version: z.string().optional() }).optional(),
  /** Why the last connection or call failed, in the server's words where it gave any. */
  error: z.string().optional(),
  /** Lines the server wrote to stderr (stdio) lately, newest last: its own errors. */
  stderrTail: z.array(z.string()).optional(),
  tools: z.array(McpToolInfoSchema).optional(),
  prompts: z.array(McpPromptInfoSchema).optional(),
  resources: z.array(McpResourceInfoSchema).optional(),
}));
export type McpServerView = z.infer<typeof McpServerViewSchema>;

/** The plane's own MCP endpoint, for a host's config. */
export const McpEndpointViewSchema = deferred(() => z.object({
  /** `http://127.0.0.1:<port>/mcp` while the plane serves MCP over HTTP; null when it does not. */
  url: z.string().nullable(),
  /** The bearer token hosts send (`Authorization: Bearer <token>`); null when not serving. */
  token: z.string().nullable(),
  /** The command a host launches for stdio: `[command, ...args]`. */
  stdioCommand: z.array(z.string()).min(1),
  /** The revisions served, preferred first. */
  versions: z.array(z.string()),
  /** The agents offered as tools. */
  tools: z.array(z.string()),
}));
export type McpEndpointView = z.infer<typeof McpEndpointViewSchema>;
