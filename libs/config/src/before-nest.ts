/**
 * What each app's `main` imports first, before Nest loads (ADR 0030). It imports nothing but
 * `./date-formats`. Loading the rest of this lib ahead of Nest (zod is enough) left a loaded gateway
 * with 17–29 MiB more RSS: V8 pages outside every heap space, measured and not understood.
 */
import { deferDateFormats } from './date-formats';

deferDateFormats();
