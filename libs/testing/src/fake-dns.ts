import dns2 from 'dns2';
import { RESOLVER_CANARY } from '@dossier/providers';

const { Packet } = dns2;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** The records of one name. An MX exchange of `.` is a null MX (RFC 7505). */
export interface DnsRecords {
  /** `[preference, exchange]` pairs. */
  mx?: [number, string][];
  a?: string[];
  aaaa?: string[];
}

/**
 * How one name answers: its records (a type it has none of answers NOERROR with no records: NODATA), or
 * `nxdomain`, `servfail`, `refused`, or `timeout` (never answers). Names not scripted are NXDOMAIN.
 */
export type DnsName = DnsRecords | 'nxdomain' | 'servfail' | 'refused' | 'timeout';

/** An answer that changes from one query to the next (DNS rebinding): `asked` is how many of this name and type came before. */
export type DnsScript = (type: string, asked: number) => DnsName;

/**
 * A DNS server on 127.0.0.1 (UDP) that answers what the test scripts, per name, and records every query.
 * Point `DNS_SERVERS` at `server`. It answers the resolver canary (`RESOLVER_CANARY`, a name that always
 * exists) as a sane resolver does, so that its NXDOMAINs are believed; a resolver that lies — NXDOMAIN for
 * every name — is one started with the canary scripted `nxdomain` (`FakeDns.lying()`).
 */
export class FakeDns {
  readonly queries: { name: string; type: string }[] = [];
  private readonly names = new Map<string, DnsName | DnsScript>();

  private constructor(
    private readonly dns: ReturnType<typeof dns2.createServer>,
    /** `127.0.0.1:<port>`, as `DNS_SERVERS` takes it. */
    readonly server: string,
  ) {}

  static async start(names: Record<string, DnsName | DnsScript> = {}): Promise<FakeDns> {
    const handlers: { handle?: FakeDns['handle'] } = {};
    const dns = dns2.createServer({ udp: true, handle: (request, send) => handlers.handle?.(request, send) });
    const addresses = await dns.listen({ udp: { port: 0, address: '127.0.0.1' } });
    const port = addresses.udp?.port;
    if (!port) throw new Error('fake DNS has no port');
    const fake = new FakeDns(dns, `127.0.0.1:${port}`);
    handlers.handle = (request, send) => fake.handle(request, send);
    fake.set(RESOLVER_CANARY, {});
    for (const [name, answer] of Object.entries(names)) fake.set(name, answer);
    return fake;
  }

  /** A resolver that answers NXDOMAIN for every name, the canary included (captive portals, broken DNS). */
  static lying(): Promise<FakeDns> {
    return FakeDns.start({ [RESOLVER_CANARY]: 'nxdomain' });
  }

  /** Scripts how `name` answers from now on: always the same, or query by query. */
  set(name: string, answer: DnsName | DnsScript): this {
    this.names.set(name.toLowerCase().replace(/\.$/, ''), answer);
    return this;
  }

  async close(): Promise<void> {
    await this.dns.close();
  }

  private handle(request: dns2.Packet, send: (response: dns2.Packet) => Promise<Buffer>): void {
    const question = request.questions[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const type = Object.entries(Packet.TYPE).find(([, code]) => code === question.type)?.[0] ?? String(question.type);
    const asked = this.queries.filter((q) => q.name === name && q.type === type).length;
    this.queries.push({ name, type });
    const scripted = this.names.get(name) ?? 'nxdomain';
    const answer = typeof scripted === 'function' ? scripted(type, asked) : scripted;
    if (answer === 'timeout') return;
    const response = Packet.createResponseFromRequest(request);
    const record = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
    if (answer === 'nxdomain') response.header.rcode = RCODE.NXDOMAIN;
    else if (answer === 'servfail') response.header.rcode = RCODE.SERVFAIL;
    else if (answer === 'refused') response.header.rcode = RCODE.REFUSED;
    else if (type === 'MX') {
      for (const [priority, exchange] of answer.mx ?? []) {
        response.answers.push({
          ...record,
          type: Packet.TYPE.MX,
          priority,
          exchange: exchange === '.' ? '' : exchange,
        } as dns2.Packet.Resource);
      }
    } else if (type === 'A' || type === 'AAAA') {
      for (const address of (type === 'A' ? answer.a : answer.aaaa) ?? []) {
        response.answers.push({ ...record, type: Packet.TYPE[type], address } as dns2.Packet.Resource);
      }
    }
    void send(response);
  }
}
