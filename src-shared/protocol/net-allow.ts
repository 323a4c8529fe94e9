/**
 * The outbound allow list's wire shapes (`net.allow.*`, src-main/plane/net-allow.ts). An entry
 * is an exact origin (`scheme://host:port`) netguard lets through whatever it resolves to.
 * Entries come from three places, and a view says which: the person's own list
 * (`<data dir>/net-allow.json`, `agentplane net allow`), a model provider's base URL the person
 * configured (environment or Settings), and an MCP server's URL in mcp-servers.json. The last
 * two are derived each time, never copied into the file, so removing the provider or server
 * removes the entry.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';

/** What a person types: checked for being an http(s) origin by the plane, which names what is wrong. */
export const NetOriginInputSchema = deferred(() => z.string().min(1).max(2048));

export const NetAllowSourceSchema = z.enum(['allow-list', 'provider', 'mcp-server']);
export type NetAllowSource = z.infer<typeof NetAllowSourceSchema>;

export const NetAllowEntrySchema = deferred(() => z.object({
  origin: z.string(),
  source: NetAllowSourceSchema,
  /** For a derived entry: the provider id or MCP server name it comes from. */
  from: z.string().optional(),
}));
export type NetAllowEntry = z.infer<typeof NetAllowEntrySchema>;

export const NetAllowListSchema = deferred(() => z.object({ entries: z.array(NetAllowEntrySchema), file: z.string() }));
export type NetAllowList = z.infer<typeof NetAllowListSchema>;

/** `<data dir>/net-allow.json`. */
export const NetAllowFileSchema = deferred(() => z.object({ origins: z.array(z.string()).default([]) }).strict());
export type NetAllowFile = z.infer<typeof NetAllowFileSchema>;
