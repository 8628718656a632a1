import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { LookupKind } from '@dossier/domain';
import { PROVIDERS, providersFor } from '@dossier/providers';
import { SearchesRepository, SuppressionsRepository, WatchlistRepository } from '@dossier/persistence';
import { DATA_SOURCE } from '../infra/tokens';
import { FanOut } from '../fan-out/fan-out';
import { SuppressionFilter } from '../fan-out/suppression';
import { OutboxRelayService } from '../webhooks/outbox-relay.service';
import { LookupProcessor } from './lookup.processor';

/** Assembles each lookup kind's processor from the provider registry and the worker's services. */
@Injectable()
export class LookupProcessors {
  /** One list for every kind's processor: the checks of all of them made at the same time share a query. */
  private readonly suppressions: SuppressionsRepository;
  /** The providers whose answer is only associated accounts (`findsOnly: 'accounts'`). */
  private readonly accountsOnly = new Set(PROVIDERS.filter((p) => p.findsOnly === 'accounts').map((p) => p.id));
  /** The providers whose items are sanctions-list entities (`findsOnly: 'watchlist_hits'`): never suppressed. */
  private readonly listedOnly = new Set(PROVIDERS.filter((p) => p.findsOnly === 'watchlist_hits').map((p) => p.id));

  constructor(
    private readonly searches: SearchesRepository,
    @Inject(DATA_SOURCE) db: DataSource,
    private readonly fanOut: FanOut,
    private readonly relay: OutboxRelayService,
    /** The imported sanctions lists, which the fan-out's `watchlists` provider reads too. */
    private readonly watchlists: WatchlistRepository,
  ) {
    this.suppressions = new SuppressionsRepository(db);
  }

  for(kind: LookupKind): LookupProcessor<LookupKind> {
    return new LookupProcessor(
      kind,
      providersFor(kind, PROVIDERS),
      providersFor(kind, PROVIDERS, 'test'),
      this.searches,
      this.fanOut,
      new SuppressionFilter(this.suppressions, this.accountsOnly, this.listedOnly),
      () => this.relay.wake(),
      this.watchlists,
    );
  }
}
