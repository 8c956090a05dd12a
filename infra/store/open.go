package store

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// Open returns the store a URI names:
//
//	file:DIR, file:///abs/dir or a plain path   a Local store rooted at DIR
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true&access_key_env=X&secret_key_env=Y
//
// The s3 query parameters are all optional; unknown ones are an error so a
// typo does not silently fall back to a default.
func Open(ctx context.Context, uri string) (Store, error) {
	switch {
	case strings.HasPrefix(uri, "s3://"):
		cfg, err := ParseS3URI(uri)
		if err != nil {
			return nil, err
		}
		return NewS3(ctx, cfg)
	case strings.HasPrefix(uri, "file://"):
		u, err := url.Parse(uri)
		if err != nil {
			return nil, fmt.Errorf("store: uri %q: %w", uri, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("store: uri %q: file URIs with a host are not supported", uri)
		}
		return NewLocal(u.Path)
	case strings.HasPrefix(uri, "file:"):
		return NewLocal(strings.TrimPrefix(uri, "file:"))
	case strings.Contains(uri, "://"):
		return nil, fmt.Errorf("store: uri %q: unknown scheme (want file: or s3://)", uri)
	}
	return NewLocal(uri)
}

// AbsURI is uri with a plain relative path made absolute, so the URI
// names the same store from any working directory (a worker's, a command's
// later); a URI with a scheme is returned as it is.
func AbsURI(uri string) string {
	if filepath.IsAbs(uri) || hasScheme(uri) {
		return uri
	}
	if abs, err := filepath.Abs(uri); err == nil {
		return abs
	}
	return uri
}

func hasScheme(uri string) bool {
	for i := 0; i < len(uri); i++ {
		switch c := uri[i]; {
		case c == ':':
			return i > 1
		case c == '/':
			return false
		}
	}
	return false
}

// ParseS3URI parses an s3:// URI (see Open) into an S3Config.
func ParseS3URI(uri string) (S3Config, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return S3Config{}, fmt.Errorf("store: uri %q: %w", uri, err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("store: uri %q: scheme is not s3", uri)
	}
	if u.Host == "" {
		return S3Config{}, fmt.Errorf("store: uri %q: no bucket", uri)
	}
	if u.User != nil {
		// Refuse credentials in the URI: URIs end up in logs and results.
		return S3Config{}, fmt.Errorf("store: s3 uri for bucket %q must not carry credentials; name environment variables with access_key_env and secret_key_env", u.Host)
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if cfg.Prefix != "" {
		if err := ValidKey(cfg.Prefix); err != nil {
			return S3Config{}, fmt.Errorf("store: uri %q: prefix: %w", uri, err)
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return S3Config{}, fmt.Errorf("store: uri %q: query: %w", uri, err)
	}
	for name, vals := range q {
		if len(vals) != 1 {
			return S3Config{}, fmt.Errorf("store: uri %q: parameter %s given %d times", uri, name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return S3Config{}, fmt.Errorf("store: uri %q: endpoint %q is not an http(s) URL", uri, v)
			}
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return S3Config{}, fmt.Errorf("store: uri %q: path_style %q is not a boolean", uri, v)
			}
			cfg.PathStyle = b
		case "access_key_env":
			cfg.AccessKeyEnv = v
		case "secret_key_env":
			cfg.SecretKeyEnv = v
		default:
			return S3Config{}, fmt.Errorf("store: uri %q: unknown parameter %q (want endpoint, region, path_style, access_key_env, secret_key_env)", uri, name)
		}
	}
	if (cfg.AccessKeyEnv == "") != (cfg.SecretKeyEnv == "") {
		return S3Config{}, fmt.Errorf("store: uri %q: access_key_env and secret_key_env must be set together", uri)
	}
	return cfg, nil
}
