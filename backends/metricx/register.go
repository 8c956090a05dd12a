package metricx

import "github.com/glossobench/glossobench/scorers/nlg"

// Importing this package lets the NLG axis option `metricx:` take a
// tei+http(s):// spec. Opening only parses the spec; the server is first
// contacted by Score.
func init() {
	nlg.RegisterMetricXSpec(Family, func(spec string) (nlg.MetricX, error) {
		c, err := Open(spec)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return c, nil
	})
}
