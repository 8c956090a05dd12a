package ifeval

import (
	"math"
	"math/bits"
)

// pyRandom is CPython's random.Random (MT19937 seeded by init_by_array), so
// that the langdetect port draws the same n-gram sequence as Python does for
// the same seed.
type pyRandom struct {
	mt        [624]uint32
	mti       int
	gaussNext float64
	hasGauss  bool
}

// seed is random.seed(n) for a non-negative integer below 2**32.
func (r *pyRandom) seed(n uint32) {
	mt := &r.mt
	mt[0] = 19650218
	for i := 1; i < 624; i++ {
		mt[i] = 1812433253*(mt[i-1]^(mt[i-1]>>30)) + uint32(i)
	}
	key := []uint32{n}
	i, j := 1, 0
	for k := 624; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			mt[0] = mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := 623; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			mt[0] = mt[623]
			i = 1
		}
	}
	mt[0] = 0x80000000
	r.mti = 624
	r.hasGauss = false
}

func (r *pyRandom) uint32() uint32 {
	const upper, lower = 0x80000000, 0x7fffffff
	mt := &r.mt
	if r.mti >= 624 {
		mag := [2]uint32{0, 0x9908b0df}
		var kk int
		for kk = 0; kk < 624-397; kk++ {
			y := (mt[kk] & upper) | (mt[kk+1] & lower)
			mt[kk] = mt[kk+397] ^ (y >> 1) ^ mag[y&1]
		}
		for ; kk < 623; kk++ {
			y := (mt[kk] & upper) | (mt[kk+1] & lower)
			mt[kk] = mt[kk+(397-624)] ^ (y >> 1) ^ mag[y&1]
		}
		y := (mt[623] & upper) | (mt[0] & lower)
		mt[623] = mt[396] ^ (y >> 1) ^ mag[y&1]
		r.mti = 0
	}
	y := mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// random is random.random().
func (r *pyRandom) random() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// below is random.choice's _randbelow_with_getrandbits(n), n < 2**32.
func (r *pyRandom) below(n int) int {
	k := bits.Len(uint(n))
	for {
		v := int(r.uint32() >> (32 - k))
		if v < n {
			return v
		}
	}
}

// gauss is random.gauss(0, 1).
func (r *pyRandom) gauss() float64 {
	if r.hasGauss {
		r.hasGauss = false
		return r.gaussNext
	}
	x2pi := r.random() * (2 * math.Pi) // TWOPI, multiplied once as in Python
	g2rad := math.Sqrt(-2.0 * math.Log(1.0-r.random()))
	r.gaussNext, r.hasGauss = math.Sin(x2pi)*g2rad, true
	return math.Cos(x2pi) * g2rad
}
