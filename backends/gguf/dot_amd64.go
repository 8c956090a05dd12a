//go:build amd64 && !purego

package gguf

// AVX2 with FMA kernels for the dot products that dominate inference; the
// pure-Go loops remain for other CPUs and for the tails of odd lengths.

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func dotQ8AVX2(q *byte, x *float32, nblocks int) float32

//go:noescape
func dequantQ8AVX2(q *byte, out *float32, nblocks int)

//go:noescape
func dot2x4AVX2(w0, w1, x0, x1, x2, x3 *float32, n int, out *[8]float32)

//go:noescape
func dot4AVX2(w, x0, x1, x2, x3 *float32, n int, out *[4]float32)

var hasAVX2 = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, c, _ := cpuid(1, 0)
	const fma, osxsave, avx, f16c = 1 << 12, 1 << 27, 1 << 28, 1 << 29
	if c&fma == 0 || c&osxsave == 0 || c&avx == 0 || c&f16c == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the OS saves XMM and YMM state
		return false
	}
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<5) != 0
}()

func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	m := n &^ 7
	if !hasAVX2 || m == 0 {
		return dotGo(a, b)
	}
	s := dotAVX2(&a[0], &b[0], m)
	if m < n {
		s += dotGo(a[m:], b[m:])
	}
	return s
}

func dot4(w, x0, x1, x2, x3 []float32) (float32, float32, float32, float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	m := n &^ 7
	if !hasAVX2 || m == 0 {
		return dot4Go(w, x0, x1, x2, x3)
	}
	var out [4]float32
	dot4AVX2(&w[0], &x0[0], &x1[0], &x2[0], &x3[0], m, &out)
	if m < n {
		a, b, c, d := dot4Go(w[m:], x0[m:], x1[m:], x2[m:], x3[m:])
		out[0] += a
		out[1] += b
		out[2] += c
		out[3] += d
	}
	return out[0], out[1], out[2], out[3]
}

// dotQ8 is the dot product of a Q8_0 row (raw blocks) with x.
func dotQ8(raw []byte, x []float32) float32 {
	nb := len(x) / 32
	if !hasAVX2 || nb == 0 {
		return dotQ8Go(raw, x)
	}
	_ = raw[nb*34-1]
	return dotQ8AVX2(&raw[0], &x[0], nb)
}

// dot2x4 sets out[4*r+t] = w_r · x_t for two weight rows and four
// activations, reading each of the six vectors once.
func dot2x4(w0, w1, x0, x1, x2, x3 []float32, out *[8]float32) {
	n := len(w0)
	w1, x0, x1, x2, x3 = w1[:n], x0[:n], x1[:n], x2[:n], x3[:n]
	m := n &^ 7
	if !hasAVX2 || m == 0 {
		dot2x4Go(w0, w1, x0, x1, x2, x3, out)
		return
	}
	dot2x4AVX2(&w0[0], &w1[0], &x0[0], &x1[0], &x2[0], &x3[0], m, out)
	if m < n {
		var tail [8]float32
		dot2x4Go(w0[m:], w1[m:], x0[m:], x1[m:], x2[m:], x3[m:], &tail)
		for i := range out {
			out[i] += tail[i]
		}
	}
}

// dequantQ8 expands a Q8_0 row into out (len = 32 per block).
func dequantQ8(raw []byte, out []float32) {
	nb := len(out) / 32
	if !hasAVX2 || nb == 0 {
		dequantQ8Go(raw, out)
		return
	}
	_ = raw[nb*34-1]
	dequantQ8AVX2(&raw[0], &out[0], nb)
}
