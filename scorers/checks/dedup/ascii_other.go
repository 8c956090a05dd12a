//go:build !amd64 || purego

package dedup

const hasAVX2 = false

func wordBlocks(raw []byte, b []uint64) uint64 { return wordBlocksGo(raw, b) }
