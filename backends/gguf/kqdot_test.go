package gguf

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestKQuantRowKernelsMatchPortable checks the Q4_K and Q6_K kernels that
// take several rows (one token) or several rows and tokens per call against
// q4KDotGo and q6KDotGo bit for bit: odd super-block counts, row counts that
// leave remainders, token counts that leave remainders, and rows that start
// at every offset of a tile.
func TestKQuantRowKernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 53))
	for _, typ := range []TensorType{TypeQ4_K, TypeQ6_K} {
		for _, cols := range []int{256, 768, 1280, 2816} {
			const rows, n = 11, 7
			x := randomActs(rng, n, cols)
			x[5] = -30 // an outlier
			a := quantActs(actQ8_K, x, n, cols)
			w := &matrix{typ: typ, rows: rows, cols: cols, act: actQ8_K}
			for r := 0; r < rows; r++ {
				w.raw = append(w.raw, randomRow(rng, typ, cols)...)
			}
			w.rowBytes = len(w.raw) / rows
			want := make([]float32, n*rows)
			for tok := 0; tok < n; tok++ {
				q := a.q[tok*cols : (tok+1)*cols]
				for r := 0; r < rows; r++ {
					raw := w.raw[r*w.rowBytes : (r+1)*w.rowBytes]
					if typ == TypeQ4_K {
						want[tok*rows+r] = q4KDotGo(raw, q, a.d[tok:], n, a.bs[tok*16:])
					} else {
						want[tok*rows+r] = q6KDotGo(raw, q, a.d[tok:], n)
					}
				}
			}
			// One token at a time, rows r0...rows.
			for r0 := 0; r0 < 4; r0++ {
				for tok := 0; tok < n; tok++ {
					out := make([]float32, rows-r0)
					qDot1Rows(out, w, r0, a, tok)
					for i, v := range out {
						if g, e := math.Float32bits(v), math.Float32bits(want[tok*rows+r0+i]); g != e {
							t.Errorf("%v cols %d row %d token %d: one-token rows %v, portable %v", typ, cols, r0+i, tok, v, want[tok*rows+r0+i])
						}
					}
				}
			}
			// The whole product, every token count up to n.
			for m := 1; m <= n; m++ {
				out := make([]float32, m*rows)
				am := quantActs(actQ8_K, x[:m*cols], m, cols)
				(&pool{threads: 2}).matmulQActs(out, w, am)
				for tok := 0; tok < m; tok++ {
					for r := 0; r < rows; r++ {
						var e float32
						raw := w.raw[r*w.rowBytes : (r+1)*w.rowBytes]
						q := am.q[tok*cols : (tok+1)*cols]
						if typ == TypeQ4_K {
							e = q4KDotGo(raw, q, am.d[tok:], m, am.bs[tok*16:])
						} else {
							e = q6KDotGo(raw, q, am.d[tok:], m)
						}
						if g := out[tok*rows+r]; math.Float32bits(g) != math.Float32bits(e) {
							t.Errorf("%v cols %d, %d tokens, row %d token %d: matmul %v, portable %v", typ, cols, m, r, tok, g, e)
						}
					}
				}
			}
		}
	}
}

// TestKQuantLogitsIndependentOfBatch is TestLogitsIndependentOfBatch on a
// Q4_K_M-like model (Q4_K, with Q6_K for attn_v, ffn_down and output): a
// token's logits are the same bits whether its products ran in the
// two-row four-token kernels or the one-token ones, at any place in a batch.
func TestKQuantLogitsIndependentOfBatch(t *testing.T) {
	base := randomModel(t, modelSpec{dim: 256, layers: 2, heads: 4, kvHeads: 2, ffn: 768, ctx: 64, typ: TypeF32, seed: 9})
	f, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	repl := map[string]tensorSpec{}
	for _, ti := range f.Tensors {
		if len(ti.Dims) != 2 || ti.Name == "token_embd.weight" {
			continue
		}
		typ := TypeQ4_K
		if strings.Contains(ti.Name, "attn_v") || strings.Contains(ti.Name, "ffn_down") || ti.Name == "output.weight" {
			typ = TypeQ6_K
		}
		repl[ti.Name] = tensorSpec{ti.Name, ti.Dims, typ, randomBlocks(typ, int(ti.Elements())/qk, 0.002, rng)}
	}
	m, err := newModel(replaceTensors(t, base, nil, repl), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	m.prepare(nil, 0, attnPerBatch)
	all, err := m.eval(bg, probe, 0)
	if err != nil {
		t.Fatal(err)
	}
	V := m.cfg.Vocab
	lo, hi := all[0], all[0]
	for _, v := range all {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %g", v)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo < 1 {
		t.Fatalf("logits all within [%g, %g]: the weights do not reach them", lo, hi)
	}
	for i := 1; i < len(probe); i++ {
		m.prepare(nil, 0, attnPerBatch)
		l, err := m.eval(bg, probe[:i+1], i)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range l {
			if math.Float32bits(v) != math.Float32bits(all[i*V+j]) {
				t.Fatalf("position %d: logit %d is %g in the batch of %d, %g in the batch of %d", i, j, v, i+1, all[i*V+j], len(probe))
			}
		}
	}
}

// BenchmarkKQuantKernels times the K-quant kernels on one 32-row tile of a
// dim-1024 model's matrices (one token: the multi-row kernel, "rows", and
// one row per call, "row"; four tokens: the prompt path of matmulQActs),
// bytes being the weights read.
func BenchmarkKQuantKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		typ  TensorType
		cols int
	}{{TypeQ4_K, 1024}, {TypeQ6_K, 2816}} {
		const rows, n = 32, 4
		x := randomActs(rng, n, tc.cols)
		a := quantActs(actQ8_K, x, n, tc.cols)
		w := &matrix{typ: tc.typ, rows: rows, cols: tc.cols, act: actQ8_K}
		for r := 0; r < rows; r++ {
			w.raw = append(w.raw, randomRow(rng, tc.typ, tc.cols)...)
		}
		w.rowBytes = len(w.raw) / rows
		out := make([]float32, n*rows)
		b.Run(tc.typ.String()+"/rows", func(b *testing.B) {
			b.SetBytes(int64(len(w.raw)))
			for i := 0; i < b.N; i++ {
				qDot1Rows(out[:rows], w, 0, a, 0)
			}
		})
		b.Run(tc.typ.String()+"/row", func(b *testing.B) {
			b.SetBytes(int64(len(w.raw)))
			q := a.q[:tc.cols]
			for i := 0; i < b.N; i++ {
				for r := 0; r < rows; r++ {
					raw := w.raw[r*w.rowBytes : (r+1)*w.rowBytes]
					if tc.typ == TypeQ4_K {
						out[r] = q4KDot(raw, q, a.d, n, a.bs)
					} else {
						out[r] = q6KDot(raw, q, a.d, n, a.bs)
					}
				}
			}
		})
		b.Run(tc.typ.String()+"/4tokens", func(b *testing.B) {
			b.SetBytes(int64(n * len(w.raw)))
			p := &pool{threads: 1}
			for i := 0; i < b.N; i++ {
				p.matmulQActs(out, w, a)
			}
		})
	}
}
