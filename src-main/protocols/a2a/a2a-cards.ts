/**
 * What the endpoint says about itself, all of it public (a caller reads it before it has
 * credentials, and none of it names the token): each agent's signed card (card-signature.ts), the
 * well-known card, and the JSON index `GET /` answers for whoever opens the printed URL. The
 * cards say `pushNotifications: true` only when push is served, and the capability is in the
 * signed payload.
 *
 * The well-known card (`/.well-known/agent-card.json`) is what the specification says it is: one
 * valid card describing one real agent (the first of the plane's agents by name), not several
 * agents posing as interfaces of one (a generic client takes `supportedInterfaces` as alternative
 * endpoints of the same agent and would pick any). An agent-directory extension on it lists every
 * agent, its card, its endpoint and its manifest digest, so a caller finds the rest without a
 * discovery endpoint of our own. Each agent's own card stays the card it would have alone:
 * sharing a plane does not change the identity a consumer pins.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../../src-shared/journal/canonical-json';
import type { AgentSummary } from '../../../src-shared/ipc/contract';
import type { PlaneKey } from '../../journal/plane-key';
import { signAgentCard } from './card-signature';
import { A2A_PROTOCOL_VERSION, type Json } from './a2a-wire';

export interface A2aCardsOptions {
  /** The agents on this plane, through the plane's door. */
  agents(): Promise<AgentSummary[]>;
  key: PlaneKey;
  /** `http://127.0.0.1:<port>` once listening. */
  origin: () => string;
  version: string;
  /** Whether the endpoint serves push notifications. */
  push: boolean;
}

/** The extension on the well-known card that lists every agent of the plane (its params: `{ agents }`). */
export const AGENT_DIRECTORY_EXTENSION = 'https://agentplane.io/a2a/ext/agent-directory/v1';

/**
 * An agent's manifest digest as the directory lists it: SHA-256 over the canonical JSON of what
 * the plane declares of it (name, description, input schema, grants, budget; not the local file
 * it was read from), so a caller can tell when an agent it pinned changed.
 */
export function manifestDigestOf(agent: AgentSummary): string {
  const declared = { name: agent.name, description: agent.description, inputSchema: agent.inputSchema, grants: agent.grants, budget: agent.budget };
  return `sha256:${createHash('sha256').update(canonicalize(declared as never), 'utf8').digest('hex')}`;
}

export interface A2aCards {
  cardOf(agent: AgentSummary): Promise<Json>;
  /** The well-known card: the first agent's, with the directory extension; null on a plane with no agent. */
  directoryCard(): Promise<Json | null>;
  rootIndex(): Promise<Json>;
}

export function createA2aCards(options: A2aCardsOptions): A2aCards {
  const signed = new Map<string, { at: string; card: Json }>();

  const endpointOf = (agent: AgentSummary) => `${options.origin()}/a2a/${encodeURIComponent(agent.name)}`;

  /** An agent's card as it would be alone, unsigned. */
  function unsignedCardOf(agent: AgentSummary): Json {
    return {
      name: agent.name,
      description: agent.description,
      version: options.version,
      provider: { organization: 'AgentPlane (local)', url: options.origin() },
      supportedInterfaces: [{ url: endpointOf(agent), protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
      capabilities: { streaming: true, pushNotifications: options.push },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: "The plane's A2A token (agentplane serve prints it)." } } },
      securityRequirements: [{ schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: ['application/json', 'text/plain'],
      defaultOutputModes: ['application/json', 'text/plain'],
      skills: [{ id: agent.name, name: agent.name, description: agent.description, tags: ['agentplane'] }],
    };
  }

  /** Signs once per exact card (the origin, the manifest and the agent list all change the text). */
  async function signedOnce(card: Json): Promise<Json> {
    const cacheKey = JSON.stringify(card);
    const hit = signed.get(cacheKey);
    if (hit) return hit.card;
    const result = await signAgentCard(card, options.key);
    signed.set(cacheKey, { at: new Date().toISOString(), card: result });
    return result;
  }

  async function cardOf(agent: AgentSummary): Promise<Json> {
    return signedOnce(unsignedCardOf(agent));
  }

  async function directoryCard(): Promise<Json | null> {
    const agents = [...(await options.agents())].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const first = agents[0];
    if (!first) return null;
    const own = unsignedCardOf(first);
    const directory = {
      uri: AGENT_DIRECTORY_EXTENSION,
      description: "Every agent on this plane: each has a card of its own (the card it would have alone) and its own JSON-RPC endpoint; this card is the first agent's.",
      // `required` is left out, not false: ProtoJSON omits a default, so a verifier that
      // re-reads the card through the proto types (the SDK's) signs over a card without it.
      params: {
        agents: agents.map((agent) => ({
          name: agent.name,
          description: agent.description,
          agentCard: `${endpointOf(agent)}/.well-known/agent-card.json`,
          endpoint: endpointOf(agent),
          manifestDigest: manifestDigestOf(agent),
        })),
      },
    };
    return signedOnce({ ...own, capabilities: { ...(own.capabilities as Json), extensions: [directory] } });
  }

  /** `GET /`: where the cards and the endpoints are, for a person or a client that starts at the root. */
  async function rootIndex(): Promise<Json> {
    const agents = await options.agents();
    const origin = options.origin();
    return {
      name: 'AgentPlane',
      description: 'An A2A 1.0 server: one JSON-RPC endpoint per agent, each described by its signed agent card.',
      protocolVersion: A2A_PROTOCOL_VERSION,
      agentCard: `${origin}/.well-known/agent-card.json`,
      agents: agents.map((a) => ({
        name: a.name,
        description: a.description,
        agentCard: `${origin}/a2a/${encodeURIComponent(a.name)}/.well-known/agent-card.json`,
        endpoint: `${origin}/a2a/${encodeURIComponent(a.name)}`,
      })),
      calls: `POST JSON-RPC 2.0 to an agent's endpoint with Authorization: Bearer <token> and A2A-Version: ${A2A_PROTOCOL_VERSION}; the cards and this index need neither`,
    };
  }

  return { cardOf, directoryCard, rootIndex };
}
