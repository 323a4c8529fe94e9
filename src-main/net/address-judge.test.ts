import { describe, expect, it } from 'vitest';
import { judgeAddress, isIpLiteral } from './address-judge';

function reasonOf(address: string): string {
  const verdict = judgeAddress(address);
  if (verdict.allowed) throw new Error(`${address} was allowed`);
  return verdict.reason;
}

describe('judgeAddress', () => {
  it('allows global unicast, v4 and v6', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700::1111', '[2001:4860:4860::8888]', '64:ff9b::808:808', '2002:808:808::1']) {
      expect(judgeAddress(a), a).toEqual({ allowed: true });
    }
  });

  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.0.0.1', /private network address \(RFC 1918\)/],
    ['172.16.5.4', /RFC 1918/],
    ['192.168.1.1', /RFC 1918/],
    ['169.254.169.254', /169\.254\.169\.254 is the cloud metadata address/],
    ['169.254.1.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['224.0.0.1', /multicast/],
    ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.2.1', /reserved/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fd00:ec2::254', /cloud metadata address \(IPv6\)/],
    ['ff02::1', /multicast/],
    ['fec0::1', /site-local/],
    ['2001:db8::1', /reserved/],
  ])('refuses %s', (address, reason) => {
    expect(reasonOf(address)).toMatch(reason);
  });

  it('judges the legacy IPv4 spellings as the address they mean', () => {
    expect(reasonOf('2130706433')).toMatch(/reaches 127\.0\.0\.1, which is loopback/);
    expect(reasonOf('0177.0.0.1')).toMatch(/reaches 127\.0\.0\.1/);
    expect(reasonOf('0x7f.0.0.1')).toMatch(/reaches 127\.0\.0\.1/);
    expect(reasonOf('0x7f000001')).toMatch(/reaches 127\.0\.0\.1/);
    expect(reasonOf('127.1')).toMatch(/reaches 127\.0\.0\.1/);
    expect(reasonOf('10.1')).toMatch(/reaches 10\.0\.0\.1, which is a private network address/);
    expect(reasonOf('0xa9fea9fe')).toMatch(/reaches 169\.254\.169\.254, the cloud metadata address/);
  });

  it('judges an IPv6 form by the IPv4 address it carries', () => {
    expect(reasonOf('::ffff:127.0.0.1')).toMatch(/IPv4-mapped form of 127\.0\.0\.1 is loopback/);
    expect(reasonOf('[::ffff:7f00:1]')).toMatch(/IPv4-mapped form of 127\.0\.0\.1/);
    expect(reasonOf('0:0:0:0:0:ffff:169.254.169.254')).toMatch(/IPv4-mapped form of 169\.254\.169\.254 is the cloud metadata address/);
    expect(reasonOf('::ffff:0:a00:1')).toMatch(/SIIT\) form of 10\.0\.0\.1/);
    expect(reasonOf('::7f00:1')).toMatch(/IPv4-compatible form of 127\.0\.0\.1/);
    expect(reasonOf('::a9fe:a9fe')).toMatch(/IPv4-compatible form of 169\.254\.169\.254/);
    expect(reasonOf('64:ff9b::a9fe:a9fe')).toMatch(/NAT64 form of 169\.254\.169\.254 is the cloud metadata address/);
    expect(reasonOf('64:ff9b:1::a00:1')).toMatch(/NAT64 form of 10\.0\.0\.1/);
    expect(reasonOf('64:ff9b:1::808:808')).toMatch(/local-use NAT64 prefix/);
    expect(reasonOf('2002:a9fe:a9fe::1')).toMatch(/6to4 form of 169\.254\.169\.254/);
    expect(reasonOf('2002:c0a8:101::1')).toMatch(/6to4 form of 192\.168\.1\.1/);
    // Teredo: client 127.0.0.1 stored inverted (80ff:fffe) in the last 32 bits.
    expect(reasonOf('2001:0:4136:e378:8000:63bf:80ff:fffe')).toMatch(/Teredo form of 127\.0\.0\.1/);
  });

  it('refuses a zone id even on an address that would otherwise pass', () => {
    expect(reasonOf('fe80::1%eth0')).toMatch(/link-local/);
    expect(reasonOf('2606:4700::1111%eth0')).toMatch(/zone id/);
  });

  it('refuses text that is not an address, saying so', () => {
    expect(reasonOf('example.com')).toMatch(/"example\.com" is not an IP address/);
    expect(isIpLiteral('example.com')).toBe(false);
    expect(isIpLiteral('[::1]')).toBe(true);
  });
});
