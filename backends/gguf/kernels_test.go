package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

func benchMatmul(b *testing.B, n int) {
	rows, cols := 768, 768
	w := &matrix{typ: TypeF32, rows: rows, cols: cols, f32: make([]float32, rows*cols)}
	x := make([]float32, n*cols)
	out := make([]float32, n*rows)
	for i := range w.f32 {
		w.f32[i] = float32(i%7) * 0.1
	}
	p := pool{threads: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.matmul(out, w, x, n)
	}
	b.ReportMetric(float64(rows*cols*n*b.N)/b.Elapsed().Seconds()/1e9, "GFMA/s")
}

func BenchmarkMatmul1(b *testing.B)   { benchMatmul(b, 1) }
func BenchmarkMatmul4(b *testing.B)   { benchMatmul(b, 4) }
func BenchmarkMatmul128(b *testing.B) { benchMatmul(b, 128) }

func TestDotKernels(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 16, 31, 32, 33, 64, 100, 768} {
		a := make([]float32, n)
		x := make([][]float32, 4)
		for i := range a {
			a[i] = float32(i%13) - 6.5
		}
		for k := range x {
			x[k] = make([]float32, n)
			for i := range x[k] {
				x[k][i] = float32((i*(k+3))%11) * 0.25
			}
		}
		want := make([]float64, 4)
		for k := range x {
			for i := range a {
				want[k] += float64(a[i]) * float64(x[k][i])
			}
		}
		got := make([]float32, 4)
		got[0], got[1], got[2], got[3] = dot4(a, x[0], x[1], x[2], x[3])
		for k := range x {
			if d := float64(got[k]) - want[k]; d > 1e-3 || d < -1e-3 {
				t.Errorf("n=%d dot4[%d] = %v, want %v (avx2 %v)", n, k, got[k], want[k], hasAVX2)
			}
			if g := dot(a, x[k]); float64(g)-want[k] > 1e-3 || float64(g)-want[k] < -1e-3 {
				t.Errorf("n=%d dot = %v, want %v (avx2 %v)", n, g, want[k], hasAVX2)
			}
		}
	}
}

func TestDotQ8(t *testing.T) {
	x := make([]float32, 96)
	w := make([]float32, 96)
	for i := range x {
		x[i] = float32(i%9) - 4
		w[i] = float32(i%5)*0.3 - 0.7
	}
	raw := encode(w, TypeQ8_0)
	deq := newMatrix(&TensorInfo{Name: "w", Dims: []uint64{96, 1}, Type: TypeQ8_0, Data: raw}).row(0, make([]float32, 96))
	want := dotGo(deq, x)
	for name, got := range map[string]float32{"dotQ8": dotQ8(raw, x), "dotQ8Go": dotQ8Go(raw, x)} {
		if d := got - want; d > 1e-3 || d < -1e-3 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func TestRoundF16(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for i := 0; i < 200000; i++ {
		x := math.Float32frombits(r.Uint32())
		if x != x {
			continue
		}
		if i%2 == 0 {
			x = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
		}
		want := f16ToF32(f32ToF16(x))
		if got := roundF16(x); got != want && !(got != got && want != want) {
			t.Fatalf("roundF16(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestMatmulShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, typ := range []TensorType{TypeF32, TypeQ8_0} {
		for _, shape := range [][3]int{{1, 3, 32}, {5, 7, 64}, {13, 130, 96}, {8, 65, 32}, {4, 2, 40}} {
			n, rows, cols := shape[0], shape[1], shape[2]
			if typ == TypeQ8_0 && cols%32 != 0 {
				continue
			}
			wf := make([]float32, rows*cols)
			for i := range wf {
				wf[i] = float32(r.NormFloat64())
			}
			w := newMatrix(&TensorInfo{Name: "w", Dims: []uint64{uint64(cols), uint64(rows)}, Type: typ, Data: encode(wf, typ)})
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			for _, threads := range []int{1, 3} {
				out := make([]float32, n*rows)
				(&pool{threads: threads}).matmul(out, w, x, n)
				buf := make([]float32, cols)
				xq := make([]float32, len(x)) // as ggml rounds them for typ
				roundActs(actKindOf(typ), xq, x, cols)
				for ti := 0; ti < n; ti++ {
					for ri := 0; ri < rows; ri++ {
						want := dotGo(w.row(ri, buf), xq[ti*cols:(ti+1)*cols])
						if d := out[ti*rows+ri] - want; d > 1e-3 || d < -1e-3 {
							t.Fatalf("%s %v threads %d: out[%d,%d] = %v, want %v", typ, shape, threads, ti, ri, out[ti*rows+ri], want)
						}
					}
				}
			}
		}
	}
}

func TestDequantQ8(t *testing.T) {
	w := make([]float32, 96)
	for i := range w {
		w[i] = float32(i%11)*0.37 - 1.9
	}
	raw := encode(w, TypeQ8_0)
	a, b := make([]float32, 96), make([]float32, 96)
	dequantQ8(raw, a)
	dequantQ8Go(raw, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("element %d: %v, portable %v", i, a[i], b[i])
		}
	}
}
