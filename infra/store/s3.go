package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// S3Config configures an S3-compatible store.
type S3Config struct {
	Endpoint  string // e.g. "http://127.0.0.1:7070"; empty means AWS
	Bucket    string
	Prefix    string // keys live under Prefix + "/"; may be empty
	Region    string // empty means the SDK's default chain, then "us-east-1"
	PathStyle bool   // http://host/bucket/key rather than http://bucket.host/key

	// Names of the environment variables holding a static access key and
	// secret. Both empty means the SDK's default credential chain. The values
	// never appear in errors or in Describe.
	AccessKeyEnv, SecretKeyEnv string
}

// S3 stores objects in an S3-compatible bucket under a key prefix.
//
// Put is create-only through a conditional write (If-None-Match: "*"): the
// server answers 412 Precondition Failed when the key exists, which Put
// reports as ErrExists. Checksums are computed and validated only when an
// operation requires them, so servers other than AWS accept the requests.
type S3 struct {
	client *s3.Client
	cfg    S3Config
	prefix string // cfg.Prefix without surrounding slashes
}

// Retries. The SDK's defaults (3 tries, 50 ms base delay) give up on a
// server that is away for a few seconds. With a 500 ms base delay doubling to
// 10 s, s3MaxAttempts tries ride out about 18 s (full jitter, 36 s at most)
// before the error ends an activity attempt, which Temporal retries in turn.
// A Put tries longer, about a minute, bounded by the caller's context: a
// failed checkpoint write throws away answered model calls, which are far
// dearer than the wait (fault-matrix case 3, TestChaosS3Outage).
const (
	s3MaxAttempts    = 8
	s3PutMaxAttempts = 16
	s3BaseDelay      = 500 * time.Millisecond
	s3MaxBackoff     = 10 * time.Second
)

// NewS3 returns a store for cfg. It does not contact the server.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("store: s3 store needs a bucket")
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := ValidKey(prefix); err != nil {
			return nil, fmt.Errorf("store: s3 prefix: %w", err)
		}
	}
	client, region, err := NewS3Client(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cfg.Region = region
	return &S3{client: client, cfg: cfg, prefix: prefix}, nil
}

// NewS3Client returns an S3 client for cfg's endpoint, region and
// credentials (its bucket and prefix play no part), with the store's
// outage-patient retries and checksums only where required, which servers
// other than AWS accept. opts adjust the client (tests swap its HTTP
// client). region is the one the client uses.
func NewS3Client(ctx context.Context, cfg S3Config, opts ...func(*s3.Options)) (client *s3.Client, region string, err error) {
	if (cfg.AccessKeyEnv == "") != (cfg.SecretKeyEnv == "") {
		return nil, "", errors.New("store: s3 access_key_env and secret_key_env must be set together")
	}
	lopts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			r := retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = s3MaxAttempts
				o.BaseDelay = s3BaseDelay
				o.MaxBackoff = s3MaxBackoff
				// No client-side retry quota: a burst of failures from a
				// local server must not turn into non-retried errors.
				o.RateLimiter = ratelimit.None
			})
			// AWS answers 409 to a conditional write racing another
			// one; retrying then yields 412 or success.
			return retry.AddWithErrorCodes(r, "ConditionalRequestConflict")
		}),
	}
	if cfg.Region != "" {
		lopts = append(lopts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyEnv != "" {
		id, secret := os.Getenv(cfg.AccessKeyEnv), os.Getenv(cfg.SecretKeyEnv)
		if id == "" || secret == "" {
			return nil, "", fmt.Errorf("store: s3 credentials: environment variables %s and %s must both be set", cfg.AccessKeyEnv, cfg.SecretKeyEnv)
		}
		lopts = append(lopts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, lopts...)
	if err != nil {
		return nil, "", fmt.Errorf("store: s3 config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	client = s3.NewFromConfig(awsCfg, append([]func(*s3.Options){func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}}, opts...)...)
	return client, awsCfg.Region, nil
}

// Describe returns the store as an s3:// URI that Open accepts, naming the
// credential environment variables but never their values.
func (s *S3) Describe() string {
	u := url.URL{Scheme: "s3", Host: s.cfg.Bucket, Path: "/" + s.prefix}
	q := url.Values{}
	if s.cfg.Endpoint != "" {
		q.Set("endpoint", s.cfg.Endpoint)
	}
	if s.cfg.Region != "" {
		q.Set("region", s.cfg.Region)
	}
	if s.cfg.PathStyle {
		q.Set("path_style", "true")
	}
	if s.cfg.AccessKeyEnv != "" {
		q.Set("access_key_env", s.cfg.AccessKeyEnv)
		q.Set("secret_key_env", s.cfg.SecretKeyEnv)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// where names the store briefly for error messages.
func (s *S3) where() string {
	w := "s3://" + s.cfg.Bucket + "/" + s.prefix
	if s.cfg.Endpoint != "" {
		w += " at " + s.cfg.Endpoint
	}
	return w
}

func (s *S3) objectKey(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// EnsureBucket creates the bucket if it does not exist yet. Tests and the CI
// scripts call it; production buckets are expected to exist.
func (s *S3) EnsureBucket(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	if err == nil {
		return nil
	}
	_, err = s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("store: create bucket %q at %s: %w", s.cfg.Bucket, s.where(), err)
	}
	return nil
}

// Put implements Store. A request that was retried after an ambiguous failure
// (say, the connection dropped after the server stored the object) can meet
// its own earlier attempt and get 412; Put then reads the object back and
// counts identical bytes as its own success. The one case this cannot tell
// apart is another writer racing to store byte-identical data under the same
// key, where both writers then see success — harmless, as the object holds
// what each of them meant to write.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: put: %w", err)
	}
	return s.put(ctx, key, bytes.NewReader(data), int64(len(data)), func() bool {
		got, err := s.Get(ctx, key)
		return err == nil && bytes.Equal(got, data)
	})
}

// PutFile implements Store: the file is the request body, so it is never
// read into memory, and the SDK rewinds it for a retry. An ambiguous failure
// is settled as in Put, by comparing the stored object with the file.
func (s *S3) PutFile(ctx context.Context, key, path string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: put: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	return s.put(ctx, key, f, fi.Size(), func() bool { return s.sameAsFile(ctx, key, f) })
}

// put makes the conditional write of Put and PutFile; stored reports
// whether the object now under key is the one written (asked only after a
// retried request met 412).
func (s *S3) put(ctx context.Context, key string, body io.ReadSeeker, size int64, stored func() bool) error {
	var attempts atomic.Int32
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.cfg.Bucket),
		Key:           aws.String(s.objectKey(key)),
		Body:          body,
		ContentLength: aws.Int64(size),
		IfNoneMatch:   aws.String("*"),
	}, countAttempts(&attempts), func(o *s3.Options) { o.RetryMaxAttempts = s3PutMaxAttempts })
	if err == nil {
		return nil
	}
	if isPreconditionFailed(err) {
		if attempts.Load() > 1 && stored() {
			return nil
		}
		return fmt.Errorf("store: put %q: %w", key, ErrExists)
	}
	return fmt.Errorf("store: put %q in %s: %w", key, s.where(), err)
}

// sameAsFile reports whether the object under key holds exactly f's bytes.
func (s *S3) sameAsFile(ctx context.Context, key string, f *os.File) bool {
	obj, err := s.Open(ctx, key)
	if err != nil {
		return false
	}
	defer obj.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false
	}
	a, b := sha256.New(), sha256.New()
	if _, err := io.Copy(a, obj); err != nil {
		return false
	}
	if _, err := io.Copy(b, f); err != nil {
		return false
	}
	return bytes.Equal(a.Sum(nil), b.Sum(nil))
}

// countAttempts counts the HTTP attempts of one operation: the middleware
// sits after the retry loop, so it runs once per try.
func countAttempts(n *atomic.Int32) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Insert(middleware.FinalizeMiddlewareFunc("glossobenchCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					n.Add(1)
					return next.HandleFinalize(ctx, in)
				}), "Retry", middleware.After)
		})
	}
}

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	body, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("store: get %q in %s: reading body: %w", key, s.where(), err)
	}
	return data, nil
}

// Open implements Store. A connection that breaks mid-object is an error
// from Read; the caller's activity attempt retries the whole read.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.open(ctx, "open", key)
}

func (s *S3) open(ctx context.Context, op, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.cfg.Bucket),
		Key:    aws.String(s.objectKey(key)),
	})
	if err != nil {
		if isNoSuchKey(err) {
			return nil, fmt.Errorf("store: %s %q: %w", op, key, ErrNotFound)
		}
		return nil, fmt.Errorf("store: %s %q in %s: %w", op, key, s.where(), err)
	}
	return out.Body, nil
}

// Exists implements Store.
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	if err := ValidKey(key); err != nil {
		return false, fmt.Errorf("store: exists: %w", err)
	}
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(s.cfg.Bucket),
		Key:    aws.String(s.objectKey(key)),
	})
	if err == nil {
		return true, nil
	}
	if isNoSuchKey(err) {
		return false, nil
	}
	return false, fmt.Errorf("store: exists %q in %s: %w", key, s.where(), err)
}

// List implements Store.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	full := prefix
	if s.prefix != "" {
		full = s.prefix + "/" + prefix
	}
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.cfg.Bucket),
		Prefix: aws.String(full),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("store: list %q in %s: %w", prefix, s.where(), err)
		}
		for _, obj := range page.Contents {
			k := aws.ToString(obj.Key)
			if s.prefix != "" {
				k = strings.TrimPrefix(k, s.prefix+"/")
			}
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func isPreconditionFailed(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed" {
		return true
	}
	return httpStatus(err) == http.StatusPreconditionFailed
}

// isNoSuchKey reports a missing object, but not a missing bucket: that is a
// configuration error the caller must see.
func isNoSuchKey(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		case "NoSuchBucket":
			return false
		}
	}
	return httpStatus(err) == http.StatusNotFound
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
