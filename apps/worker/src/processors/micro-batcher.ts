/**
 * Collects calls made within `windowMs` (or until `maxItems`) and runs them as one batch. Each caller
 * gets its own item's result; if the batch fails, every caller in it gets the error.
 */
export class MicroBatcher<I, O> {
  private pending: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly windowMs: number,
    private readonly maxItems: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.run(batch.map((b) => b.item)).then(
      (results) => {
        batch.forEach((b, k) => {
          if (k < results.length) b.resolve(results[k]!);
          else b.reject(new Error(`batch returned ${results.length} results for ${batch.length} items`));
        });
      },
      (err: unknown) => {
        for (const b of batch) b.reject(err);
      },
    );
  }
}
