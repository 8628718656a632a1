import { createReadStream } from 'node:fs';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { DomainError } from '@dossier/domain';
import { Public } from '../auth/public.decorator';
import { ApiDoc } from './api-doc.decorator';
import { DOCS_ASSETS, DOCS_CSP, DOCS_HTML } from './docs-page';
import { OpenApiService } from './openapi.service';

const ASSET_CACHE = 'public, max-age=3600';

@Public()
@Controller()
export class OpenApiController {
  constructor(private readonly openapi: OpenApiService) {}

  @Get('v1/openapi.json')
  @ApiDoc({
    tag: 'operations',
    summary: 'This OpenAPI 3.1 document',
    description: 'Generated at boot from the routes the gateway serves and the schemas their handlers validate with.',
    auth: false,
    status: 200,
    response: z
      .looseObject({ openapi: z.string().describe('3.1.x') })
      .meta({ examples: [{ openapi: '3.1.1', info: { title: 'Dossier', version: '1.0.0' } }] }),
    errors: ['rate_limited', 'unavailable'],
  })
  document(@Res() res: FastifyReply): void {
    void res.header('Content-Type', 'application/json; charset=utf-8').send(this.openapi.document);
  }

  @Get('docs')
  @ApiDoc({
    tag: 'operations',
    summary: 'Interactive API reference (Swagger UI)',
    auth: false,
    status: 200,
    contentType: 'text/html',
    errors: [],
  })
  page(@Res() res: FastifyReply): void {
    void res
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Content-Security-Policy', DOCS_CSP)
      .header('Cache-Control', 'no-cache')
      .send(DOCS_HTML);
  }

  @Get('docs/assets/:file')
  @ApiDoc({
    tag: 'operations',
    summary: "The reference page's scripts, styles and icon",
    auth: false,
    status: 200,
    contentType: '*/*',
    pathParams: { file: 'asset name, as linked from /docs' },
    errors: ['not_found'],
  })
  asset(@Param('file') name: string, @Res() res: FastifyReply): void {
    const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    if (!asset) throw new DomainError('not_found', 'no such asset');
    void res.header('Content-Type', asset.type).header('Cache-Control', ASSET_CACHE);
    void res.send('file' in asset ? createReadStream(asset.file) : asset.text);
  }
}
