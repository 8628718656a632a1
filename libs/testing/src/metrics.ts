/** The value of one series in a Prometheus text exposition (`name{labels}` exactly as exposed), if present. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Every metric name a Prometheus text exposition offers to queries: each declared family (`# TYPE`)
 * and each sample's name (a histogram's `_bucket`, `_sum` and `_count` included).
 */
export function exposedMetricNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const declared = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)/.exec(line);
    if (declared) {
      names.add(declared[1]!);
      if (declared[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(declared[1]! + s);
      if (declared[2] === 'summary') for (const s of ['_sum', '_count']) names.add(declared[1]! + s);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}
