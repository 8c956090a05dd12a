package gguf

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// nanModel is the tiny model with its final norm's weights NaN: it loads,
// tokenizes and runs, and every logit it computes is NaN, as from broken
// weights or an overflow.
func nanModel(t testing.TB) []byte {
	t.Helper()
	f, err := Parse(readTiny(t))
	if err != nil {
		t.Fatal(err)
	}
	var meta []kv
	for _, k := range f.Keys {
		meta = append(meta, kv{k, f.Metadata[k]})
	}
	var ts []tensorSpec
	for _, ti := range f.Tensors {
		data := ti.Data
		if ti.Name == "output_norm.weight" {
			data = encode(slices.Repeat([]float32{float32(math.NaN())}, int(ti.Dims[0])), ti.Type)
		}
		ts = append(ts, tensorSpec{ti.Name, ti.Dims, ti.Type, data})
	}
	return writeGGUF(meta, ts)
}

// A model computing NaN fails every request with ErrNonFinite, instead of
// answering NaN log-probabilities or text picked from NaN logits.
func TestNaNModelFailsEveryRequest(t *testing.T) {
	m, err := newModel(nanModel(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ll, err := m.LogLikelihood(ctx, []backends.LLRequest{{ID: "a", Context: "Soalan: 1 + 1 =", Continuation: " 2"}})
	if !errors.Is(err, backends.ErrNonFinite) {
		t.Errorf("LogLikelihood = %+v, %v; want ErrNonFinite", ll, err)
	}
	gen, err := m.Generate(ctx, []backends.GenRequest{{ID: "a", Prompt: "Soalan: 1 + 1 =", MaxTokens: 4}})
	if !errors.Is(err, backends.ErrNonFinite) {
		t.Errorf("Generate = %+v, %v; want ErrNonFinite", gen, err)
	}
	// Control: the same file with its norm intact answers.
	ok, err := newModel(readTiny(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ok.LogLikelihood(ctx, []backends.LLRequest{{ID: "a", Context: "Soalan: 1 + 1 =", Continuation: " 2"}}); err != nil {
		t.Errorf("the tiny model: %v", err)
	}
}
