export * from './queues';
export * from './lookup-input.schema';
export * from './lookup-job.schema';
export * from './enqueue';
export * from './lookup-result.schema';
export * from './webhooks';
export * from './sandbox-data';
export * from './envelopes';
