/**
 * The sidebar's sections, in order. Each says what will appear there, so an empty plane
 * explains itself instead of showing a blank panel.
 */
export const sections = [
  {
    id: 'peers',
    label: 'Peers',
    empty: 'No peers yet. Local agent peers you create appear here, to start and stop by click, with their address, health and live sessions.',
  },
  {
    id: 'runs',
    label: 'Runs',
    empty: 'No runs yet. Every call a peer or agent admits becomes a run here, with its journal as a timeline you can verify and export.',
  },
  {
    id: 'approvals',
    label: 'Approvals',
    empty: 'Nothing waits for you. Runs suspended before a risky effect, a payment or a budget ceiling wait here for approve, deny or snooze.',
  },
  {
    id: 'spend',
    label: 'Spend',
    empty: 'No spend recorded. Effects, tokens and cost per run, agent and peer appear here against their budget ceilings.',
  },
  {
    id: 'sessions',
    label: 'Sessions',
    empty: 'No sessions. MCPv2 sessions issued by your peers appear here with their caller, expiry and a revoke button.',
  },
  {
    id: 'acp',
    label: 'Editor sessions',
    empty: 'No editor sessions observed yet. Agent Client Protocol sessions between your editor and an agent, run through the tap, appear here live, as a verifiable record.',
  },
  {
    id: 'mcp',
    label: 'MCP',
    empty: 'No MCP servers declared yet. Servers you add here (a command the plane starts, or an HTTP URL) can be called by your agents as governed, journaled effects, each tool granted by name.',
  },
  {
    id: 'settings',
    label: 'Settings',
    // Always shown as the view's introduction (there are always four providers to configure).
    empty: 'Model providers for your agents: a key, a base URL and a default model each. Keys are kept by the plane and never shown again; AGENTPLANE_* variables set at launch win over what is saved here.',
  },
  {
    id: 'remotes',
    label: 'Remote agents',
    empty: 'No remote agents called yet. When an agent’s a2a step (or an a2a: tool) calls a remote A2A agent, its card appears here with its name, whether its signature verified against the key pinned for it, and each task it ran for one of your runs.',
  },
] as const;

export type SectionId = (typeof sections)[number]['id'];
