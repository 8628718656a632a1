// `npm run docs:config`: writes docs/configuration.md from the apps' environment schemas
// (libs/config/src/env.ts) through the compiled module, so the npm script builds first.
// libs/config/src/env-reference.spec.ts fails while the file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { envReference } = require('../dist/libs/config/src/env-reference.js');
const target = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(target, envReference());
console.log(`wrote ${target.pathname}`);
