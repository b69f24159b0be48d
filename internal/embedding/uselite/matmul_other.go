//go:build !amd64 || purego

package uselite

// asmKernel is false: this build has no assembly kernel and dense layers run in plain Go.
const asmKernel = false

func kernel4x16(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int) {
	panic("uselite: no assembly kernel in this build")
}
