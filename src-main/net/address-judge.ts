/**
 * The one rule for which IP addresses the plane may connect to on behalf of anything a card, a
 * redirect, a model or a DNS answer chose: netguard.ts calls it at connect time for every address
 * a name resolves to, and for an IP-literal host directly. Two implementations of one rule
 * diverge, and the one that diverges is whichever nobody probed at the boundary, so there is one.
 *
 * Allowed: global unicast only. Refused, each with its reason: loopback, private (RFC 1918),
 * unique local (fc00::/7), link-local (169.254/16, fe80::/10), CGNAT (100.64/10), multicast,
 * unspecified, broadcast, reserved and every other special-purpose range ipaddr.js knows, and the
 * cloud metadata addresses (named as such, before the range they sit in). An IPv6 address that
 * carries an IPv4 one (mapped ::ffff:a.b.c.d, SIIT ::ffff:0:a.b.c.d, compatible ::a.b.c.d, NAT64
 * 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32) is judged by the IPv4 address it reaches, since
 * that is where the packets end up.
 *
 * Parsing is ipaddr.js (never the `ip` package, whose isPrivate misread these forms for years).
 * It accepts the legacy IPv4 spellings the WHATWG URL parser also normalises (decimal
 * 2130706433, octal 0177.0.0.1, hex 0x7f.0.0.1, short 127.1), so a string that reached us
 * unnormalised is judged as the address it means, not refused as garbage or passed as a name.
 */
import ipaddr from 'ipaddr.js';

export type AddressJudgement = { allowed: true } | { allowed: false; reason: string };

/** The instance metadata services (AWS, GCP, Azure, OCI on the IPv4 one; AWS Nitro on the IPv6 one). */
const METADATA_V4 = '169.254.169.254';
const METADATA_V6 = 'fd00:ec2::254';

const V4_REASONS: Record<string, string> = {
  unspecified: 'is the unspecified address (0.0.0.0/8)',
  broadcast: 'is the broadcast address',
  multicast: 'is multicast (224.0.0.0/4)',
  linkLocal: 'is link-local (169.254.0.0/16)',
  loopback: 'is loopback (127.0.0.0/8): this machine',
  carrierGradeNat: 'is carrier-grade NAT space (100.64.0.0/10)',
  private: 'is a private network address (RFC 1918)',
  reserved: 'is in a reserved range',
};

const V6_REASONS: Record<string, string> = {
  unspecified: 'is the unspecified address (::)',
  linkLocal: 'is link-local (fe80::/10)',
  multicast: 'is multicast (ff00::/8)',
  loopback: 'is loopback (::1): this machine',
  uniqueLocal: 'is a unique local address (fc00::/7)',
  deprecatedSiteLocal: 'is site-local (fec0::/10)',
  discard: 'is the discard prefix (100::/64)',
  reserved: 'is in a reserved range',
};

function refuse(address: string, why: string): AddressJudgement {
  return { allowed: false, reason: `${address} ${why}` };
}

function judgeV4(v4: ipaddr.IPv4, shown: string): AddressJudgement {
  const text = v4.toString();
  if (text === METADATA_V4) return refuse(shown, shown === text ? 'is the cloud metadata address' : `reaches ${text}, the cloud metadata address`);
  const range = v4.range();
  if (range === 'unicast') return { allowed: true };
  const why = V4_REASONS[range] ?? `is in the special-purpose range "${range}"`;
  return refuse(shown, shown === text ? why : `reaches ${text}, which ${why}`);
}

function v4From(bytes: number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes);
}

/** The IPv4 address an IPv6 one carries by a translation or tunnel form, and that form's name. */
function embeddedV4(v6: ipaddr.IPv6): { v4: ipaddr.IPv4; form: string } | null {
  const b = v6.toByteArray();
  const last4 = b.slice(12, 16);
  const range = v6.range();
  if (range === 'ipv4Mapped') return { v4: v4From(last4), form: 'IPv4-mapped' };
  if (range === 'rfc6145') return { v4: v4From(last4), form: 'IPv4-translated (SIIT)' };
  if (range === 'rfc6052') return { v4: v4From(last4), form: 'NAT64' };
  if (range === '6to4') return { v4: v4From(b.slice(2, 6)), form: '6to4' };
  // Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: packets reach the client's IPv4 address,
  // stored inverted in the last 32 bits.
  if (range === 'teredo') return { v4: v4From(last4.map((x) => x ^ 0xff)), form: 'Teredo' };
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291 2.5.5.1): ipaddr.js calls it unicast.
  // :: and ::1 are themselves, not a compatible form of 0.0.0.0 and 0.0.0.1.
  if (b.slice(0, 12).every((x) => x === 0) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && (b[15] ?? 0) <= 1)) {
    return { v4: v4From(last4), form: 'IPv4-compatible' };
  }
  return null;
}

function judgeV6(v6: ipaddr.IPv6, shown: string): AddressJudgement {
  const plain = new ipaddr.IPv6(v6.parts); // without a zone id
  if (plain.toString() === METADATA_V6) return refuse(shown, 'is the cloud metadata address (IPv6)');
  const embedded = embeddedV4(plain);
  if (embedded) {
    const inner = judgeV4(embedded.v4, embedded.v4.toString());
    if (!inner.allowed) return refuse(shown, `is the ${embedded.form} form of ${inner.reason}`);
    // RFC 8215's local-use NAT64 prefix is translated by a translator on this network, whatever
    // the IPv4 address inside: what it reaches is the operator's choice, not the address's.
    if (plain.match(ipaddr.IPv6.parse('64:ff9b:1::'), 48)) return refuse(shown, 'is in the local-use NAT64 prefix (64:ff9b:1::/48)');
    return { allowed: true };
  }
  const range = plain.range();
  if (range === 'unicast') return { allowed: true };
  return refuse(shown, V6_REASONS[range] ?? `is in the special-purpose range "${range}"`);
}

/**
 * Judges one address (IPv4 in any spelling ipaddr.js accepts, or IPv6 with or without brackets
 * and a zone id). Text that is not an IP address is refused: a caller passes addresses only.
 */
export function judgeAddress(address: string): AddressJudgement {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(text);
  } catch {
    return { allowed: false, reason: `${JSON.stringify(address.slice(0, 80))} is not an IP address` };
  }
  if (parsed.kind() === 'ipv4') return judgeV4(parsed as ipaddr.IPv4, text);
  const v6 = parsed as ipaddr.IPv6;
  // A zone id scopes an address to one of this machine's interfaces: whatever the address, it
  // names the local link. (Usually link-local already; refused on its own terms either way.)
  if (v6.zoneId !== undefined) {
    const inner = judgeV6(v6, text);
    return inner.allowed ? refuse(text, 'names a local interface (an IPv6 zone id)') : inner;
  }
  return judgeV6(v6, text);
}

/** Whether text is an IP address ipaddr.js would parse (any IPv4 spelling, IPv6 with or without brackets). */
export function isIpLiteral(text: string): boolean {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return ipaddr.isValid(bare);
}
