import { Inject, Injectable } from '@nestjs/common';
import { DomainError, creditsSpent } from '@dossier/domain';
import { SearchHistoryRepository, type HistoryEntry } from '@dossier/persistence';
import type { AuthContext } from '../auth/auth-context';
import { decodeCursor, encodeCursor } from './history-cursor';
import type { HistoryQuery, HistoryResponse } from './history.schema';

const DEFAULT_LIMIT = 20;

/** `GET /v1/searches`: the account's own searches, newest first, a keyset page at a time. */
@Injectable()
export class SearchHistoryService {
  constructor(@Inject(SearchHistoryRepository) private readonly history: SearchHistoryRepository) {}

  async list(query: HistoryQuery, auth: AuthContext): Promise<HistoryResponse> {
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    if (query.cursor !== undefined && before === null) {
      throw DomainError.validation([{ field: 'cursor', issue: 'is not a next_cursor from a previous page' }]);
    }
    const limit = query.limit ?? DEFAULT_LIMIT;
    // One more than a page: whether it exists says if there is a next page, so the last page says null.
    const rows = await this.history.page(
      auth.accountId,
      { kind: query.kind ?? null, since: query.since ?? null, until: query.until ?? null, mode: auth.mode },
      before,
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      status: 'success',
      searches: page.map(itemOf),
      next_cursor: rows.length > limit && last ? encodeCursor(last.position) : null,
    };
  }
}

function itemOf(s: HistoryEntry): HistoryResponse['searches'][number] {
  return {
    search_id: s.id,
    kind: s.kind,
    status: s.status,
    created_at: s.created_at.toISOString(),
    completed_at: s.completed_at?.toISOString() ?? null,
    credits_spent: creditsSpent(s),
    permissible_purpose: s.permissible_purpose,
    result_count: s.result_count,
  };
}
