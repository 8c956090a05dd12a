package corpus

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

// The single-machine screen drops what the scanner matches, fingerprints
// the corpus file and publishes the kept-id SHA-256 of the items it keeps,
// as a run's Dedup stage does.
func TestScreenDropsWhatTheScannerMatches(t *testing.T) {
	items := deduptest.PlantedItems()
	idx, err := dedup.NewIndex(items, dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	matched := matchKinds(scanString(t, idx, "corpus.txt", deduptest.PlantedCorpus(), 0))
	path := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(path, []byte(deduptest.PlantedCorpus()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Screen{ShardBytes: 64, Workers: 3}.Prepare(context.Background(), items, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if len(matched) == 0 || rep.Dropped < len(matched) || rep.Items != len(items) || rep.Kept+rep.Dropped != len(items) {
		t.Fatalf("dropped %d of %d (scanner matched %d)", rep.Dropped, rep.Items, len(matched))
	}
	for _, d := range rep.Drops {
		if _, ok := matched[d.ItemID]; !ok && d.Kind != dedup.KindTask {
			t.Errorf("%s dropped as %s, but the scanner did not match it", d.ItemID, d.Kind)
		}
	}
	if len(rep.Corpus) != 1 || len(rep.Corpus[0].SHA256) != 64 || p.Stored != int64(len(deduptest.PlantedCorpus())) || res.Shards < 2 {
		t.Errorf("corpus %+v stored %d shards %d", rep.Corpus, p.Stored, res.Shards)
	}
	if len(rep.KeptSHA256) != 64 {
		t.Errorf("kept sha256 %q", rep.KeptSHA256)
	}
}
