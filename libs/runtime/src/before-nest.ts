/**
 * What each app's `main` imports first, before Nest loads. It imports nothing but `./early-stop` (ADR
 * 0040: the stop signals are taken from here on) and `./date-formats` (ADR 0030). Loading the rest of this
 * lib ahead of Nest (zod is enough) left a loaded gateway with 17–29 MiB more RSS: V8 pages outside every
 * heap space, measured and not understood.
 */
import { catchStopsEarly } from './early-stop';
import { deferDateFormats } from './date-formats';

catchStopsEarly();
deferDateFormats();
