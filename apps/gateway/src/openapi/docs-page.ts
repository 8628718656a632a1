import { join } from 'node:path';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';

export const DOCS_PATH = '/docs';
const ASSETS_PATH = `${DOCS_PATH}/assets`;
export const OPENAPI_PATH = '/v1/openapi.json';

/** swagger-ui-dist ships the UI prebuilt; the gateway serves it itself (no CDN). */
const SWAGGER_UI_DIR: string = getAbsoluteFSPath();

/** Started from a file, not inline, so the page works under a strict script-src. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '${OPENAPI_PATH}', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });
});
`;

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Dossier API</title>
  <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png">
  <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS_PATH}/init.js"></script>
</body>
</html>
`;

/** Everything the page loads is ours; Swagger UI needs inline styles and data: images, nothing else. */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export type DocsAsset = { type: string } & ({ file: string } | { text: string });

/** The only files under /docs/assets: a fixed list, so no request path ever reaches the file system. */
export const DOCS_ASSETS: Record<string, DocsAsset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: join(SWAGGER_UI_DIR, 'swagger-ui.css') },
  'swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    file: join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'),
  },
  'favicon-32x32.png': { type: 'image/png', file: join(SWAGGER_UI_DIR, 'favicon-32x32.png') },
  'init.js': { type: 'text/javascript; charset=utf-8', text: INIT_SCRIPT },
};
