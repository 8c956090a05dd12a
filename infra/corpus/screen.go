package corpus

import (
	"context"
	"fmt"
	"io"
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

// WriteText prints the screen as `glossobench dedup` does: the corpus
// (stored bytes, documents, shards, speed; every file's fingerprint), the
// rules, the kept and dropped counts with the kept SHA-256, a table by
// axis, and every dropped item with the match that dropped it.
func (s *Screened) WriteText(w io.Writer, stored int64) {
	rep, shards, docs, docBytes, took := s.Report, s.Shards, s.Docs, s.DocBytes, s.ScanTime
	o := rep.Options
	fmt.Fprintf(w, "corpus: %d files, %.1f MB stored, %d documents, %.1f MB of text, %d shards, %s (%.0f MB/s)\n",
		len(rep.Corpus), float64(stored)/1e6, docs, float64(docBytes)/1e6, shards, took.Round(time.Millisecond), float64(stored)/1e6/took.Seconds())
	for _, f := range rep.Corpus {
		switch {
		case f.SHA256 != "":
			fmt.Fprintf(w, "  %s  %d bytes  sha256 %s\n", f.URI, f.Size, f.SHA256)
		case f.ETag != "":
			fmt.Fprintf(w, "  %s  %d bytes  etag %s\n", f.URI, f.Size, f.ETag)
		default:
			fmt.Fprintf(w, "  %s  %d bytes  sha256 (not computed)\n", f.URI, f.Size)
		}
	}
	jac := fmt.Sprintf("%d-gram Jaccard >= %g", o.ShingleN, o.Jaccard)
	if o.NoJaccard {
		jac = "no Jaccard"
	}
	fmt.Fprintf(w, "rules: exact substring for prompts >= %d chars (whole document/line below), %s\n", o.MinExactLen, jac)
	fmt.Fprintf(w, "items: %d, kept %d, dropped %d\nkept sha256: %s\n", rep.Items, rep.Kept, rep.Dropped, rep.KeptSHA256)
	fmt.Fprintf(w, "\n%-12s %7s %7s %7s %7s %13s %9s\n", "axis", "items", "kept", "dropped", "tasks", "contam.tasks", "rate")
	for _, a := range rep.Axes {
		name := a.Axis
		if name == "" {
			name = "-"
		}
		rate := "no corpus"
		if a.ContaminationRate != nil {
			rate = fmt.Sprintf("%.4f", *a.ContaminationRate)
		}
		fmt.Fprintf(w, "%-12s %7d %7d %7d %7d %13d %9s\n", name, a.Items, a.Kept, a.Dropped, a.Tasks, a.ContaminatedTasks, rate)
	}
	if len(rep.Drops) > 0 {
		fmt.Fprintln(w, "\ndropped:")
	}
	for _, d := range rep.Drops {
		how := fmt.Sprintf("%s at %s offset %d", d.Kind, d.Match.URI, d.Match.Offset)
		if d.Kind == dedup.KindJaccard {
			how += fmt.Sprintf(" (J=%.3f)", d.Match.Jaccard)
		}
		if d.Kind == dedup.KindTask {
			how = fmt.Sprintf("task %s: %s matched (%s at %s offset %d)", d.TaskID, d.Via, d.Match.Kind, d.Match.URI, d.Match.Offset)
		}
		fmt.Fprintf(w, "  %s  %s\n", d.ItemID, how)
	}
}
