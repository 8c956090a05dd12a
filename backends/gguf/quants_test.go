package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// randomBlocks returns nblocks random blocks of typ: random bits, with the
// f16 scale fields set to finite values of a model's magnitude (f16At
// offsets as in ggml's block structs).
func randomBlocks(typ TensorType, nblocks int, std float64, rng *rand.Rand) []byte {
	_, nb, _ := typ.layout()
	raw := make([]byte, nblocks*nb)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	scales := map[TensorType][]int{TypeQ4_0: {0}, TypeQ4_1: {0, 2}, TypeQ5_0: {0}, TypeQ5_1: {0, 2}, TypeQ8_0: {0},
		TypeQ2_K: {80, 82}, TypeQ3_K: {108}, TypeQ4_K: {0, 2}, TypeQ5_K: {0, 2}, TypeQ6_K: {208}}[typ]
	for b := 0; b < nblocks; b++ {
		for _, off := range scales {
			binary.LittleEndian.PutUint16(raw[b*nb+off:], f32ToF16(float32(rng.NormFloat64()*std)))
		}
	}
	if typ == TypeBF16 || typ == TypeF16 {
		for i := 0; i < len(raw); i += 2 {
			v := float32(rng.NormFloat64() * std * 50)
			h := f32ToF16(v)
			if typ == TypeBF16 {
				h = uint16(math.Float32bits(v) >> 16)
			}
			binary.LittleEndian.PutUint16(raw[i:], h)
		}
	}
	return raw
}

// Every quantisation type dequantises to the values of llama.cpp's gguf-py
// (gguf/quants.py, its NumPy port of ggml-quants.c's dequantize_row_*), on
// random blocks.
func TestDequantMatchesGGUFPy(t *testing.T) {
	src := llamaCppSource(t)
	python := "/usr/bin/python3" // Debian's, where python3-numpy installs
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skip("python3 with numpy (Debian python3-numpy) is needed to run llama.cpp's gguf-py")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	types := []TensorType{TypeF16, TypeBF16, TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ8_0,
		TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K}
	raws := map[TensorType][]byte{}
	args := []string{"-c", `import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from gguf import quants, GGMLQuantizationType
for i in range(2, len(sys.argv), 3):
    d = quants.dequantize(np.fromfile(sys.argv[i], dtype=np.uint8), GGMLQuantizationType(int(sys.argv[i+1])))
    d.astype(np.float32).tofile(sys.argv[i+2])`, filepath.Join(src, "gguf-py")}
	for _, typ := range types {
		bs, _, _ := typ.layout()
		raws[typ] = randomBlocks(typ, 8*max(bs, 32)/bs, 0.02, rng)
		in := filepath.Join(dir, typ.String()+".raw")
		if err := os.WriteFile(in, raws[typ], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, in, strconv.Itoa(int(typ)), filepath.Join(dir, typ.String()+".f32"))
	}
	if b, err := exec.Command(python, args...).CombinedOutput(); err != nil {
		t.Fatalf("gguf-py: %v\n%s", err, b)
	}
	for _, typ := range types {
		raw := raws[typ]
		bs, _, _ := typ.layout()
		n := 8 * max(bs, 32)
		out := filepath.Join(dir, typ.String()+".f32")
		ref, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(ref) != 4*n {
			t.Fatalf("%s: gguf-py gave %d values, want %d", typ, len(ref)/4, n)
		}
		got := make([]float32, n)
		dequantRow(typ, raw, got)
		viaMatrix := newMatrix(&TensorInfo{Name: "w", Dims: []uint64{uint64(n), 1}, Type: typ, Data: raw}).row(0, make([]float32, n))
		bad := 0
		for i := range got {
			want := math.Float32frombits(binary.LittleEndian.Uint32(ref[4*i:]))
			// ggml may fuse d*q-m into one multiply-add; allow its last bit.
			tol := 1e-6 * math.Abs(float64(want))
			if math.Abs(float64(got[i]-want)) > tol || viaMatrix[i] != got[i] {
				if bad++; bad <= 3 {
					t.Errorf("%s: value %d = %g (matrix row %g), gguf-py %g", typ, i, got[i], viaMatrix[i], want)
				}
			}
		}
	}
}

// A model whose weight matrices are in any quantisation type computes the
// logits of the F32 model holding the same weights dequantised, when that
// model's products round the activations as the type's do: the types are
// wired into loading, batched prompts and one-token decoding alike. Q4_1 and
// Q5_1 products also use the activations' f16 block sums (minCorrection,
// checked in TestMatmulRoundsActivationsAsGGML), so for them one-token
// decoding is compared with the batch.
func TestQuantisedModelEqualsDequantised(t *testing.T) {
	base := randomModel(t, modelSpec{dim: 256, layers: 1, heads: 4, kvHeads: 2, ffn: 256, ctx: 64, typ: TypeF32, seed: 5})
	f, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	// BF16 has its own test (TestBF16ModelEqualsDequantised): its products
	// are summed in another order than the F32 model's.
	for _, typ := range []TensorType{TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K} {
		bs, _, _ := typ.layout()
		std := 3e-3
		if bs == qk {
			std = 2e-4
		}
		quant, deq := map[string]tensorSpec{}, map[string]tensorSpec{}
		for _, ti := range f.Tensors {
			if len(ti.Dims) != 2 {
				continue
			}
			n := int(ti.Elements())
			raw := randomBlocks(typ, n/bs, std, rng)
			vals := make([]float32, n)
			dequantRow(typ, raw, vals)
			quant[ti.Name] = tensorSpec{ti.Name, ti.Dims, typ, raw}
			deq[ti.Name] = tensorSpec{ti.Name, ti.Dims, TypeF32, encode(vals, TypeF32)}
		}
		qdata := replaceTensors(t, base, nil, quant) // (replaceTensors empties the map)
		q := logitsOf(t, qdata, probe)
		dm, err := newModel(replaceTensors(t, base, nil, deq), Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		dm.forEachMatrix(func(w *matrix) { w.act = actKindOf(typ) })
		dm.prepare(nil, 0, attnPerBatch)
		want, err := dm.eval(bg, probe, 0)
		if err != nil {
			t.Fatal(err)
		}
		if typ == TypeQ4_1 || typ == TypeQ5_1 {
			want = q
		}
		// The reference adds its products in the F32 dot kernel's order:
		// eight lanes with AVX2, one running sum in the portable build,
		// whose float32 error on Q6_K's wider values reaches 3.6e-4 (the
		// quantised logits themselves are the same bits in both builds).
		tol := 1e-4
		if !hasAVX2 {
			tol = 5e-4
		}
		if d := maxDiff(q, want); d > tol || math.IsNaN(d) {
			t.Errorf("%s: logits differ from the dequantised F32 model by %g", typ, d)
		}
		qm, err := newModel(qdata, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		qm.prepare(nil, 0, attnPerBatch)
		V := qm.cfg.Vocab
		for i, tk := range probe[:4] {
			l, err := qm.eval(bg, []int{tk}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(l, want[i*V:(i+1)*V]); d > oneTokenTolerance(typ) {
				t.Errorf("%s position %d: one-token logits differ by %g", typ, i, d)
			}
		}
	}
}
