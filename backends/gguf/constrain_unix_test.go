//go:build unix

package gguf

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends/grammar"
)

// TestJSONSchemaMaskLargeVocab times the masks along a judge's reply with
// Llama 3's 128,256-token vocabulary (llama.cpp's models/ggml-vocab-llama-bpe.gguf):
// the first reply computes each grammar state's mask once (a walk of the
// vocabulary trie that drops a branch at its first rejected character), the
// second finds them all cached.
func TestJSONSchemaMaskLargeVocab(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	tok, err := OpenTokenizer(filepath.Join(llamaCppSource(t), "models", "ggml-vocab-llama-bpe.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	pieces := make([]string, tok.VocabSize())
	eog := make([]bool, len(pieces))
	for id := range pieces {
		pieces[id], eog[id] = tok.Piece(id), tok.IsEOG(id)
	}
	start := time.Now()
	v := grammar.NewVocab(pieces, eog)
	t.Logf("vocabulary of %d tokens laid out in %v", len(pieces), time.Since(start))
	g, err := grammar.FromSchema(ratingSchema())
	if err != nil {
		t.Fatal(err)
	}
	c := grammar.NewConstraint(g, v)
	reply := `{"explanation": "Jawapan ini betul dan lengkap: ibu negara Perancis ialah Paris. Penerangan ringkas, tepat, \"jelas\", dan ditulis dalam bahasa Melayu yang baik — tiada kesilapan fakta.", "rating": 9}`
	ids := tok.Encode(reply, false)
	// CPU time, not wall time: the machine may be shared.
	walk := func() (total, worst time.Duration) {
		s := c.Start()
		for _, id := range ids {
			t0 := cpuTime(t)
			m := c.Allowed(s)
			d := cpuTime(t) - t0
			total += d
			worst = max(worst, d)
			if m[id/64]>>(id%64)&1 == 0 {
				t.Fatalf("token %d %q of the reply is masked", id, pieces[id])
			}
			var ok bool
			if s, ok = c.Accept(s, id); !ok {
				t.Fatalf("token %d %q refused", id, pieces[id])
			}
		}
		if !c.Complete(s) {
			t.Fatalf("reply %q is not complete", reply)
		}
		return total, worst
	}
	cold, coldWorst := walk()
	warm, warmWorst := walk()
	n := time.Duration(len(ids))
	t.Logf("%d tokens, CPU time: first reply %v a token (worst %v), second %v a token (worst %v)", len(ids), cold/n, coldWorst, warm/n, warmWorst)
	// A forward pass of a model with this vocabulary (1B parameters and
	// up) takes well over 100 ms on a CPU: a new state's mask stays below
	// it, and a state met before costs nothing.
	if cold/n > 100*time.Millisecond || warm/n > time.Millisecond {
		t.Errorf("masks too slow: %v a token first, %v after", cold/n, warm/n)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
