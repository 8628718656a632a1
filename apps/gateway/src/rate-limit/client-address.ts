import { isIP, isIPv4, isIPv6 } from 'node:net';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
/** `203.0.113.7:41234`, `[2001:db8::1]:443`, `[2001:db8::1]`: an address as some proxies write it. */
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}|\[([^\]]+)\](?::\d{1,5})?)$/;

/**
 * The rate-limit identity of a client address (`ip:<…>`, ADR 0007). An IPv6 client is given a whole
 * /64 (one host, one LAN) and picks any address in it, so its bucket is its /64: `ip:2001:db8:1:2::/64`.
 * An IPv4-mapped IPv6 address (`::ffff:203.0.113.7`) is the IPv4 client it names. A port after the
 * address (`203.0.113.7:41234`, `[2001:db8::1]:443`: what Azure Application Gateway and some other proxies
 * append to X-Forwarded-For) is left out: it changes with every connection of the same client. Anything
 * else is used as it is.
 */
export function addressIdentity(address: string): string {
  return `ip:${addressBucket(address)}`;
}

function addressBucket(written: string): string {
  const port = WITH_PORT.exec(written);
  const bare = port?.[1] ?? port?.[2];
  const address = bare !== undefined && isIP(bare.split('%', 1)[0] ?? bare) ? bare : written;
  const host = address.split('%', 1)[0] ?? address; // a zone index (`fe80::1%eth0`) names no other host
  if (!isIPv6(host)) return address;
  const mapped = MAPPED_IPV4.exec(host)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  return `${ipv6Groups(host).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [g];
          // A trailing dotted quad is the last two groups.
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array.from({ length: 8 - front.length - back.length }, () => '0');
  return [...front, ...zeros, ...back].map((g) => parseInt(g, 16).toString(16));
}
