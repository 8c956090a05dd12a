package metricx

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Family is the spec family this package registers: specs read
// tei+http://HOST:PORT[/PATH][?OPTIONS] or tei+https://...
const Family = "tei"

// ParseSpec reads a spec into a Config. Credentials in the URL are refused,
// since specs end up in configs, results and logs; the key is named with
// api_key_env instead.
func ParseSpec(spec string) (Config, error) {
	var cfg Config
	rest, ok := strings.CutPrefix(spec, Family+"+")
	if !ok || !(strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://")) {
		return cfg, fmt.Errorf("metricx spec %q: want %s+http://HOST:PORT or %s+https://HOST:PORT", spec, Family, Family)
	}
	u, err := url.Parse(rest)
	if err != nil {
		// url.Error quotes the whole URL, which might hold a password.
		return cfg, fmt.Errorf("metricx spec: not a URL after %q", Family+"+")
	}
	if u.User != nil {
		return cfg, fmt.Errorf("metricx spec for host %q must not carry credentials; name the key's environment variable with api_key_env", u.Host)
	}
	if u.Host == "" || u.Fragment != "" {
		return cfg, fmt.Errorf("metricx spec %q: want a host and no fragment", spec)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return cfg, fmt.Errorf("metricx spec %q: query: %w", spec, err)
	}
	for _, key := range slices.Sorted(maps.Keys(q)) {
		v := q[key][len(q[key])-1]
		switch key {
		case "mode":
			if cfg.Mode, err = parseMode(v); err != nil {
				return cfg, fmt.Errorf("metricx spec %q: %w", spec, err)
			}
		case "api_key_env":
			cfg.APIKeyEnv = v
		case "batch_size", "concurrency", "max_retries":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (n == 0 && key != "max_retries") {
				return cfg, fmt.Errorf("metricx spec %q: %s=%q is not a valid count", spec, key, v)
			}
			switch key {
			case "batch_size":
				cfg.BatchSize = n
			case "concurrency":
				cfg.Concurrency = n
			default:
				cfg.MaxRetries = n
				if n == 0 {
					cfg.MaxRetries = -1 // 0 in Config means the default
				}
			}
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("metricx spec %q: timeout=%q is not a positive duration such as 90s", spec, v)
			}
			cfg.Timeout = d
		default:
			return cfg, fmt.Errorf("metricx spec %q: unknown option %q (want mode, api_key_env, batch_size, concurrency, timeout or max_retries)", spec, key)
		}
	}
	u.RawQuery = ""
	cfg.BaseURL = strings.TrimRight(u.String(), "/")
	return cfg, nil
}
