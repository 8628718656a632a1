import { Controller, Get, Query } from '@nestjs/common';
import { CurrentAuth, type AuthContext } from '../auth/auth-context';
import { parseQuery } from '../http/validation';
import { ApiDoc } from '../openapi/api-doc.decorator';
import { historyQuery, historyResponse, type HistoryResponse } from './history.schema';
import { SearchHistoryService } from './search-history.service';

@Controller('v1')
export class HistoryController {
  constructor(private readonly history: SearchHistoryService) {}

  @Get('searches')
  @ApiDoc({
    tag: 'lookups',
    summary: "The account's searches, newest first",
    description:
      "One page of the calling account's own searches (any of its keys of the calling key's mode: a test key lists " +
      'only test searches), newest first: kind, status, times, credits ' +
      'and purpose; inputs and results are at `GET /v1/searches/{id}`. Pages follow `next_cursor` (null on the last ' +
      'page), which marks a place in the list: searches made while paging never repeat or shift a page. Listing costs nothing.',
    query: historyQuery,
    status: 200,
    response: historyResponse,
    errors: ['validation_error', 'unauthorized', 'rate_limited', 'unavailable'],
  })
  list(@Query() query: unknown, @CurrentAuth() auth: AuthContext): Promise<HistoryResponse> {
    return this.history.list(parseQuery(historyQuery, query), auth);
  }
}
