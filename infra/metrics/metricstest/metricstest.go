// Package metricstest reads Prometheus metrics in tests: what a registry
// gathered or a /metrics scrape parsed.
package metricstest

import dto "github.com/prometheus/client_model/go"

// Sum adds the values (a histogram's observation counts) of the family's
// series that carry all the given labels; a nil family sums to 0.
func Sum(f *dto.MetricFamily, labels map[string]string) float64 {
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}
