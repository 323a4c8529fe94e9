/**
 * The plane's Ed25519 signing key, kept in the data dir (keys/, 0700; both JWKs 0600, like every
 * file in the data dir) and never in the journal database: a key stored beside what it signs
 * would let anyone who can rewrite the records re-sign them too. Loaded or created once per
 * process.
 */
import { generateKeyPairSync, createPrivateKey, createPublicKey, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { writePrivateFile } from '../base/private-files';

export interface PlaneKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: JWK;
  /** RFC 7638 thumbprint of the public key: the key's name in checkpoints and bundles. */
  keyId: string;
}

export async function keyIdOf(publicJwk: JWK): Promise<string> {
  return calculateJwkThumbprint({ kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x } as JWK, 'sha256');
}

export async function publicPlaneKey(publicJwk: JWK): Promise<{ publicKey: KeyObject; keyId: string }> {
  if (publicJwk.kty !== 'OKP' || publicJwk.crv !== 'Ed25519' || typeof publicJwk.x !== 'string') {
    throw new Error('the public key is not an Ed25519 JWK');
  }
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicJwk.x }, format: 'jwk' });
  return { publicKey, keyId: await keyIdOf(publicJwk) };
}

function keyPaths(dataDir: string) {
  const dir = join(dataDir, 'keys');
  return { dir, privatePath: join(dir, 'plane-ed25519.private.jwk'), publicPath: join(dir, 'plane-ed25519.public.jwk') };
}

/** The data dir's public key, for verification; never creates one. */
export async function loadPlaneKey(dataDir: string): Promise<PlaneKey> {
  const { privatePath } = keyPaths(dataDir);
  if (!existsSync(privatePath)) throw new Error(`${dataDir} has no plane key (${privatePath})`);
  return readKey(privatePath);
}

export async function loadOrCreatePlaneKey(dataDir: string): Promise<PlaneKey> {
  const { dir, privatePath, publicPath } = keyPaths(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(privatePath)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    // Written to a temporary name and hard-linked into place: link() fails with EEXIST when the
    // key exists, which makes "create if absent" atomic. Two processes opening a new data dir
    // at once therefore end up with one key, never with each signing under its own.
    const tmp = `${privatePath}.${process.pid}.tmp`;
    writePrivateFile(tmp, JSON.stringify(jwk));
    try {
      linkSync(tmp, privatePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(tmp);
    }
  }
  const key = await readKey(privatePath);
  writePrivateFile(publicPath, JSON.stringify(key.publicJwk));
  return key;
}

async function readKey(privatePath: string): Promise<PlaneKey> {
  const privateJwk = JSON.parse(readFileSync(privatePath, 'utf8')) as JsonWebKeyInput['key'];
  const privateKey = createPrivateKey({ key: privateJwk, format: 'jwk' });
  const publicKey = createPublicKey(privateKey);
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  return { privateKey, publicKey, publicJwk, keyId: await keyIdOf(publicJwk) };
}
