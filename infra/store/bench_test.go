package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/infra/store/storetest"
)

// benchPut measures create-only writes of a 64 KiB shard checkpoint, the
// typical object of an inference activity.
func benchPut(b *testing.B, st store.Store) {
	ctx := context.Background()
	data := make([]byte, 64<<10)
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		if err := st.Put(ctx, fmt.Sprintf("bench/shard-%06d.jsonl", i), data); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkLocalPut(b *testing.B) {
	st, err := store.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	benchPut(b, st)
}

func BenchmarkS3Put(b *testing.B) { benchPut(b, storetest.S3(b)) }
