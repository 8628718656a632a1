/**
 * Defers building `Intl.DateTimeFormat`s while an app's modules load (ADR 0030).
 *
 * Nest's two logger modules each build an `Intl.DateTimeFormat` as they are imported, for the console
 * format Nest prints in. The apps log through pino, so those formatters normally never format
 * anything, but building one makes ICU read its locale and calendar data out of the `node` binary:
 * 4.6–4.8 MiB of file-backed pages that then stay in each process's RSS.
 *
 * Until the current turn of the event loop ends (the apps call this before importing Nest, and their
 * whole module graph loads in that turn), `Intl.DateTimeFormat` hands out formatters that build the
 * real one on first use and forward everything to it; then the real constructor is back. A deferred
 * formatter behaves as the real one would (same results, same errors at first use instead of at
 * construction, `instanceof` holds); only formatters built in that turn are deferred.
 */
export function deferDateFormats(): void {
  const intl = globalThis.Intl;
  const real = intl.DateTimeFormat;
  if (deferring.has(real)) return;
  const deferred = new Proxy(real, {
    construct: (_target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) => lazyFormat(real, args),
    apply: (_target, _this, args: ConstructorParameters<typeof Intl.DateTimeFormat>) => lazyFormat(real, args),
  });
  deferring.add(deferred);
  intl.DateTimeFormat = deferred;
  setImmediate(() => {
    if (intl.DateTimeFormat === deferred) intl.DateTimeFormat = real;
  });
}

/** The deferring constructors installed, so that a second call in the same turn is a no-op. */
const deferring = new WeakSet<typeof Intl.DateTimeFormat>();

function lazyFormat(
  real: typeof Intl.DateTimeFormat,
  args: ConstructorParameters<typeof Intl.DateTimeFormat>,
): Intl.DateTimeFormat {
  let format: Intl.DateTimeFormat | undefined;
  const built = (): Intl.DateTimeFormat => (format ??= new real(...args));
  return new Proxy(Object.create(real.prototype) as Intl.DateTimeFormat, {
    get: (_target, property) => {
      const value: unknown = Reflect.get(built(), property);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(built()) : value;
    },
    has: (_target, property) => property in built(),
  });
}
