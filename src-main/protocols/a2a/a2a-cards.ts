/**
 * What the endpoint says about itself, all of it public (a caller reads it before it has
 * credentials, and none of it names the token): each agent's signed card (card-signature.ts), the
 * plane's signed directory card (its agents as skills, each pointing at its own card), and the
 * JSON index `GET /` answers for whoever opens the printed URL. The cards say
 * `pushNotifications: true` only when push is served, and the capability is in the signed payload.
 */
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

export interface A2aCards {
  cardOf(agent: AgentSummary): Promise<Json>;
  directoryCard(): Promise<Json>;
  rootIndex(): Promise<Json>;
}

export function createA2aCards(options: A2aCardsOptions): A2aCards {
  const signed = new Map<string, { at: string; card: Json }>();

  async function cardOf(agent: AgentSummary): Promise<Json> {
    const url = `${options.origin()}/a2a/${encodeURIComponent(agent.name)}`;
    const card: Json = {
      name: agent.name,
      description: agent.description,
      version: options.version,
      provider: { organization: 'AgentPlane (local)', url: options.origin() },
      supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
      capabilities: { streaming: true, pushNotifications: options.push },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: "The plane's A2A token (agentplane serve prints it)." } } },
      securityRequirements: [{ schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: ['application/json', 'text/plain'],
      defaultOutputModes: ['application/json', 'text/plain'],
      skills: [{ id: agent.name, name: agent.name, description: agent.description, tags: ['agentplane'] }],
    };
    // Signed once per agent and origin; the description changes only with the manifest.
    const cacheKey = `${agent.name}\n${JSON.stringify(card)}`;
    const hit = signed.get(cacheKey);
    if (hit) return hit.card;
    const result = await signAgentCard(card, options.key);
    signed.set(cacheKey, { at: new Date().toISOString(), card: result });
    return result;
  }

  async function directoryCard(): Promise<Json> {
    const agents = await options.agents();
    const card: Json = {
      name: 'AgentPlane',
      description: `The agents on this plane; each has its own card at ${options.origin()}/a2a/<agent>/.well-known/agent-card.json.`,
      version: options.version,
      supportedInterfaces: agents.map((a) => ({ url: `${options.origin()}/a2a/${encodeURIComponent(a.name)}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION })),
      capabilities: { streaming: true, pushNotifications: options.push },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: ['application/json', 'text/plain'],
      defaultOutputModes: ['application/json', 'text/plain'],
      skills: agents.map((a) => ({ id: a.name, name: a.name, description: a.description, tags: ['agentplane'] })),
    };
    return signAgentCard(card, options.key);
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
