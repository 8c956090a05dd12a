package corpus

import (
	"context"
	"fmt"
	"io"

	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"golang.org/x/sync/errgroup"
)

// Defaults of Scanner.
const (
	DefaultProgressEvery = 16 << 20 // bytes between progress reports
	DefaultMaxDocBytes   = 64 << 20 // longest document (or JSONL line) accepted
)

// Scanner screens corpus shards against a dedup index.
type Scanner struct {
	Index *dedup.Index
	Open  Opener // nil: Open (local files and s3:// objects)
	// ProgressEvery is how many document bytes pass between progress
	// reports (0: DefaultProgressEvery).
	ProgressEvery int64
	// MaxDocBytes bounds one document, and so the memory of a scan
	// (0: DefaultMaxDocBytes). A longer document is an error naming its offset.
	MaxDocBytes int
}

// Checkpoint is the resumable state of a shard scan: every document that
// starts before Offset has been screened and its matches are in Matches.
// A scan restarted from a checkpoint ends with the same result as one that
// never stopped.
type Checkpoint struct {
	Offset  int64         `json:"offset"`
	Matches []dedup.Match `json:"matches,omitempty"`
	Docs    int64         `json:"docs"`
	Bytes   int64         `json:"bytes"` // document bytes screened (decompressed)
}

// ShardResult is the outcome of one shard.
type ShardResult struct {
	Shard   Shard         `json:"shard"`
	Matches []dedup.Match `json:"matches"` // one per matched item, sorted by item id
	Docs    int64         `json:"docs"`
	Bytes   int64         `json:"bytes"`
}

// ScanShard screens the documents that start in the shard, from the
// checkpoint on (a zero Checkpoint starts at the shard's start). progress,
// when not nil, is called every ProgressEvery bytes with a checkpoint to
// heartbeat or store; it runs on the scanning goroutine.
func (s Scanner) ScanShard(ctx context.Context, sh Shard, from Checkpoint, progress func(Checkpoint)) (ShardResult, error) {
	res := ShardResult{Shard: sh}
	if s.Index == nil {
		return res, fmt.Errorf("dedup: scan %s: no index", sh)
	}
	open := s.Open
	if open == nil {
		open = Open
	}
	every := s.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	maxDoc := s.MaxDocBytes
	if maxDoc <= 0 {
		maxDoc = DefaultMaxDocBytes
	}
	m := dedup.NewMatcher(s.Index)
	for _, mt := range from.Matches {
		if !m.Record(mt) {
			return res, fmt.Errorf("dedup: scan %s: checkpoint names unknown item %q", sh, mt.ItemID)
		}
	}
	start := max(sh.Start, from.Offset)
	docs, nbytes := from.Docs, from.Bytes
	dr, closer, err := newDocReader(ctx, open, sh.Source, start, sh.End, maxDoc)
	if err != nil {
		return res, err
	}
	defer closer()
	var sinceReport int64
	for {
		doc, off, end, err := dr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
		m.Doc(doc, off)
		docs++
		nbytes += int64(len(doc))
		sinceReport += int64(len(doc))
		if sinceReport >= every {
			sinceReport = 0
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if progress != nil {
				progress(Checkpoint{Offset: end, Matches: m.Matches(sh.Source.URI), Docs: docs, Bytes: nbytes})
			}
		}
	}
	res.Matches = m.Matches(sh.Source.URI)
	res.Docs, res.Bytes = docs, nbytes
	return res, nil
}

// ScanAll screens every shard with up to workers goroutines (<= 0: one)
// and returns the merged matches, one per item, plus the total documents
// and bytes screened. It is the single-machine path; a workflow runs
// ScanShard per shard as activities instead and merges with dedup.MergeMatches.
func (s Scanner) ScanAll(ctx context.Context, shards []Shard, workers int) ([]dedup.Match, int64, int64, error) {
	results := make([]ShardResult, len(shards))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	for i := range shards {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			var err error
			results[i], err = s.ScanShard(gctx, shards[i], Checkpoint{}, nil)
			return err
		})
	}
	// The first error is the real failure; the shards it cancelled come after.
	if err := g.Wait(); err != nil {
		return nil, 0, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	var docs, nbytes int64
	var all [][]dedup.Match
	for _, r := range results {
		docs += r.Docs
		nbytes += r.Bytes
		all = append(all, r.Matches)
	}
	return dedup.MergeMatches(all...), docs, nbytes, nil
}
