//go:build amd64 && !purego

package uselite

import "golang.org/x/sys/cpu"

// asmKernel reports whether kernel4x16 can run here. It is fixed at start-up.
var asmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernel4x16 sets the 4×16 block at c (row stride ldc) to the product of the 4×k block at a (row stride lda)
// and the k×16 block at w (row stride ldw). Strides count float32s. Implemented in matmul_amd64.s with AVX2 and
// FMA; the caller checks asmKernel and the bounds of every block.
//
//go:noescape
func kernel4x16(k int, a *float32, lda int, w *float32, ldw int, c *float32, ldc int)
