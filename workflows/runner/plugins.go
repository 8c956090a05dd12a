package runner

import (
	"github.com/glossobench/glossobench/backends/metricx"
	"github.com/glossobench/glossobench/scorers/nlg"
)

// The wiring links the plugins that live below the scorers they serve: the
// NLG option metricx: takes tei+http(s):// specs through backends/metricx,
// which knows nothing of scorers.
func init() { nlg.RegisterMetricXSpec(metricx.Family, openMetricX) }

// openMetricX only parses the spec; the server is first contacted by Score.
func openMetricX(spec string) (nlg.MetricX, error) {
	c, err := metricx.Open(spec)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return c, nil
}
