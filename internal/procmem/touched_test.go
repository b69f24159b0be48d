package procmem_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/contrailhq/contrail/internal/procmem"
)

// TestTouchedCountsOnlyPagesAccessedSinceCleared touches a block of memory, clears the accessed bits, and reads what
// was touched with the block left alone and then written again: only the second read counts it.
func TestTouchedCountsOnlyPagesAccessedSinceCleared(t *testing.T) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skipf("no /proc clear_refs here: %v", err)
	}
	const size = 64 << 20 // bytes; pointer-free, so the collector never reads it
	block := make([]byte, size)
	write := func(v byte) {
		for i := 0; i < len(block); i += 4096 {
			block[i] = v
		}
	}
	write(1)

	if err := procmem.ClearTouched(0); err != nil {
		t.Fatal(err)
	}
	untouched, err := procmem.Touched(0)
	if err != nil {
		t.Fatal(err)
	}
	write(2)
	touched, err := procmem.Touched(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(block)

	const blockKiB = size / 1024
	if untouched.Anon >= blockKiB {
		t.Errorf("with the block left alone since the clear: %.0f KiB anonymous touched, want less than the block's %d",
			untouched.Anon, blockKiB)
	}
	if touched.Anon-untouched.Anon < blockKiB*0.95 {
		t.Errorf("writing the block again added %.0f KiB anonymous touched, want its %d", touched.Anon-untouched.Anon, blockKiB)
	}
	if touched.File <= 0 || touched.RSS != touched.Anon+touched.File {
		t.Errorf("touched %+v: want some of the binary read (this code ran) and parts that add up", touched)
	}
}

func TestTouchedOfAProcessThatDoesNotExist(t *testing.T) {
	if _, err := procmem.Touched(1 << 30); err == nil {
		t.Error("a pid that does not exist was read")
	}
	if err := procmem.ClearTouched(1 << 30); err == nil {
		t.Error("the accessed bits of a pid that does not exist were cleared")
	}
}
