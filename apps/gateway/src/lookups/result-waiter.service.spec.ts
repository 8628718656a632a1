import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { loadGatewayConfig } from '@dossier/config';
import { RedisConnections } from '@dossier/runtime';
import { newId } from '@dossier/domain';
import type { LookupJobResult } from '@dossier/contracts';
import { SearchesRepository } from '@dossier/persistence';
import { GATEWAY_CONFIG, REDIS_CONNECTIONS, STARTING } from '../infra/tokens';
import { ResultWaiterService } from './result-waiter.service';

describe('ResultWaiterService', () => {
  let waiter: ResultWaiterService;
  const settledInPostgres = new Set<string>();
  const findSettled = jest.fn(async (ids: string[]) => ids.filter((id) => settledInPostgres.has(id)));

  beforeEach(async () => {
    settledInPostgres.clear();
    findSettled.mockClear();
    // Not initialised: no reply channel is subscribed; the tests feed the messages in themselves.
    const moduleRef = await Test.createTestingModule({
      providers: [
        ResultWaiterService,
        { provide: GATEWAY_CONFIG, useValue: loadGatewayConfig({}) },
        { provide: REDIS_CONNECTIONS, useValue: new RedisConnections(loadGatewayConfig({}).redis, 'turn') },
        { provide: STARTING, useValue: new AbortController().signal },
        { provide: SearchesRepository, useValue: { findSettled } },
      ],
    }).compile();
    waiter = moduleRef.get(ResultWaiterService);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const result = (searchId: string): LookupJobResult => ({
    v: 1,
    search_id: searchId,
    status: 'succeeded',
    outcome: { charged: true, balance: 9, results: [{ e164: '+14155552671' }], sources: [] },
  });

  it('wakes a waiter with the outcome its completion event carries', async () => {
    const id = newId.search();
    const watch = waiter.watch(id);
    const next = watch.next(10_000);
    waiter.replied(JSON.stringify(result(id)));
    await expect(next).resolves.toEqual(result(id));
    watch.dispose();
  });

  it('keeps an event that arrives before the waiter asks (registered before enqueueing)', async () => {
    const id = newId.search();
    const watch = waiter.watch(id);
    waiter.replied(JSON.stringify(result(id)));
    await expect(watch.next(10_000)).resolves.toEqual(result(id));
    watch.dispose();
  });

  it('wakes every waiter of the same search, and none of another', async () => {
    jest.useFakeTimers();
    const id = newId.search();
    const a = waiter.watch(id);
    const b = waiter.watch(id);
    const other = waiter.watch(newId.search());
    const seen = Promise.all([a.next(5000), b.next(5000)]);
    let otherWoken = false;
    void other.next(5000).then(() => (otherWoken = true));
    waiter.replied(JSON.stringify(result(id)));
    await expect(seen).resolves.toEqual([result(id), result(id)]);
    await Promise.resolve();
    expect(otherWoken).toBe(false);
    jest.advanceTimersByTime(5000);
    await Promise.resolve();
    expect(otherWoken).toBe(true);
    for (const w of [a, b, other]) w.dispose();
  });

  it('wakes with the bare pointer on a failure (the caller reads Postgres), and ignores a message it cannot read', async () => {
    jest.useFakeTimers();
    const id = newId.search();
    const watch = waiter.watch(id);
    const next = watch.next(10_000);
    waiter.replied(JSON.stringify({ v: 1, search_id: id, status: 'failed' }));
    await expect(next).resolves.toEqual({ v: 1, search_id: id, status: 'failed' });
    // Unreadable: nobody is woken by it — the waiter times out, or the fallback poll finds the search.
    const garbled = watch.next(1000);
    waiter.replied('{not json');
    waiter.replied(JSON.stringify({ v: 99, search_id: id }));
    jest.advanceTimersByTime(1000);
    await expect(garbled).resolves.toBeUndefined();
    watch.dispose();
  });

  it('gives up at the timeout with nothing', async () => {
    jest.useFakeTimers();
    const watch = waiter.watch(newId.search());
    const next = watch.next(250);
    jest.advanceTimersByTime(250);
    await expect(next).resolves.toBeUndefined();
    watch.dispose();
  });

  it('finds settled searches in Postgres for waiters that heard nothing for a while (a missed event)', async () => {
    jest.useFakeTimers();
    const quiet = newId.search();
    const fresh = newId.search();
    const quietWatch = waiter.watch(quiet);
    jest.advanceTimersByTime(1500);
    const freshWatch = waiter.watch(fresh);
    settledInPostgres.add(quiet).add(fresh);
    const next = quietWatch.next(60_000);
    await waiter.pollSettled();
    await expect(next).resolves.toBeUndefined();
    // Only waiters older than the poll interval are checked: a fresh one waits for its event.
    expect(findSettled).toHaveBeenCalledWith([quiet]);
    quietWatch.dispose();
    freshWatch.dispose();
  });

  it('forgets a search once its last waiter is disposed', async () => {
    const id = newId.search();
    waiter.watch(id).dispose();
    jest.useFakeTimers();
    jest.advanceTimersByTime(5000);
    settledInPostgres.add(id);
    await waiter.pollSettled();
    expect(findSettled).not.toHaveBeenCalled();
  });
});
