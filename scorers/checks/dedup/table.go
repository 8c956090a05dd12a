package dedup

import (
	"math/bits"
	"slices"
)

// multiMap maps a 64-bit hash to a list of uint64 values. It is built once
// and then only read, by many goroutines at a time. A bitset in front of the
// open-addressing table answers most lookups (corpus hashes that are not in
// the index) from a few megabytes that stay in cache; the table itself is
// touched only on a bitset hit.
type multiMap struct {
	filter bloom
	keys   []uint64 // 0 = empty slot (hash 0 is stored as 1)
	lo, hi []uint32 // vals[lo[i]:hi[i]] belong to keys[i]
	vals   []uint64
	mask   uint64
}

type kv struct{ k, v uint64 }

func fixKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

// newMultiMap builds the map from (key, value) pairs; pairs is reordered.
func newMultiMap(pairs []kv) *multiMap {
	for i := range pairs {
		pairs[i].k = fixKey(pairs[i].k)
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if a.k != b.k {
			if a.k < b.k {
				return -1
			}
			return 1
		}
		if a.v < b.v {
			return -1
		}
		if a.v > b.v {
			return 1
		}
		return 0
	})
	pairs = slices.Compact(pairs)
	distinct := 0
	for i := range pairs {
		if i == 0 || pairs[i].k != pairs[i-1].k {
			distinct++
		}
	}
	m := &multiMap{}
	m.filter = newBloomSize(distinct)
	slots := 1 << max(4, bits.Len(uint(distinct*2)))
	m.keys = make([]uint64, slots)
	m.lo = make([]uint32, slots)
	m.hi = make([]uint32, slots)
	m.mask = uint64(slots - 1)
	m.vals = make([]uint64, len(pairs))
	for i, p := range pairs {
		m.vals[i] = p.v
	}
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j].k == pairs[i].k {
			j++
		}
		k := pairs[i].k
		m.filter.add(k)
		s := k & m.mask
		for m.keys[s] != 0 {
			s = (s + 1) & m.mask
		}
		m.keys[s], m.lo[s], m.hi[s] = k, uint32(i), uint32(j)
		i = j
	}
	return m
}

// filterBits are the two bits a key sets in its filter word. Two bits in
// one 64-bit word (a blocked Bloom filter) cost one cache miss, like one
// bit, and cut false positives from about 6% to about 1.5% at 16 bits per
// key.
func filterBits(k uint64) uint64 { return 1<<(k&63) | 1<<((k>>6)&63) }

// mayHave is the cheap filter test; false means certainly absent.
func (m *multiMap) mayHave(k uint64) bool { return m.filter.mayHave(k) }

// bloom is a blocked Bloom filter of 64-bit hashes.
type bloom struct {
	words []uint64
	mask  uint64 // word index mask
}

// newBloomSize makes a filter for about distinct keys: 16 to 32 bits each.
func newBloomSize(distinct int) bloom {
	fbits := 1 << max(12, bits.Len(uint(distinct*16)))
	return bloom{words: make([]uint64, fbits/64), mask: uint64(fbits/64 - 1)}
}

// newBloom makes a filter holding keys.
func newBloom(keys []uint64) bloom {
	b := newBloomSize(len(keys))
	for _, k := range keys {
		b.add(k)
	}
	return b
}

func (b bloom) add(k uint64) {
	k = fixKey(k)
	b.words[(k>>12)&b.mask] |= filterBits(k)
}

// mayHave is false when k was certainly not added.
func (b bloom) mayHave(k uint64) bool {
	k = fixKey(k)
	f := filterBits(k)
	return b.words[(k>>12)&b.mask]&f == f
}

// get returns the values stored for k (nil when none).
func (m *multiMap) get(k uint64) []uint64 {
	k = fixKey(k)
	for s := k & m.mask; ; s = (s + 1) & m.mask {
		switch m.keys[s] {
		case k:
			return m.vals[m.lo[s]:m.hi[s]]
		case 0:
			return nil
		}
	}
}

// lookup is mayHave followed by get.
func (m *multiMap) lookup(k uint64) []uint64 {
	if m == nil || !m.mayHave(k) {
		return nil
	}
	return m.get(k)
}

// countSketch is a saturating frequency estimate (one row of a count-min
// sketch). The index uses it to choose rare anchors and rare shingles; an
// estimate that is too high only makes a choice less good, never wrong.
type countSketch []uint16

func newCountSketch(logSize int) countSketch { return make(countSketch, 1<<logSize) }

func (c countSketch) add(h uint64) {
	i := mix64(h^k2) & uint64(len(c)-1)
	if c[i] < 0xffff {
		c[i]++
	}
}

func (c countSketch) count(h uint64) int { return int(c[mix64(h^k2)&uint64(len(c)-1)]) }
