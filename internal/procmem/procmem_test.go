package procmem_test

import (
	"os"
	"testing"

	"github.com/contrailhq/contrail/internal/procmem"
)

func TestThisProcessAndByPID(t *testing.T) {
	self, err := procmem.Of(0)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if self.RSS <= 0 || self.Anon <= 0 || self.File <= 0 || self.Anon+self.File > self.RSS+1 {
		t.Errorf("this process: %+v, want parts that add up to at most the whole", self)
	}
	if byPID, err := procmem.Of(os.Getpid()); err != nil || byPID.RSS <= 0 {
		t.Errorf("by pid: %+v, %v", byPID, err)
	}
	if _, err := procmem.Of(1 << 30); err == nil {
		t.Error("a pid that does not exist was read")
	}
}
