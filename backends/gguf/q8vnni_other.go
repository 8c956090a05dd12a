//go:build !amd64 || purego

package gguf

func q8TilesPrepare(a *qacts) bool { return false }

func q8Tiles(out []float32, w *matrix, r0, r1 int, a *qacts) int { return 0 }
