/**
 * The plane's peer registry: which local peers exist, how each is configured, who each is (an
 * Ed25519 public key per peer), and which peer may call which skills of which other peer.
 *
 * This is the answer to the protocol's first limitation (docs/PEER-PROTOCOL.md, "Limitations,
 * and what AgentPlane does about them"). With one shared HMAC secret, "whoever
 * knows the string" is fully trusted by every peer and revoking anyone means rotating it for
 * everyone. Here each peer has its own key; a peer credential is minted for exactly one
 * audience; the registry, not the caller, says what a caller may do; and a peer is revoked by
 * marking it here, without touching anyone else's secret. The shared-secret mode stays, for
 * compatibility with the MCPv2 protocol.
 *
 * Files: peers/registry.json (configuration and public keys, 0600), peers/<id>/identity.jwk
 * (the private key, 0600), peers/<id>/secret (the shared secret, 0600). The registry is read
 * afresh when the file changes, so a revocation made by the plane reaches a running peer
 * process without a restart.
 */
import { generateKeyPairSync, randomBytes, type KeyObject, createPrivateKey, createPublicKey, type JsonWebKeyInput } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { writePrivateFileAtomically } from '../base/private-files';
import { join } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { PeerIdSchema } from '../../src-shared/vocabulary/ids';
import { PeerAuthModeSchema, TokenIssuerTrustSchema, type NewPeer as NewPeerRequest } from '../../src-shared/vocabulary/peers';
export type { TokenIssuerTrust } from '../../src-shared/vocabulary/peers';

const PublicJwkSchema = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string() });

export const PeerRecordSchema = z
  .object({
    id: PeerIdSchema,
    name: z.string().min(1).max(80),
    port: z.number().int().min(0).max(65535),
    /** The address others are told to call (the protocol's --public-ip). */
    publicIp: z.string().min(1),
    /** The address the socket binds (the protocol's --bind-host); the public IP when absent. */
    bindHost: z.string().min(1).optional(),
    portFallback: z.boolean().default(false),
    llmMode: z.boolean().default(false),
    /** Which callers it accepts: shared-secret sessions, peer credentials, or both. */
    auth: PeerAuthModeSchema.default('both'),
    customSkills: z.string().optional(),
    /**
     * Set: this peer accepts only access tokens from this issuer (delegated credentials,
     * docs/SECURITY.md), whatever `auth` says; sessions and peer credentials are refused.
     */
    tokenIssuer: TokenIssuerTrustSchema.optional(),
    publicKey: PublicJwkSchema,
    createdAt: z.string(),
    revoked: z.boolean().default(false),
    /** callerPeerId → the skills of this peer it may call. */
    allow: z.record(z.string(), z.array(z.string().min(1))).default({}),
    /**
     * Made ad hoc by `agentplane peer start` (or the REPL's ReadyTo, which runs it) rather than
     * created on purpose: it leaves the registry when that process stops. Defaults to false so
     * registry files written before the field existed still parse.
     */
    ephemeral: z.boolean().default(false),
  })
  .strict();
export type PeerRecord = z.infer<typeof PeerRecordSchema>;

const RegistryFileSchema = z.object({ version: z.literal(1), peers: z.array(PeerRecordSchema) }).strict();

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
}

/**
 * What creating a peer takes: the contract's `peers.create` request, and (from `agentplane peer
 * start` on this machine only, never over the contract) a custom skills file.
 */
export type NewPeer = NewPeerRequest & Pick<PeerRecord, 'customSkills'> & { ephemeral?: boolean };

export class PeerRegistry {
  private cached: { mtimeMs: number; peers: PeerRecord[] } | null = null;

  constructor(readonly dataDir: string) {}

  get dir(): string {
    return join(this.dataDir, 'peers');
  }

  get file(): string {
    this.#file ??= join(this.dir, 'registry.json');
    return this.#file;
  }

  #file: string | undefined;

  /**
   * The records, read again only when the file changed (its mtime). A peer's door reads them on
   * every call (a trusted token issuer, authenticate in peer-server.ts), so the check is one
   * stat, not an existence check and a stat (about 1.7 µs a call at a loaded peer's rate).
   */
  list(): PeerRecord[] {
    const stat = statSync(this.file, { throwIfNoEntry: false });
    if (stat === undefined) return [];
    const mtimeMs = stat.mtimeMs;
    if (this.cached && this.cached.mtimeMs === mtimeMs) return this.cached.peers;
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (error) {
      throw new RegistryError(`${this.file}: not valid JSON (${(error as Error).message})`);
    }
    const parsed = RegistryFileSchema.safeParse(raw);
    if (!parsed.success) throw new RegistryError(`${this.file}: ${describeZodError(parsed.error)}`);
    this.cached = { mtimeMs, peers: parsed.data.peers };
    return parsed.data.peers;
  }

  get(id: string): PeerRecord | null {
    return this.list().find((p) => p.id === id) ?? null;
  }

  create(spec: NewPeer): PeerRecord {
    const id = PeerIdSchema.safeParse(spec.id);
    if (!id.success) throw new RegistryError(`id: ${describeZodError(id.error)}`);
    if (this.get(spec.id)) throw new RegistryError(`a peer named ${spec.id} already exists`);
    const peerDir = join(this.dir, spec.id);
    mkdirSync(peerDir, { recursive: true, mode: 0o700 });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    // Whole-file replacements through a new 0600 file of ours: a link planted at either name is
    // replaced, never written through.
    writePrivateFileAtomically(join(peerDir, 'identity.jwk'), JSON.stringify(privateKey.export({ format: 'jwk' })));
    writePrivateFileAtomically(join(peerDir, 'secret'), spec.secret ?? randomBytes(32).toString('base64url'));
    const record = PeerRecordSchema.parse({
      id: spec.id,
      name: spec.name ?? spec.id,
      port: spec.port,
      publicIp: spec.publicIp ?? '127.0.0.1',
      ...(spec.bindHost ? { bindHost: spec.bindHost } : {}),
      portFallback: spec.portFallback ?? false,
      llmMode: spec.llmMode ?? false,
      auth: spec.auth ?? 'both',
      ...(spec.customSkills ? { customSkills: spec.customSkills } : {}),
      ephemeral: spec.ephemeral ?? false,
      publicKey: publicKey.export({ format: 'jwk' }),
      createdAt: new Date().toISOString(),
    });
    this.write([...this.list(), record]);
    return record;
  }

  update(id: string, change: (peer: PeerRecord) => PeerRecord): PeerRecord {
    const peers = this.list();
    const index = peers.findIndex((p) => p.id === id);
    if (index < 0) throw new RegistryError(`no peer named ${id}`);
    const next = PeerRecordSchema.parse(change(peers[index]!));
    this.write(peers.map((p, i) => (i === index ? next : p)));
    return next;
  }

  /**
   * Takes a peer out of the registry, and out of every other peer's allow list. Its folder (its
   * log, keys and files) stays: a peer made again under the same id gets new keys.
   */
  remove(id: string): void {
    const peers = this.list();
    if (!peers.some((p) => p.id === id)) return;
    this.write(
      peers
        .filter((p) => p.id !== id)
        .map((p) => {
          if (!(id in p.allow)) return p;
          const { [id]: _removed, ...allow } = p.allow;
          return { ...p, allow };
        }),
    );
  }

  /** Lets `caller` call `skills` of `callee` (replacing what it had). */
  allow(callee: string, caller: string, skills: string[]): PeerRecord {
    if (!this.get(caller)) throw new RegistryError(`no peer named ${caller}`);
    return this.update(callee, (p) => ({ ...p, allow: { ...p.allow, [caller]: skills } }));
  }

  revoke(id: string): PeerRecord {
    return this.update(id, (p) => ({ ...p, revoked: true }));
  }

  /** May `caller` call `skill` of `callee`? Revoked peers may do nothing and be called by nobody. */
  mayCall(caller: string, callee: string, skill: string): boolean {
    const from = this.get(caller);
    const to = this.get(callee);
    if (!from || !to || from.revoked || to.revoked) return false;
    return (to.allow[caller] ?? []).includes(skill);
  }

  secretOf(id: string): string {
    return readFileSync(join(this.dir, id, 'secret'), 'utf8').trim();
  }

  privateKeyOf(id: string): KeyObject {
    const jwk = JSON.parse(readFileSync(join(this.dir, id, 'identity.jwk'), 'utf8')) as JsonWebKeyInput['key'];
    return createPrivateKey({ key: jwk, format: 'jwk' });
  }

  publicKeyOf(id: string): KeyObject | null {
    const peer = this.get(id);
    return peer ? createPublicKey({ key: peer.publicKey, format: 'jwk' }) : null;
  }

  private write(peers: PeerRecord[]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writePrivateFileAtomically(this.file, `${JSON.stringify({ version: 1, peers }, null, 2)}\n`);
    this.cached = null;
  }
}
