package scheduler

import "math/rand/v2"

// idGen draws allocation ids, UUID-formatted (version 4 layout), from a PCG
// seeded by Options.Seed, the evaluation and Options.IDNonce, so a replayed
// attempt names its allocations exactly as the first run did, while two
// attempts with different nonces never share an id (issue 7, defect 2).
type idGen struct{ pcg *rand.PCG }

func newIDGen(seed int64, salt, nonce uint64) idGen {
	return idGen{pcg: rand.NewPCG(uint64(seed)^nonce, salt^0x9e3779b97f4a7c15^(nonce*0xbf58476d1ce4e5b9))}
}

func (g idGen) next() string {
	const hex = "0123456789abcdef"
	var raw [16]byte
	hi, lo := g.pcg.Uint64(), g.pcg.Uint64()
	for i := range 8 {
		raw[i] = byte(hi >> (56 - 8*i))
		raw[8+i] = byte(lo >> (56 - 8*i))
	}
	raw[6] = raw[6]&0x0f | 0x40 // version 4
	raw[8] = raw[8]&0x3f | 0x80 // RFC 4122 variant
	var out [36]byte
	j := 0
	for i, b := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hex[b>>4], hex[b&0x0f]
		j += 2
	}
	return string(out[:])
}
