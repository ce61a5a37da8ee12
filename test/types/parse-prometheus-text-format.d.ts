declare module 'parse-prometheus-text-format' {
  export interface MetricFamily {
    name: string;
    help: string;
    type: string;
    metrics: Array<{ labels?: Record<string, string>; value?: string }>;
  }
  /** Parses the Prometheus text exposition format (a port of the Python client's parser). */
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
