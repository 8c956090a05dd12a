package corpus

import (
	"context"
	"time"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
)

// A Screen is the single-machine contamination screen of `glossobench
// dedup`: the index, balanced shards, scan, fingerprints and summary that a
// run's Dedup stage and ScreenCorpus workflows compute across workers, here
// in one process.
type Screen struct {
	Options           dedup.Options
	Format, TextField string // of the corpus entries (see Expand)
	ShardBytes        int64  // the largest shard before balancing over the workers
	Workers           int
	NoFingerprint     bool // skip the SHA-256 of local files (S3 objects are named by their ETag)
}

// Prepared is a screen's index over the items and its expanded corpus,
// before anything is scanned.
type Prepared struct {
	Screen
	Items     []scorers.Item
	Index     *dedup.Index
	Sources   []Source
	Stored    int64         // bytes of the corpus as stored
	IndexTime time.Duration // building the index took
}

// Prepare indexes the items and expands the corpus entries (files, globs,
// directories, s3:// prefixes).
func (s Screen) Prepare(ctx context.Context, items []scorers.Item, entries []string) (*Prepared, error) {
	t := time.Now()
	idx, err := dedup.NewIndex(items, s.Options)
	if err != nil {
		return nil, err
	}
	p := &Prepared{Screen: s, Items: items, Index: idx, IndexTime: time.Since(t)}
	if p.Sources, err = Expand(ctx, entries, s.Format, s.TextField); err != nil {
		return nil, err
	}
	for _, src := range p.Sources {
		p.Stored += src.Size
	}
	return p, nil
}

// Screened is the outcome of a screen, with the figures of its scan.
type Screened struct {
	Report         dedup.Report
	Shards         int
	Docs, DocBytes int64 // documents and their text bytes, decompressed
	ScanTime       time.Duration
}

// Scan screens every shard with the screen's workers, fingerprints the
// sources and summarises what a run would drop.
func (p *Prepared) Scan(ctx context.Context) (*Screened, error) {
	t := time.Now()
	shards := Plan(p.Sources, BalancedShardBytes(p.Sources, p.ShardBytes, p.Workers))
	matches, docs, docBytes, err := Scanner{Index: p.Index}.ScanAll(ctx, shards, p.Workers)
	if err != nil {
		return nil, err
	}
	out := &Screened{Shards: len(shards), Docs: docs, DocBytes: docBytes, ScanTime: time.Since(t)}
	var fps []dedup.Fingerprint
	for _, s := range p.Sources {
		fp := dedup.Fingerprint{URI: s.URI, Size: s.Size, ETag: s.ETag}
		if !p.NoFingerprint {
			if fp, err = FingerprintSource(ctx, nil, s); err != nil {
				return nil, err
			}
		}
		fps = append(fps, fp)
	}
	out.Report = dedup.Summarize(p.Items, matches, fps, p.Index.Options())
	return out, nil
}
