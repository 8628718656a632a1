import { ownDatabase, switchDatabase } from './db';
import { Api } from './http-client';
import { Stack, type StackOptions } from './processes';
import { QueueProbe } from './queues';

/** The phone number the crash and money specs look up (any valid number would do). */
export const CRASH_PHONE = { phone: '+14155552671' };

/**
 * The stack of the crash and money specs: a gateway and no worker (each test starts, and kills, the
 * workers it needs), with a probe on its queues, on a database of the file's own. Their workers
 * reconcile within seconds, and a reconciler fails every stale pending search in its database whose
 * job it cannot find under its own queue prefix: in the run's shared database that would include
 * other files' searches.
 */
export class CrashStack {
  private constructor(
    readonly stack: Stack,
    readonly api: Api,
    readonly queues: QueueProbe,
    private readonly leaveDatabase: () => Promise<void>,
  ) {}

  static async start(options: Omit<StackOptions, 'noWorker'> & { label: string }): Promise<CrashStack> {
    const database = await ownDatabase(options.label);
    const restore = switchDatabase(database.url);
    const leave = async () => {
      restore();
      await database.drop();
    };
    try {
      const stack = await Stack.start({ ...options, noWorker: true });
      return new CrashStack(stack, new Api(stack.baseUrl), new QueueProbe(stack.env['QUEUE_PREFIX']!), leave);
    } catch (err) {
      await leave();
      throw err;
    }
  }

  /** SIGKILLs every worker a test started: none may leak into the next test. */
  async killWorkers(): Promise<void> {
    await Promise.all(this.stack.workers.map((w) => w.stop('SIGKILL')));
  }

  async close(): Promise<void> {
    await this.queues.close();
    await this.stack.stop();
    await this.leaveDatabase();
  }

  /** A phone lookup accepted asynchronously (202): its search id, which is also its job id. */
  async submitAsync(key: string, api: Api = this.api): Promise<string> {
    const res = await api.post<{ search_id: string }>('/v1/verify/phone', CRASH_PHONE, {
      key,
      headers: { prefer: 'respond-async' },
    });
    if (res.status !== 202) throw new Error(`expected 202 for an async lookup, got ${res.status}: ${res.text}`);
    return res.body.search_id;
  }
}
