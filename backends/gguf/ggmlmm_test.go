package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// matmulHalf gives every (token, row) of F32, F16 and BF16 weights the dot
// product of the order ggml uses for the batch (tinyBLAS's from two tokens
// on when the shape allows, vec_dot's otherwise), whatever the tiling,
// thread split and batch size.
func TestMatmulHalfOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []TensorType{TypeF32, TypeF16, TypeBF16} {
		for _, shape := range [][2]int{{4, 64}, {36, 256}, {20, 96}, {6, 64}, {8, 320}} {
			rows, cols := shape[0], shape[1]
			var w []byte
			if typ == TypeF32 {
				v := make([]float32, rows*cols)
				for i := range v {
					v[i] = float32(rng.NormFloat64() * 0.05)
				}
				w = encode(v, TypeF32)
			} else {
				w = randomBlocks(typ, rows*cols, 0.05, rng)
			}
			m := newMatrix(&TensorInfo{Name: "w", Type: typ, Dims: []uint64{uint64(cols), uint64(rows)}, Data: w})
			wf := make([]float32, rows*cols)
			dequantRow(typ, w, wf)
			for _, n := range []int{1, 2, 5, 9, 17, 33} {
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for _, perRow := range []bool{false, true} {
					out := make([]float32, n*rows)
					(&pool{threads: 3}).matmulHalf(out, m, x, n, perRow)
					kn := map[TensorType]int{TypeF32: 16, TypeF16: 16, TypeBF16: 32}[typ]
					tiny := !perRow && n >= 2 && rows%4 == 0 && cols%kn == 0
					for tok := 0; tok < n; tok++ {
						for r := 0; r < rows; r++ {
							want := refHalfDot(typ, wf[r*cols:(r+1)*cols], x[tok*cols:(tok+1)*cols], tiny)
							if got := out[tok*rows+r]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s %dx%d n=%d perRow=%v token %d row %d: %g, want %g", typ, rows, cols, n, perRow, tok, r, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// refHalfDot is one product in ggml's order by the portable kernels, the
// activations rounded to the weight type first.
func refHalfDot(typ TensorType, w, x []float32, tiny bool) float32 {
	if typ == TypeF32 {
		if tiny {
			return dotL16Go(w, x)
		}
		np := len(w) &^ 63
		var s float32
		if np > 0 {
			s = dotL64Go(w[:np], x[:np])
		}
		for i := np; i < len(w); i++ {
			s = fma32(w[i], x[i], s)
		}
		return s
	}
	if typ == TypeF16 {
		xr := make([]float32, len(x))
		for i, v := range x {
			xr[i] = roundF16(v)
		}
		if tiny {
			return dotL16Go(w, xr)
		}
		np := len(w) &^ 63
		s := float64(0)
		if np > 0 {
			s = float64(dotL64Go(w[:np], xr[:np]))
		}
		for i := np; i < len(w); i++ {
			s += float64(w[i] * xr[i])
		}
		return float32(s)
	}
	wb, xb := make([]uint16, len(w)), make([]uint16, len(x))
	for i := range w {
		wb[i] = uint16(math.Float32bits(w[i]) >> 16)
		xb[i] = uint16(math.Float32bits(roundBF16(x[i])) >> 16)
	}
	if tiny {
		return bf16L16Go(wb, xb)
	}
	np := len(w) &^ 63
	var r [2]float32
	if np > 0 {
		bf16VecGo(wb[:np], xb[:np], &r)
	}
	s := float64(r[0])
	s += float64(r[1])
	for i := np; i < len(w); i++ {
		s += float64(bf16f(wb[i]) * bf16f(xb[i]))
	}
	return float32(s)
}

// A BF16 model computes the logits of the F32 model holding the same
// weights with its activations rounded to BF16, batched and one token at a
// time. The two sum their products in different orders, and a sum one
// float32 ulp off can round to the neighbouring BF16 activation (a step of
// 2^-8), which moves a logit by up to a few 1e-2 on these models: so a
// few positions may differ by that much, the others agree to float32
// rounding.
func TestBF16ModelEqualsDequantised(t *testing.T) {
	base := randomModel(t, modelSpec{dim: 256, layers: 1, heads: 4, kvHeads: 2, ffn: 256, ctx: 64, typ: TypeF32, seed: 5})
	f, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	quant, deq := map[string]tensorSpec{}, map[string]tensorSpec{}
	for _, ti := range f.Tensors {
		if len(ti.Dims) != 2 {
			continue
		}
		n := int(ti.Elements())
		raw := randomBlocks(TypeBF16, n, 3e-3, rng)
		vals := make([]float32, n)
		dequantRow(TypeBF16, raw, vals)
		quant[ti.Name] = tensorSpec{ti.Name, ti.Dims, TypeBF16, raw}
		deq[ti.Name] = tensorSpec{ti.Name, ti.Dims, TypeF32, encode(vals, TypeF32)}
	}
	qdata := replaceTensors(t, base, nil, quant)
	q := logitsOf(t, qdata, probe)
	dm, err := newModel(replaceTensors(t, base, nil, deq), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	dm.forEachMatrix(func(w *matrix) { w.act = actBF16 })
	dm.prepare(nil, 0, attnPerBatch)
	want, err := dm.eval(bg, probe, 0)
	if err != nil {
		t.Fatal(err)
	}
	qm, err := newModel(qdata, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	qm.prepare(nil, 0, attnPerBatch)
	V := qm.cfg.Vocab
	off := 0
	for i, tk := range probe {
		one, err := qm.eval(bg, []int{tk}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]float32{q[i*V : (i+1)*V], one} {
			d := maxDiff(got, want[i*V:(i+1)*V])
			if d > 1e-5 {
				off++
			}
			if d > 0.05 || math.IsNaN(d) {
				t.Errorf("position %d: logits differ from the dequantised F32 model by %g", i, d)
			}
		}
	}
	if off > len(probe)/4 {
		t.Errorf("%d of %d logit rows differ from the dequantised F32 model beyond float32 rounding", off, 2*len(probe))
	}
}

// In F32, F16 and BF16 a position's logits do not depend on how many
// positions the batch holds after it, as llama-server's do not: every row
// takes tinyBLAS's order in a batch and the rows llama.cpp computes alone
// (the last layer's feed-forward block and the output) vec_dot's, so the
// logits of a whole text equal, bit for bit, those of each prefix scored on
// its own, which is how the test against llama-server asks for them.
func TestLogitsIndependentOfBatch(t *testing.T) {
	spec := modelSpec{dim: 256, layers: 2, heads: 4, kvHeads: 2, ffn: 256, ctx: 64, typ: TypeF32, seed: 8}
	base := randomModel(t, spec)
	spec.typ = TypeF16
	models := map[string][]byte{"F32": base, "F16": randomModel(t, spec)}
	f, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	bf := map[string]tensorSpec{}
	for _, ti := range f.Tensors {
		if len(ti.Dims) == 2 {
			bf[ti.Name] = tensorSpec{ti.Name, ti.Dims, TypeBF16, randomBlocks(TypeBF16, int(ti.Elements()), 0.05, rng)}
		}
	}
	models["BF16"] = replaceTensors(t, base, nil, bf)
	for name, data := range models {
		m, err := newModel(data, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		m.prepare(nil, 0, attnPerBatch)
		all, err := m.eval(bg, probe, 0)
		if err != nil {
			t.Fatal(err)
		}
		V := m.cfg.Vocab
		for i := 1; i < len(probe); i++ {
			m.prepare(nil, 0, attnPerBatch)
			l, err := m.eval(bg, probe[:i+1], i)
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range l {
				if math.Float32bits(v) != math.Float32bits(all[i*V+j]) {
					t.Fatalf("%s position %d: logit %d is %g alone, %g in the batch of %d", name, i, j, v, all[i*V+j], len(probe))
				}
			}
		}
	}
}
