import { addressIdentity } from './client-address';

describe('addressIdentity', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(addressIdentity('203.0.113.7')).toBe('ip:203.0.113.7');
  });

  it('gives every address of one IPv6 /64 the same identity, however it is written', () => {
    const ids = [
      '2001:db8:1:2::1',
      '2001:DB8:1:2::abcd',
      '2001:0db8:0001:0002:ffff:0:0:9',
      '2001:db8:1:2:dead:beef:1.2.3.4',
      '2001:db8:1:2::7%eth0',
    ].map(addressIdentity);
    expect(new Set(ids)).toEqual(new Set(['ip:2001:db8:1:2::/64']));
    expect(addressIdentity('2001:db8:1:3::1')).toBe('ip:2001:db8:1:3::/64');
    expect(addressIdentity('::1')).toBe('ip:0:0:0:0::/64');
    expect(addressIdentity('fe80::')).toBe('ip:fe80:0:0:0::/64');
  });

  it('reads an IPv4-mapped IPv6 address as the IPv4 client', () => {
    expect(addressIdentity('::ffff:203.0.113.7')).toBe('ip:203.0.113.7');
    expect(addressIdentity('::FFFF:203.0.113.7')).toBe('ip:203.0.113.7');
  });

  it('reads an address a proxy wrote with its port (IP:port, [IPv6]:port) as the address alone', () => {
    // Azure Application Gateway and some IIS set-ups append `IP:port` to X-Forwarded-For: each new
    // connection of a client would otherwise have a bucket of its own.
    expect(addressIdentity('203.0.113.7:41234')).toBe('ip:203.0.113.7');
    expect(addressIdentity('[2001:db8:1:2::1]:443')).toBe('ip:2001:db8:1:2::/64');
    expect(addressIdentity('[2001:db8:1:2::1]')).toBe('ip:2001:db8:1:2::/64');
    expect(addressIdentity('[::ffff:203.0.113.7]:80')).toBe('ip:203.0.113.7');
  });

  it('uses anything that is not an IP address as it is', () => {
    expect(addressIdentity('unknown')).toBe('ip:unknown');
    expect(addressIdentity('203.0.113.7:port')).toBe('ip:203.0.113.7:port');
    expect(addressIdentity('[unknown]:80')).toBe('ip:[unknown]:80');
  });
});
