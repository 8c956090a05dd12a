//go:build amd64 && !purego

package gguf

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// The AVX-512 VNNI Q8_0 kernels (q8vnni_amd64.s) take sixteen tokens per
// 512-bit register, one token's four bytes per lane, so a weight row's
// four bytes are broadcast against all sixteen and every lane's VPDPBUSD
// sum is a whole block product: no per-block horizontal sums, which cost
// the AVX2 kernels as much as the products. The results are those of
// q8BlocksGo bit for bit (see q8vnni_amd64.s).

//go:noescape
func q8TilesVNNI(w *byte, rowBytes int, ngr int, tab *int32, x *byte, xd *float32, dstride int, nb int, out *float32, ostride int, pf uintptr)

//go:noescape
func q8TabVNNI(w *byte, n8 int, tab *int32)

//go:noescape
func q8ActsT16VNNI(q *int8, cols int, nc int, dst *byte)

//go:noescape
func q8ActsVNNI(q *int8, cols int, nm int, dst *byte)

// hasVNNI says whether the VNNI kernels can run: hasAVX512VL and
// AVX512_VNNI.
var hasVNNI = hasAVX512VL && func() bool {
	_, _, c, _ := cpuid(7, 0)
	return c&(1<<11) != 0
}()

// q8TilesPrepare stores a's activations in sixteen-token groups for
// q8Tiles (once per a), if the VNNI kernels run and a has sixteen tokens;
// it reports whether q8Tiles can be used.
func q8TilesPrepare(a *qacts) bool {
	if !hasVNNI || a.kind != actQ8_0 || a.n < 16 || a.cols < 32 {
		return false
	}
	if a.x16 == nil {
		ng := (a.n + 15) / 16
		a.x16 = make([]byte, ng*16*a.cols)
		for g := 0; g < ng; g++ {
			t0 := min(16*g, a.n-16)
			_ = a.q[(t0+16)*a.cols-1]
			q, x := a.q[t0*a.cols:], a.x16[g*16*a.cols:]
			nc := a.cols / 64
			if nc > 0 {
				q8ActsT16VNNI(&q[0], a.cols, nc, &x[0])
			}
			if a.cols%64 != 0 {
				q8ActsVNNI(&q[nc*64], a.cols, a.cols%64/4, &x[nc*1024])
			}
		}
	}
	return true
}

var q8TabPool sync.Pool

// q8Tiles sets out[t*w.rows+r] for rows [r0, r1) of the Q8_0 matrix w and
// all tokens of a (prepared by q8TilesPrepare) and returns a.n, or returns
// 0 if there are fewer than four rows. Token groups and row groups that do
// not divide evenly overlap the previous one: the results are the same.
func q8Tiles(out []float32, w *matrix, r0, r1 int, a *qacts) int {
	nr, n, nb, rb := r1-r0, a.n, a.cols/32, w.rowBytes
	if nr < 4 {
		return 0
	}
	tp, _ := q8TabPool.Get().(*[]int32)
	if tp == nil || len(*tp) < nr*nb*2 {
		s := make([]int32, nr*nb*2)
		tp = &s
	}
	defer q8TabPool.Put(tp)
	tab := *tp
	raw := w.raw[r0*rb : r1*rb]
	n8 := nb / 8
	for r := 0; r < nr; r++ {
		row, tr := raw[r*rb:(r+1)*rb], tab[r*nb*2:(r+1)*nb*2]
		if n8 > 0 {
			q8TabVNNI(&row[0], n8, &tr[0])
		}
		for b := 8 * n8; b < nb; b++ {
			var s int32
			for _, v := range row[b*34+2 : b*34+34] {
				s += int32(int8(v))
			}
			tr[2*b] = -128 * s
			tr[2*b+1] = int32(math.Float32bits(f16ToF32(binary.LittleEndian.Uint16(row[b*34:]))))
		}
	}
	rows := w.rows
	// The next rows (whatever they are: prefetching never faults), 64
	// bytes a block, read from memory while these compute.
	next := uintptr(unsafe.Pointer(&raw[0])) + uintptr(len(raw))
	for g := 0; g < (n+15)/16; g++ {
		t0 := min(16*g, n-16)
		x := a.x16[g*16*a.cols : (g+1)*16*a.cols]
		_ = a.d[(nb-1)*n+t0+15]
		_ = out[(t0+15)*rows+r1-1]
		pf := next + uintptr(g*nr/4*nb*64)
		q8TilesVNNI(&raw[0], rb, nr/4, &tab[0], &x[0], &a.d[t0], 4*n, nb, &out[t0*rows+r0], 4*rows, pf)
		if nr%4 != 0 {
			q8TilesVNNI(&raw[(nr-4)*rb], rb, 1, &tab[(nr-4)*nb*2], &x[0], &a.d[t0], 4*n, nb, &out[t0*rows+r1-4], 4*rows, pf)
		}
	}
	return n
}
