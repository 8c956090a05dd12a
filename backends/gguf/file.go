package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// GGUF metadata value types, as numbered by the format.
const (
	typeUint8   = 0
	typeInt8    = 1
	typeUint16  = 2
	typeInt16   = 3
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
	typeUint64  = 10
	typeInt64   = 11
	typeFloat64 = 12
)

// TensorType is a ggml tensor element type.
type TensorType uint32

// The ggml tensor types this package can compute with (ggml's numbering).
const (
	TypeF32  TensorType = 0
	TypeF16  TensorType = 1
	TypeQ4_0 TensorType = 2
	TypeQ4_1 TensorType = 3
	TypeQ5_0 TensorType = 6
	TypeQ5_1 TensorType = 7
	TypeQ8_0 TensorType = 8
	TypeQ2_K TensorType = 10
	TypeQ3_K TensorType = 11
	TypeQ4_K TensorType = 12
	TypeQ5_K TensorType = 13
	TypeQ6_K TensorType = 14
	TypeBF16 TensorType = 30
)

// typeLayouts gives each type's name, elements per block and bytes per
// block (ggml's ggml_type_traits).
var typeLayouts = map[TensorType]struct {
	name              string
	blockSize, nbytes int
}{
	TypeF32: {"F32", 1, 4}, TypeF16: {"F16", 1, 2}, TypeBF16: {"BF16", 1, 2},
	TypeQ4_0: {"Q4_0", 32, 18}, TypeQ4_1: {"Q4_1", 32, 20}, TypeQ5_0: {"Q5_0", 32, 22}, TypeQ5_1: {"Q5_1", 32, 24},
	TypeQ8_0: {"Q8_0", 32, 34}, TypeQ2_K: {"Q2_K", 256, 84}, TypeQ3_K: {"Q3_K", 256, 110},
	TypeQ4_K: {"Q4_K", 256, 144}, TypeQ5_K: {"Q5_K", 256, 176}, TypeQ6_K: {"Q6_K", 256, 210},
}

func (t TensorType) String() string {
	if l, ok := typeLayouts[t]; ok {
		return l.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// layout returns the number of elements per quantisation block and the
// bytes one block takes.
func (t TensorType) layout() (blockSize, blockBytes int, ok bool) {
	l, ok := typeLayouts[t]
	return l.blockSize, l.nbytes, ok
}

// TensorInfo describes one tensor of a GGUF file.
type TensorInfo struct {
	Name   string
	Dims   []uint64 // ggml order: Dims[0] is the length of a row
	Type   TensorType
	Offset uint64 // from the start of the tensor data section
	Data   []byte // the tensor's bytes inside the file image
}

// Elements is the number of elements of the tensor.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a parsed GGUF file. Tensor data points into the image passed to
// Parse; nothing is copied.
type File struct {
	Version   uint32
	Metadata  map[string]any // uint8..float64, bool, string, or a slice of those
	Keys      []string       // metadata keys in file order
	Tensors   []TensorInfo
	Alignment uint64
	byName    map[string]*TensorInfo
}

// Tensor returns the tensor called name, or nil.
func (f *File) Tensor(name string) *TensorInfo { return f.byName[name] }

// maxDims is ggml's GGML_MAX_DIMS.
const maxDims = 4

// Parse reads the GGUF header, metadata and tensor table of a file image and
// checks that every tensor lies inside it.
func Parse(data []byte) (*File, error) {
	r := &reader{buf: data}
	magic := r.u32("magic")
	if r.err == nil && magic != 0x46554747 { // "GGUF" little-endian
		return nil, fmt.Errorf("not a GGUF file: magic %q", data[:4])
	}
	f := &File{Version: r.u32("version"), Metadata: map[string]any{}, byName: map[string]*TensorInfo{}}
	if r.err != nil {
		return nil, r.err
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("unsupported GGUF version %d (want 2 or 3)", f.Version)
	}
	nTensors := r.u64("tensor_count")
	nKV := r.u64("metadata_kv_count")
	if r.err != nil {
		return nil, r.err
	}
	// Every metadata pair takes at least 12 bytes and every tensor info 24, so
	// larger counts are corrupt; checking first keeps allocations bounded.
	if nKV > uint64(len(data))/12 {
		return nil, fmt.Errorf("metadata_kv_count %d is larger than the file allows", nKV)
	}
	if nTensors > uint64(len(data))/24 {
		return nil, fmt.Errorf("tensor_count %d is larger than the file allows", nTensors)
	}
	for i := uint64(0); i < nKV; i++ {
		key := r.str("metadata key")
		vt := r.u32("type of " + key)
		v := r.value(key, vt, 0)
		if r.err != nil {
			return nil, r.err
		}
		if _, dup := f.Metadata[key]; dup {
			return nil, fmt.Errorf("duplicate metadata key %q", key)
		}
		f.Metadata[key] = v
		f.Keys = append(f.Keys, key)
	}
	f.Alignment = 32
	if a, ok := f.Metadata["general.alignment"]; ok {
		u, ok := a.(uint32)
		if !ok || u == 0 || u&(u-1) != 0 {
			return nil, fmt.Errorf("general.alignment %v is not a power of two uint32", a)
		}
		f.Alignment = uint64(u)
	}
	f.Tensors = make([]TensorInfo, nTensors)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		t.Name = r.str("tensor name")
		nd := r.u32("n_dims of " + t.Name)
		if r.err != nil {
			return nil, r.err
		}
		if nd == 0 || nd > maxDims {
			return nil, fmt.Errorf("tensor %s: %d dimensions (want 1..%d)", t.Name, nd, maxDims)
		}
		t.Dims = make([]uint64, nd)
		for j := range t.Dims {
			t.Dims[j] = r.u64("dims of " + t.Name)
		}
		t.Type = TensorType(r.u32("type of " + t.Name))
		t.Offset = r.u64("offset of " + t.Name)
		if r.err != nil {
			return nil, r.err
		}
		if _, dup := f.byName[t.Name]; dup {
			return nil, fmt.Errorf("duplicate tensor %s", t.Name)
		}
		f.byName[t.Name] = t
	}
	start := (uint64(r.off) + f.Alignment - 1) / f.Alignment * f.Alignment
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size, err := tensorBytes(t)
		if err != nil {
			return nil, err
		}
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("tensor %s: offset %d is not aligned to %d", t.Name, t.Offset, f.Alignment)
		}
		end := start + t.Offset + size
		if t.Offset > uint64(len(data)) || end < start || end > uint64(len(data)) {
			return nil, fmt.Errorf("tensor %s: data [%d, %d) lies beyond the end of the file (%d bytes); file truncated?",
				t.Name, start+t.Offset, end, len(data))
		}
		t.Data = data[start+t.Offset : end : end]
	}
	return f, nil
}

// tensorBytes is the size of a tensor's data, checking its shape for overflow
// and for rows that do not fill whole quantisation blocks.
func tensorBytes(t *TensorInfo) (uint64, error) {
	bs, bb, ok := t.Type.layout()
	if !ok {
		return 0, fmt.Errorf("tensor %s: unsupported tensor type %s", t.Name, t.Type)
	}
	n := uint64(1)
	for _, d := range t.Dims {
		if d == 0 {
			return 0, fmt.Errorf("tensor %s: zero dimension in %v", t.Name, t.Dims)
		}
		if n > math.MaxInt32*uint64(1<<20)/d {
			return 0, fmt.Errorf("tensor %s: shape %v is too large", t.Name, t.Dims)
		}
		n *= d
	}
	if t.Dims[0]%uint64(bs) != 0 {
		return 0, fmt.Errorf("tensor %s: row length %d is not a multiple of the %s block size %d", t.Name, t.Dims[0], t.Type, bs)
	}
	return n / uint64(bs) * uint64(bb), nil
}

// reader decodes little-endian GGUF fields, remembering the first error.
type reader struct {
	buf []byte
	off int
	err error
}

func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)-r.off) {
		r.err = fmt.Errorf("file truncated reading %s at byte %d (need %d bytes, %d left)", what, r.off, n, len(r.buf)-r.off)
		return nil
	}
	b := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *reader) u32(what string) uint32 {
	b := r.take(4, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64(what string) uint64 {
	b := r.take(8, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) str(what string) string {
	n := r.u64("length of " + what)
	return string(r.take(n, what))
}

// value reads one metadata value of type vt; depth guards nested arrays.
func (r *reader) value(key string, vt uint32, depth int) any {
	switch vt {
	case typeUint8:
		b := r.take(1, key)
		if b == nil {
			return nil
		}
		return b[0]
	case typeInt8:
		b := r.take(1, key)
		if b == nil {
			return nil
		}
		return int8(b[0])
	case typeUint16:
		b := r.take(2, key)
		if b == nil {
			return nil
		}
		return binary.LittleEndian.Uint16(b)
	case typeInt16:
		b := r.take(2, key)
		if b == nil {
			return nil
		}
		return int16(binary.LittleEndian.Uint16(b))
	case typeUint32:
		return r.u32(key)
	case typeInt32:
		return int32(r.u32(key))
	case typeFloat32:
		return math.Float32frombits(r.u32(key))
	case typeBool:
		b := r.take(1, key)
		if b == nil {
			return nil
		}
		if b[0] > 1 {
			r.err = fmt.Errorf("metadata %s: bool value %d", key, b[0])
		}
		return b[0] == 1
	case typeString:
		return r.str(key)
	case typeUint64:
		return r.u64(key)
	case typeInt64:
		return int64(r.u64(key))
	case typeFloat64:
		return math.Float64frombits(r.u64(key))
	case typeArray:
		if depth > 0 {
			r.err = fmt.Errorf("metadata %s: nested arrays are not supported", key)
			return nil
		}
		et := r.u32("element type of " + key)
		n := r.u64("length of " + key)
		if r.err != nil {
			return nil
		}
		if n > uint64(len(r.buf)-r.off) { // every element takes at least one byte
			r.err = fmt.Errorf("metadata %s: array length %d exceeds the file size", key, n)
			return nil
		}
		return r.array(key, et, int(n))
	}
	r.err = fmt.Errorf("metadata %s: unknown value type %d", key, vt)
	return nil
}

func (r *reader) array(key string, et uint32, n int) any {
	switch et {
	case typeString:
		out := make([]string, n)
		for i := range out {
			out[i] = r.str(key)
			if r.err != nil {
				return nil
			}
		}
		return out
	case typeFloat32:
		b := r.take(uint64(n)*4, key)
		if b == nil {
			return nil
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out
	case typeInt32:
		b := r.take(uint64(n)*4, key)
		if b == nil {
			return nil
		}
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out
	case typeUint32:
		b := r.take(uint64(n)*4, key)
		if b == nil {
			return nil
		}
		out := make([]uint32, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		return out
	}
	out := make([]any, 0, min(n, 1024))
	for i := 0; i < n; i++ {
		v := r.value(key, et, 1)
		if r.err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}
